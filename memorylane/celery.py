"""The Celery app: JSON only, late acks, one task prefetched at a time (settings ``CELERY_*``)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")

app = Celery("memorylane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
