"""The second wall (DESIGN.md §11): PostgreSQL row-level security on the team-owned tables.

The application acts for a team as the role ``memorylane_app`` with ``memorylane.team_id`` set
(memory.services.teams.enter_team): that role sees and writes only rows whose ``team_id`` is the
setting, whatever a query forgets. The policy is not FORCEd, so the tables' owner — the account that
runs migrations, ``manage.py`` commands and the scheduled jobs over every team — is not subject to
it; those run with an explicit ``--team`` or over each team in turn. A database account that may not
create roles gets no policies (a notice says so): the wall in the code still holds alone.
"""

from django.db import migrations

ROLE = "memorylane_app"
TABLES = (
    "memory_memory",
    "memory_entity",
    "memory_entitymention",
    "memory_session",
    "memory_sessionmessage",
    "memory_recall",
    "memory_feedbackevent",
    "memory_memoryevent",
    "memory_factchange",
    "memory_deniedaccess",
)
POLICY = "team_wall"
CONDITION = "team_id = current_setting('memorylane.team_id')::bigint"


def _policy_statements(table: str) -> str:
    condition = CONDITION.replace("'", "''")  # inside EXECUTE '…'
    return (
        f"    EXECUTE 'ALTER TABLE {table} ENABLE ROW LEVEL SECURITY';\n"
        f"    EXECUTE 'DROP POLICY IF EXISTS {POLICY} ON {table}';\n"
        f"    EXECUTE 'CREATE POLICY {POLICY} ON {table} TO {ROLE} USING ({condition}) WITH CHECK ({condition})';\n"
    )


FORWARD = (
    f"""
DO $wall$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}') THEN
        CREATE ROLE {ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    END IF;
    IF NOT pg_has_role(current_user, '{ROLE}', 'MEMBER') THEN
        EXECUTE format('GRANT {ROLE} TO %I', current_user);
    END IF;
    EXECUTE 'GRANT USAGE ON SCHEMA public TO {ROLE}';
    EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {ROLE}';
    EXECUTE 'GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {ROLE}';
    EXECUTE 'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {ROLE}';
    EXECUTE 'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {ROLE}';
"""
    + "".join(_policy_statements(table) for table in TABLES)
    + f"""EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'Memory Lane: this database account may not create the role {ROLE}; row-level security is off (the code still scopes every query by team).';
END
$wall$;
"""
)

BACKWARD = " ".join(
    f"DROP POLICY IF EXISTS {POLICY} ON {table}; ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;"
    for table in TABLES
)


class Migration(migrations.Migration):
    dependencies = [("memory", "0013_teams_required")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
