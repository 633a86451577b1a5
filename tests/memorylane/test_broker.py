"""The local broker (memorylane/broker.py): every message a producer sends reaches a consumer whole."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from django.conf import settings
from kombu import Connection

from memorylane.celery import app

TRANSPORT = "memorylane.broker:Transport"


def connect(folder: Path, transport: str = TRANSPORT) -> Connection:
    for sub in ("queue", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
        "polling_interval": 0.001,  # a busy consumer: lists the folder as often as it can
    }
    return Connection("filesystem://", transport=transport, transport_options=options)


def produce(folder: Path, first: int, count: int, transport: str) -> None:
    with connect(folder, transport) as connection:
        queue = connection.SimpleQueue("jobs")
        for number in range(first, first + count):
            queue.put({"number": number, "padding": "x" * 200_000})


def test_messages_sent_by_other_processes_while_a_consumer_drains_the_queue_all_arrive_whole(
    tmp_path, transport=TRANSPORT
):
    per_producer, producers = 150, 2
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=produce, args=(tmp_path, n * per_producer, per_producer, transport))
        for n in range(producers)
    ]
    received = []
    with connect(tmp_path, transport) as connection:
        queue = connection.SimpleQueue("jobs")
        for worker in workers:
            worker.start()
        while len(received) < per_producer * producers:
            message = queue.get(timeout=60)
            received.append(message.payload["number"])
            message.ack()
    for worker in workers:
        worker.join()
    assert sorted(received) == list(range(per_producer * producers))


def test_a_message_still_being_written_is_not_taken(tmp_path):
    with connect(tmp_path) as connection:
        queue = connection.SimpleQueue("partial-jobs")  # kombu keeps declared queues per process
        queue.put({"number": 1})
        (tmp_path / "queue" / "0_unfinished.partial-jobs.msg.partial").write_bytes(b'{"body": ')
        assert queue.get(timeout=5).payload == {"number": 1}
        assert queue.qsize() == 0


@pytest.mark.skipif(bool(settings.REDIS_URL), reason="a Redis broker is configured")
def test_the_default_broker_is_the_atomic_filesystem_transport():
    with app.connection_for_write() as connection:
        assert type(connection.transport).__module__ == "memorylane.broker"
