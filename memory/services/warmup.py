"""A process's start-up, done before its first request or task (issue 43): the embedding model, the
late-interaction model (and the cross-encoder when it is on), the injection and secret screens (~300
large patterns compiled, their literal prefilters built), the learned screen, the upsert's lexicons
(LemmInflect's tables) and the extraction's rules are loaded once per process. Without it a
worker's first extraction pays 1.5–4 s of loading, and the first one that compares two lessons
another ~0.4 s; a web process's first search or store pays the same, which a hook's short timeout
may not wait for.

Each web process (``memorylane/asgi.py``) and each process that runs tasks (``memory/tasks.py``)
starts it in the background as it starts (``WARM_UP``), so it serves at once; a request or task
that arrives meanwhile loads what it needs as before. A part that cannot be loaded is logged and
skipped: its first use reports the same error, as without the warm-up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from memory.conf import setting

logger = logging.getLogger(__name__)

# A lesson and its changed fact: enough for every stage to load what it reads with.
SAMPLE = "In the api repo, always run make test instead of bare pytest; the fixtures need the database."
SAMPLE_CHANGED = "In the api repo, run pytest directly; the fixtures no longer need the database."


def parts() -> dict[str, Callable[[], object]]:
    """What the warm-up loads, by name, each with the call that loads it (none touches a database)."""
    from memory import embeddings
    from memory.services.extraction import transcript_lessons
    from memory.services.injection import screen_fields
    from memory.services.redaction import redact
    from memory.services.search import late, rerank
    from memory.services.upsert import lexicon
    from memory.services.upsert.compare import compare

    loads: dict[str, Callable[[], object]] = {
        "model": lambda: embeddings.encode([SAMPLE]),
        "screens": lambda: screen_fields(content=SAMPLE, source_chunk=SAMPLE_CHANGED),
        "secret detection": lambda: redact(SAMPLE),
        "lexicons": lexicon.load,
        "upsert reading": lambda: compare(SAMPLE, SAMPLE_CHANGED),
        "extraction rules": lambda: transcript_lessons(
            [(0, "user", SAMPLE), (1, "assistant", SAMPLE_CHANGED)], "api"
        ),
    }
    if setting("LATE_RERANK_ENABLED"):
        loads["late-interaction model"] = lambda: late.question_vectors(SAMPLE)
    if setting("RERANK_ENABLED"):
        loads["cross-encoder"] = rerank.cross_encoder
    return loads


def warm_up() -> tuple[dict[str, float], dict[str, str]]:
    """Load every part (:func:`parts`): the seconds each loaded part took, and why each part that
    failed did."""
    seconds: dict[str, float] = {}
    failed: dict[str, str] = {}
    for name, load in parts().items():
        started = time.perf_counter()
        try:
            load()
        except Exception as exc:  # noqa: BLE001 - its first use reports it again, as without a warm-up
            failed[name] = f"{exc.__class__.__name__}: {exc}"
            continue
        seconds[name] = round(time.perf_counter() - started, 3)
    return seconds, failed


def warm_up_in_background(process: str) -> threading.Thread:
    """:func:`warm_up` on a thread of its own, logged as ``process``'s ("worker", "web process")."""
    thread = threading.Thread(target=_warm_up_logged, args=(process,), name="memorylane-warm-up", daemon=True)
    thread.start()
    return thread


def _warm_up_logged(process: str) -> None:
    seconds, failed = warm_up()
    loaded = ", ".join(f"{name} {value:.2f} s" for name, value in seconds.items())
    logger.info("%s warmed up in %.1f s (%s)", process, sum(seconds.values()), loaded)
    for name, reason in failed.items():
        logger.warning(
            "%s: the warm-up could not load the %s (%s); its first use will try again", process, name, reason
        )
