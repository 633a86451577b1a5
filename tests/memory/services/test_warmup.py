"""A worker process's warm-up (``memory/services/warmup.py``): what it loads, and the switch."""

from __future__ import annotations

import pytest

from memory import embeddings
from memory.services import warmup
from memory.services.injection import _compiled, _prefilter
from memory.services.redaction import _own_prefilter
from memory.tasks import _warm_up_at_start

pytestmark = pytest.mark.usefixtures("embedder")


def test_the_warm_up_loads_the_model_the_screens_and_the_lexicons_without_the_database():
    seconds = warmup.warm_up()  # no django_db mark: a query would fail the test
    assert set(seconds) == {
        "model",
        "screens",
        "secret detection",
        "lexicons",
        "upsert reading",
        "extraction rules",
    }
    assert embeddings.is_loaded()
    assert _compiled.cache_info().currsize == _prefilter.cache_info().currsize == 1
    assert _own_prefilter.cache_info().currsize == 1
    from lemminflect.core.Inflections import Inflections

    assert hasattr(Inflections(), "infl_dict")  # the lexicon's table is read


def test_a_worker_process_warms_up_in_the_background_unless_switched_off(settings, monkeypatch):
    started = []
    monkeypatch.setattr(warmup, "warm_up_in_background", lambda: started.append(True))
    _warm_up_at_start()
    assert started == [True]
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "WORKER_WARM_UP": False}
    _warm_up_at_start()
    assert started == [True]


def test_a_failed_warm_up_is_logged_and_raises_nothing(monkeypatch, caplog):
    def broken():
        raise OSError("the model's file is gone")

    monkeypatch.setattr(warmup, "warm_up", broken)
    warmup.warm_up_in_background().join(timeout=30)
    assert "the worker's warm-up failed" in caplog.text
