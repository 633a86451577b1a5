"""ASGI entry point: ``uvicorn memorylane.asgi:application``."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")

application = get_asgi_application()
