from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from memory.services.injection.learned import MODEL_FILE, learned_screen
from memory.services.injection.learned_build import build
from memory.services.intent_training import dev_examples


class Command(BaseCommand):
    help = (
        "Build the learned injection screen from the labeled dev texts in bench/data (never the frozen "
        "test splits): cross-validate a classifier of character n-grams, choose its threshold, and write "
        "memory/data/injection_ngrams.json (or --output)."
    )

    def add_arguments(self, parser) -> None:
        default_data = Path(settings.BASE_DIR) / "bench" / "data"
        parser.add_argument("--data", type=Path, default=default_data, help="the labeled dev data directory")
        parser.add_argument("--output", type=Path, default=MODEL_FILE)

    def handle(self, *args, data: Path, output: Path, **options) -> None:
        content = build(dev_examples(data, english_only=False, turns=True))
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(content, ensure_ascii=False, separators=(",", ":")) + "\n")
        learned_screen.cache_clear()
        chosen = content["cross_validation"]["chosen"]
        self.stdout.write(
            f"{content['trained_on']['payloads']} payloads, {content['trained_on']['negatives']} legitimate texts, "
            f"{len(content['pieces'])} pieces. Cross-validated on dev ({content['cross_validation']['folds']} folds): "
            f"C {chosen['C']}, threshold {chosen['threshold']}: payloads held {chosen['payloads_held']:.1%}, benign "
            f"injection-corpus texts held {chosen['benign_held']:.1%}, all legitimate texts held "
            f"{chosen['negatives_held']:.1%}. Wrote {output}."
        )
