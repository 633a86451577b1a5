"""Extraction quotes each turn of a transcript after its speaker in parentheses, on a line of its own
(stop 63, ``memory/services/extraction/candidates.py``: ``quoted``). Source chunks stored before named
the speaker as ``role: text``, which the injection screen reads as an order addressed to an agent
("assistant: Run the migration…"): a ``manage.py rescan`` would quarantine those lessons for the
server's own words. This relabels them. A chunk does not say where a turn ends, so a line inside a
turn that itself began "user: " is relabelled too."""

import re

from django.db import migrations

LABELS = "user|assistant|system|tool|outcome|summary|evaluation"
LABEL = re.compile(rf"^({LABELS}): ", re.MULTILINE)
BATCH = 500


def requote(chunk: str) -> str:
    """``role: text`` lines as ``(role)`` then the text on the next line (pure)."""
    return LABEL.sub(lambda match: f"({match[1]})\n", chunk)


def relabel(apps, schema_editor) -> None:
    Memory = apps.get_model("memory", "Memory")
    old = Memory.objects.filter(source="extraction", source_chunk__regex=rf"(^|\n)({LABELS}): ")
    batch = []
    for memory in old.only("pk", "source_chunk").iterator(chunk_size=BATCH):
        memory.source_chunk = requote(memory.source_chunk)
        batch.append(memory)
        if len(batch) == BATCH:
            Memory.objects.bulk_update(batch, ["source_chunk"])
            batch = []
    Memory.objects.bulk_update(batch, ["source_chunk"])


class Migration(migrations.Migration):
    dependencies = [("memory", "0017_token_vectors_key")]

    operations = [migrations.RunPython(relabel, migrations.RunPython.noop)]
