"""Token vectors for search's late-interaction stage (memory/services/search/late.py), behind the
same row-level wall as the other team-owned tables (0014)."""

import django.db.models.deletion
from django.db import migrations, models

ROLE = "memorylane_app"
CONDITION = "team_id = current_setting(''memorylane.team_id'')::bigint"
FORWARD = f"""
DO $wall$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}') THEN
        EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON memory_tokenvectors TO {ROLE}';
        EXECUTE 'ALTER TABLE memory_tokenvectors ENABLE ROW LEVEL SECURITY';
        EXECUTE 'CREATE POLICY team_wall ON memory_tokenvectors TO {ROLE} USING ({CONDITION}) WITH CHECK ({CONDITION})';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'Memory Lane: row-level security is off for memory_tokenvectors (the code still scopes every query by team).';
END
$wall$;
"""
BACKWARD = "DROP POLICY IF EXISTS team_wall ON memory_tokenvectors"


class Migration(migrations.Migration):
    dependencies = [("memory", "0015_proposals")]

    operations = [
        migrations.CreateModel(
            name="TokenVectors",
            fields=[
                (
                    "memory",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="memory.memory",
                    ),
                ),
                ("source_hash", models.CharField(max_length=64)),
                ("vectors", models.BinaryField()),
                (
                    "team",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memory.team",
                    ),
                ),
            ],
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
