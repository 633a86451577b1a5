"""A web process started as `make run` starts it loads its models, screens and lexicons in the
background as it starts (``memory/services/warmup.py``), and serves meanwhile."""

from __future__ import annotations

import pytest

from tests.integrations.conftest import api, uvicorn_server
from tests.workers import wait_for

pytestmark = pytest.mark.slow


def test_a_web_process_warms_up_as_it_starts_and_answers_meanwhile(test_database_url, tmp_path, tokens):
    log = tmp_path / "uvicorn.log"
    with uvicorn_server(test_database_url, log, lifespan="off") as base:
        assert api(base, tokens["member"], "GET", "/observations")[0] == 200
        warmed = wait_for(
            lambda: [line for line in log.read_text().splitlines() if "web process warmed up in" in line],
            what="the web process's warm-up",
            log=log,
        )
        assert all(part in warmed[0] for part in ("model", "late-interaction model", "screens", "lexicons"))
        status, found = api(base, tokens["member"], "GET", "/search", query="?q=deploys")
        assert status == 200 and found["results"] == []
    assert "could not load" not in log.read_text()
