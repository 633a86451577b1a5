"""The token vectors' key to their memory (0016) checked when a row is written.

Django creates its foreign keys deferred, checked at commit, and creates 0016's at the end of that
migration, hence this one.
"""

from django.db import migrations

# Its key to the memory is checked when the row is written, not when the transaction commits (Django
# defers its foreign keys): a search keeps vectors in a savepoint of its own, and a memory deleted
# meanwhile must fail there, not the caller's commit later.
IMMEDIATE_KEY = """
DO $key$
DECLARE name text;
BEGIN
    SELECT conname INTO name FROM pg_constraint
    WHERE conrelid = 'memory_tokenvectors'::regclass AND confrelid = 'memory_memory'::regclass AND contype = 'f';
    EXECUTE format('ALTER TABLE memory_tokenvectors ALTER CONSTRAINT %I NOT DEFERRABLE', name);
END
$key$;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0016_token_vectors")]

    operations = [migrations.RunSQL(IMMEDIATE_KEY, migrations.RunSQL.noop)]
