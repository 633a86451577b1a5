"""MkDocs hooks (mkdocs.yml ``hooks:``): the generated configuration reference, and repository files
shown as pages. Excluded from the site itself (``exclude_docs``)."""

from __future__ import annotations

import logging
import posixpath
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs run from a checkout that is not pip-installed
    sys.path.insert(0, str(ROOT))

from memorylane import configuration_reference  # noqa: E402

# Under the "mkdocs" logger, so that `mkdocs build --strict` fails on these warnings.
log = logging.getLogger("mkdocs.hooks.memorylane")

MARKER = "<!-- generated: configuration reference -->"
# Repository files outside docs/ published as pages: path in the repository → path in the site.
MOUNTED = {"bench/HISTORY.md": "benchmarks/history.md"}


def on_files(files, config):
    for source, page in MOUNTED.items():
        files.append(File.generated(config, page, abs_src_path=str(ROOT / source)))
    return files


def on_page_markdown(markdown, page, config, files):
    if MARKER in markdown:
        for problem in configuration_reference.problems():
            log.warning(problem)
        markdown = markdown.replace(MARKER, configuration_reference.render())
    # A link written for the repository (docs/benchmarks.md → ../bench/HISTORY.md) goes to the page.
    here = posixpath.dirname(page.file.src_uri)
    for source, target in MOUNTED.items():
        in_repository = posixpath.relpath(source, posixpath.join("docs", here))
        markdown = markdown.replace(f"]({in_repository}", f"]({posixpath.relpath(target, here or '.')}")
    return markdown
