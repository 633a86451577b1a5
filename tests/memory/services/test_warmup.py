"""A process's warm-up (``memory/services/warmup.py``): what it loads, a part that fails, the switch."""

from __future__ import annotations

import pytest

from memory import embeddings
from memory.services import warmup
from memory.services.injection import _compiled, _prefilter
from memory.services.redaction import _own_prefilter
from memory.services.search import late
from memory.tasks import _warm_up_at_start

pytestmark = pytest.mark.usefixtures("embedder")


def test_the_warm_up_loads_the_models_the_screens_and_the_lexicons_without_the_database():
    seconds, failed = warmup.warm_up()  # no django_db mark: a query would fail the test
    assert failed == {}
    assert set(seconds) == {
        "model",
        "screens",
        "secret detection",
        "lexicons",
        "upsert reading",
        "extraction rules",
        "late-interaction model",
    }
    assert embeddings.is_loaded() and late._loaded._model is not None
    assert _compiled.cache_info().currsize == _prefilter.cache_info().currsize == 1
    assert _own_prefilter.cache_info().currsize == 1
    from lemminflect.core.Inflections import Inflections

    assert hasattr(Inflections(), "infl_dict")  # the lexicon's table is read


def test_a_part_that_cannot_load_is_reported_and_the_others_still_load(settings, caplog):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_MODEL": "/nonexistent/late-model"}
    late.forget_model()
    try:
        warmup.warm_up_in_background("web process").join(timeout=60)
    finally:
        late.forget_model()
    assert "web process warmed up in" in caplog.text and "lexicons" in caplog.text
    assert "could not load the late-interaction model" in caplog.text


def test_a_worker_process_warms_up_in_the_background_unless_switched_off(settings, monkeypatch):
    started = []
    monkeypatch.setattr(warmup, "warm_up_in_background", started.append)
    _warm_up_at_start()
    assert started == ["worker"]
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "WARM_UP": False}
    _warm_up_at_start()
    assert started == ["worker"]
