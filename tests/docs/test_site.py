"""The docs site builds strictly, the API page maps every route, and the README stays short."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from django.urls import URLPattern

from api.urls import urlpatterns
from tests.workers import ROOT


def test_the_site_builds_strictly(tmp_path):
    """Broken links and anchors, a page left out of the nav, an undescribed setting: each fails it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    page = (tmp_path / "site" / "configuration" / "index.html").read_text()
    assert "RANKING_EXPONENTS" in page and "MEMORYLANE_CONFIG" in page  # generated, not the marker
    assert (tmp_path / "site" / "benchmarks" / "history" / "index.html").exists()  # bench/HISTORY.md
    # Nothing fetched from elsewhere when a page is read: no web fonts.
    assert "fonts.googleapis.com" not in (tmp_path / "site" / "index.html").read_text()


def test_the_api_page_names_every_route():
    text = (ROOT / "docs" / "api.md").read_text()
    routes = [
        str(p.pattern) for p in urlpatterns if isinstance(p, URLPattern) and str(p.pattern).startswith("v1/")
    ]
    paths = [re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route.removeprefix("v1")) for route in routes]
    missing = [path for path in paths if f"`{path}`" not in text]
    assert not missing, f"docs/api.md does not name {missing}"


def test_the_readme_fits_in_250_lines():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move the detail to docs/"
