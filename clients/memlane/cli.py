"""Entry point of the ``memlane`` console script (issue 7 builds it out)."""

import sys


def main(argv: list[str] | None = None) -> int:
    print("memlane: not built yet", file=sys.stderr)
    return 0
