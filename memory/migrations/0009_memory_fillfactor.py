"""Leave a tenth of every memory page free, so that counting a retrieval updates the row in place.

Every search updates its results' ``retrieval_count`` and ``last_retrieved_at``. Neither column is
indexed, so PostgreSQL can write the new row version on the same page without touching the
indexes (a HOT update), but only when the page has room. With full pages each of those updates
inserted into all of the table's indexes, the HNSW graph included (README "Capacity"). Pages
written before this migration fill up as they are; a row moved off one lands on a page with room.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_extraction_lease")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_memory SET (fillfactor = 90)",
            reverse_sql="ALTER TABLE memory_memory RESET (fillfactor)",
        ),
    ]
