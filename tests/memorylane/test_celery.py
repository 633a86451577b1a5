from __future__ import annotations

import socket
import uuid

import pytest
from celery import Celery

from memory.models import Memory
from memory.tasks import ping
from memorylane.celery import app
from tests.workers import celery_worker

pytestmark = pytest.mark.slow


def redis_answers() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def test_the_celery_app_is_configured_for_safe_delivery():
    assert app.conf.task_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    tasks = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert tasks == {
        "memory.tasks.reflect_task",
        "memory.tasks.decay_task",
        "memory.tasks.extraction_sweep_task",
        "memory.tasks.team_indexes_task",
        "memory.tasks.token_vectors_task",
    }


@pytest.mark.django_db(transaction=True)
def test_a_task_sent_through_the_filesystem_broker_runs_in_a_real_worker(test_database_url, team, tmp_path):
    assert app.conf.broker_url.startswith("filesystem://")
    Memory.objects.create(team=team, content="A row the worker can see", content_hash="w1")
    with celery_worker(env={"DATABASE_URL": test_database_url}, log_path=tmp_path / "worker.log"):
        result = ping.delay()
        try:
            assert result.get(timeout=90) == {"pong": True, "memories": 1}
        except Exception:
            print((tmp_path / "worker.log").read_text())
            raise


@pytest.mark.skipif(
    not redis_answers(), reason="no Redis on 127.0.0.1:6379 (the embedded default needs none)"
)
@pytest.mark.django_db(transaction=True)
def test_a_task_sent_through_redis_runs_in_a_real_worker(test_database_url, tmp_path):
    redis_url = "redis://127.0.0.1:6379/15"
    queue = f"memorylane-test-{uuid.uuid4().hex}"
    # Not the current app: shared tasks (extraction queued by /end) must keep using the project's app.
    client = Celery("memorylane-test", broker=redis_url, backend=redis_url, set_as_current=False)
    client.conf.task_serializer = "json"
    with celery_worker(
        env={"DATABASE_URL": test_database_url, "REDIS_URL": redis_url},
        queues=queue,
        log_path=tmp_path / "worker.log",
    ):
        result = client.send_task("memory.tasks.ping", queue=queue)
        try:
            assert result.get(timeout=90) == {"pong": True, "memories": 0}
        except Exception:
            print((tmp_path / "worker.log").read_text())
            raise
