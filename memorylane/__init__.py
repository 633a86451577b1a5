"""The Memory Lane Django project."""

from memorylane.celery import app as celery_app

__all__ = ["celery_app"]
