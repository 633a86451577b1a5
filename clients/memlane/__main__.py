"""``python -m memlane`` / ``python -m clients.memlane`` (how the detached uploader is started)."""

import sys

from .cli import main

sys.exit(main())
