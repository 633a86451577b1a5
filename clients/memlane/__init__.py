"""The ``memlane`` command-line client. Standard library only, so it starts fast; it never imports
Django: it talks to the server over HTTP."""

__version__ = "0.1.0"

# How this package runs itself (``python -m <MODULE>``): "memlane" when installed on its own,
# "clients.memlane" inside the server's repository.
MODULE = __name__
