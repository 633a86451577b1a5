from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from memory import embeddings
from memory.services.intent import MODEL_FILE, intent_model
from memory.services.intent_training import build, dev_examples


class Command(BaseCommand):
    help = (
        "Build the screen of intent from the labeled dev texts in bench/data (never the frozen test "
        "splits): embed them, cross-validate a logistic regression, choose its threshold, and write "
        "memory/data/intent_screen.json (or --output)."
    )

    def add_arguments(self, parser) -> None:
        default_data = Path(settings.BASE_DIR) / "bench" / "data"
        parser.add_argument("--data", type=Path, default=default_data, help="the labeled dev data directory")
        parser.add_argument("--output", type=Path, default=MODEL_FILE)

    def handle(self, *args, data: Path, output: Path, **options) -> None:
        examples = dev_examples(data)
        vectors = embeddings.encode(examples.texts)
        content = build(vectors, examples, Path(embeddings.model_location()).name)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(content, indent=1) + "\n")
        intent_model.cache_clear()
        chosen = content["cross_validation"]["chosen"]
        self.stdout.write(
            f"{content['trained_on']['payloads']} payloads, {content['trained_on']['negatives']} legitimate texts. "
            f"Cross-validated on dev ({content['cross_validation']['folds']} folds): C {chosen['C']}, threshold "
            f"{chosen['threshold']}: payloads held {chosen['payloads_held']:.1%}, benign injection-corpus texts "
            f"held {chosen['benign_held']:.1%}, all legitimate texts held {chosen['negatives_held']:.1%}. "
            f"Wrote {output}."
        )
