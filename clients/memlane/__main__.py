"""``python -m clients.memlane`` (how the detached uploader is started)."""

import sys

from clients.memlane.cli import main

sys.exit(main())
