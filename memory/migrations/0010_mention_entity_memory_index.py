"""Index an entity's mentions with their memories, in place of the entity alone.

A search filtered to an entity (a project, a person) hashes that entity's memory ids. From an index
on ``entity_id`` alone every one of those mentions was fetched from the table, scattered over
thousands of pages at 100,000 memories; ``(entity_id, memory_id)`` serves them from the index alone
(bench/HISTORY.md, stop 38). The new index is built before the old one is dropped, so lookups by
entity always have one.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_memory_fillfactor")]

    operations = [
        migrations.AddIndex(
            model_name="entitymention",
            index=models.Index(fields=["entity", "memory"], name="mention_entity_memory"),
        ),
        migrations.AlterField(
            model_name="entitymention",
            name="entity",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="mentions",
                to="memory.entity",
            ),
        ),
    ]
