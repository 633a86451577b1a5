"""A worker's start-up, done before its first task (issue 43): the embedding model, the injection
and secret screens (~300 large patterns compiled, their literal prefilters built), the learned
screen, the upsert's lexicons (LemmInflect's tables) and the extraction's rules are loaded once per
process. Without it the first extraction a worker runs pays 1.5–4 s of loading, and the first one
that compares two lessons another ~0.4 s.

The worker starts it in the background as its pool process starts (``memory/tasks.py``), so the
worker takes tasks at once; a task that arrives meanwhile loads what it needs as before.
"""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger(__name__)

# A lesson and its changed fact: enough for every stage to load what it reads with.
SAMPLE = "In the api repo, always run make test instead of bare pytest; the fixtures need the database."
SAMPLE_CHANGED = "In the api repo, run pytest directly; the fixtures no longer need the database."


def warm_up() -> dict[str, float]:
    """Load what extraction and the store otherwise load at their first use; the seconds each part
    took. Touches no database."""
    from memory import embeddings
    from memory.services.extraction import transcript_lessons
    from memory.services.injection import screen_fields
    from memory.services.redaction import redact
    from memory.services.upsert import lexicon
    from memory.services.upsert.compare import compare

    steps = {
        "model": lambda: embeddings.encode([SAMPLE]),
        "screens": lambda: screen_fields(content=SAMPLE, source_chunk=SAMPLE_CHANGED),
        "secret detection": lambda: redact(SAMPLE),
        "lexicons": lexicon.load,
        "upsert reading": lambda: compare(SAMPLE, SAMPLE_CHANGED),
        "extraction rules": lambda: transcript_lessons(
            [(0, "user", SAMPLE), (1, "assistant", SAMPLE_CHANGED)], "api"
        ),
    }
    seconds: dict[str, float] = {}
    for name, step in steps.items():
        started = time.perf_counter()
        step()
        seconds[name] = round(time.perf_counter() - started, 3)
    return seconds


def warm_up_in_background() -> threading.Thread:
    """:func:`warm_up` on a thread of its own, logged; its failure is logged and costs nothing else."""
    thread = threading.Thread(target=_warm_up_logged, name="memorylane-warm-up", daemon=True)
    thread.start()
    return thread


def _warm_up_logged() -> None:
    try:
        seconds = warm_up()
    except Exception:  # noqa: BLE001 - the first task loads what it needs and reports its own errors
        logger.exception("the worker's warm-up failed; its first task will load what it needs")
        return
    parts = ", ".join(f"{name} {value:.2f} s" for name, value in seconds.items())
    logger.info("worker warmed up in %.1f s (%s)", sum(seconds.values()), parts)
