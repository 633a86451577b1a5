"""A text progress bar for management commands (drawn only on a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Callable

WIDTH = 30


def progress_bar(command, label: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """``(progress(done, total), close())`` drawing ``label [####....] done/total`` on stderr."""
    stream = sys.stderr
    drawn = [False]

    def progress(done: int, total: int) -> None:
        if not stream.isatty():
            return
        filled = WIDTH * done // max(total, 1)
        stream.write(f"\r{label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total}")
        stream.flush()
        drawn[0] = True

    def close() -> None:
        if drawn[0]:
            stream.write("\n")

    return progress, close
