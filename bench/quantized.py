"""An int8 copy of the embedder, measured before adoption: ``python -m bench.quantized [DATASET…]``.

Quantizes the exported ONNX model's weights to int8 with onnxruntime's dynamic quantization (signed,
per channel: of four variants tried, it and unsigned per-channel stayed closest to the float model,
and it was faster), then reports against the float model: the
time of one query (p50 over the queries of ``bench/data/memorylane.jsonl``) and of 1,000 memories
batched, how close the vectors stay (cosine), how often a query's ten nearest memories change, and
``bench.retrieval`` on each DATASET (default: both coding sets) with the copy in the model's place.
The product has no setting for the copy: it was measured and not adopted (README "Benchmarks").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench.embedding import speed, texts_and_queries

DATA = Path(__file__).resolve().parent / "data"


def quantized_copy(exported: Path) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = exported.with_name(f"{exported.stem}-int8.onnx")
    if not target.exists():
        quantize_dynamic(
            str(exported),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quantized", description=__doc__.splitlines()[0])
    parser.add_argument(
        "datasets", nargs="*", type=Path, default=[DATA / "memorylane.jsonl", DATA / "coding_set_2.jsonl"]
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    import logging

    import numpy as np

    from memory import embeddings

    logging.getLogger().setLevel(logging.ERROR)  # the quantizer logs every tensor it skips
    location = embeddings.model_location()
    exported = embeddings.exported_path(location)
    if not exported.exists():
        embeddings.export_onnx(location, exported)
    copy = quantized_copy(exported)
    float_model = embeddings.OnnxEncoder(location, exported)
    int8_model = embeddings.OnnxEncoder(location, copy)

    corpus, questions = texts_and_queries(1000)
    distinct = sorted(set(corpus))
    batch = embeddings.setting("EMBEDDING_BATCH_SIZE")
    report = {
        name: speed(model, corpus, questions, batch)[0]
        for name, model in (("float", float_model), ("int8", int8_model))
    }
    reference = (float_model.encode(distinct, 64), float_model.encode(questions, 64))
    vectors = (int8_model.encode(distinct, 64), int8_model.encode(questions, 64))
    cosines = np.concatenate([(a * b).sum(axis=1) for a, b in zip(reference, vectors, strict=True)])
    nearest = [np.argsort(-(q @ m.T), axis=1)[:, :10] for m, q in (reference, vectors)]
    report["cosine_min"] = round(float(cosines.min()), 4)
    report["cosine_mean"] = round(float(cosines.mean()), 4)
    report["top10_overlap"] = round(
        float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(*nearest, strict=True)])), 3
    )
    report["top1_same"] = round(float(np.mean(nearest[0][:, 0] == nearest[1][:, 0])), 3)
    print(json.dumps(report))

    from bench import retrieval

    for dataset in args.datasets:
        for name, path in (("float", exported), ("int8", copy)):
            print(f"\n{dataset.name}, {name} model", flush=True)
            embeddings._model = None  # the next search loads the model from ``path``
            embeddings.exported_path = lambda _location, path=path: path
            retrieval.main([str(dataset), "--modes", "vector,full"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
