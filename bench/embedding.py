"""The two embedding backends side by side: ``python -m bench.embedding [--texts N] [--queries N]``.

Both load the configured model (``memory/embeddings.py``): ``torch`` (sentence-transformers) and
``onnx`` (the same model exported once, run by onnxruntime). For each: the load time (after the
one-time export), texts per second batched (EMBEDDING_BATCH_SIZE) over the memories of
``bench/data/memorylane.jsonl`` repeated to ``--texts``, one query at a time (p50/p95 ms over its
queries), and the process's peak memory; then the smallest cosine between the two backends' vectors
of the same text. One line of JSON at the end. Each backend runs in its own process, so one's
imports and memory do not count against the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.stats import percentile

DATA = Path(__file__).resolve().parent / "data" / "memorylane.jsonl"


def texts_and_queries(count: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    memories = [row["memory"]["content"] for row in rows if "memory" in row]
    queries = [row["query"]["text"] for row in rows if "query" in row]
    return (memories * (count // len(memories) + 1))[:count], queries


def speed(model, corpus: list[str], questions: list[str], batch: int) -> tuple[dict, object]:
    """How fast ``model`` (an encoder of ``memory/embeddings.py``) embeds: ``corpus`` batched (after a
    warm-up batch) and each of ``questions`` alone; the figures and the corpus's vectors."""
    model.encode(corpus[:batch], batch)  # warm
    started = time.perf_counter()
    vectors = model.encode(corpus, batch)
    batched = time.perf_counter() - started
    single = []
    for question in questions:
        started = time.perf_counter()
        model.encode([question], batch)
        single.append(1000 * (time.perf_counter() - started))
    figures = {
        "texts_per_s": round(len(corpus) / batched, 1),
        "batch_of_1000_s": round(1000 * batched / len(corpus), 2),
        "query_p50_ms": round(percentile(single, 50), 1),
        "query_p95_ms": round(percentile(single, 95), 1),
    }
    return figures, vectors


def peak_rss_mb() -> int:
    """This process's peak resident set since it started its program. Not ``getrusage``'s
    ``ru_maxrss``: Linux carries that across ``exec``, so a child would report its parent's peak
    (the parent exports the ONNX model with torch on a first run)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def run_backend(backend: str, texts: int, queries: int, vectors_out: Path) -> dict:
    """In this process: load ``backend``, time it, save its vectors of the first texts."""
    import django
    import numpy as np

    django.setup()
    from django.conf import settings

    from memory import embeddings

    settings.MEMORY_LANE["EMBEDDING_BACKEND"] = backend
    started = time.perf_counter()
    model = embeddings.get_model()
    load = time.perf_counter() - started
    corpus, questions = texts_and_queries(texts)
    figures, vectors = speed(model, corpus, questions[:queries], embeddings.setting("EMBEDDING_BATCH_SIZE"))
    np.save(vectors_out, vectors[:200])
    return {
        "backend": model.backend,
        "load_s": round(load, 2),
        **figures,
        "peak_rss_mb": peak_rss_mb(),
        "torch_imported": "torch" in sys.modules,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedding", description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=161)
    parser.add_argument("--backend", choices=["torch", "onnx"], help=argparse.SUPPRESS)  # one child
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.texts < 1 or args.queries < 1:
        parser.error("--texts and --queries must be positive")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    if args.backend:
        print(json.dumps(run_backend(args.backend, args.texts, args.queries, args.vectors)))
        return 0

    import tempfile

    import django
    import numpy as np

    django.setup()
    from memory import embeddings

    location = embeddings.model_location()
    if not embeddings.onnx_servable(location) and not embeddings.exported_path(location).exists():
        embeddings.export_onnx(location, embeddings.exported_path(location))  # once per model, untimed
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for backend in ("torch", "onnx"):
            out = Path(folder) / f"{backend}.npy"
            child = subprocess.run(
                [sys.executable, "-m", "bench.embedding", "--backend", backend, "--vectors", str(out),
                 "--texts", str(args.texts), "--queries", str(args.queries)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if child.returncode:
                print(child.stderr[-3000:], file=sys.stderr)
                return child.returncode
            results[backend] = json.loads(child.stdout.strip().splitlines()[-1])
            results[backend]["vectors"] = np.load(out)
    cosine = float(np.min(np.sum(results["torch"].pop("vectors") * results["onnx"].pop("vectors"), axis=1)))
    print(
        f"{'backend':8} {'load s':>7} {'texts/s':>8} {'1,000 s':>8} {'query p50':>10} {'p95 ms':>7} {'RSS MB':>7}"
    )
    for name, row in results.items():
        print(
            f"{name:8} {row['load_s']:7.2f} {row['texts_per_s']:8.1f} {row['batch_of_1000_s']:8.2f} "
            f"{row['query_p50_ms']:10.1f} {row['query_p95_ms']:7.1f} {row['peak_rss_mb']:7d}"
        )
    print(f"smallest cosine between the backends' vectors of the same text: {cosine:.7f}")
    print(json.dumps({**results, "min_cosine": round(cosine, 7)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
