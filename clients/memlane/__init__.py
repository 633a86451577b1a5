"""The ``memlane`` command-line client. Standard library only, so it starts fast."""
