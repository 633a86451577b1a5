"""The memory core's tests store thousands of memories inside transactions that are rolled back.
Each leaves a dead entry in the HNSW index, and nothing vacuums between tests the way autovacuum
does in a running deployment; enough dead entries near a question strand an index scan (the case
search.rescued_vector_candidates answers in production after a purge). Each test starts on
a vacuumed table, so what a test asserts of a healthy index is not decided by the tests before it
(HNSW draws each entry's level at random: whether dead entries strand a scan is chance)."""

from __future__ import annotations

import pytest
from django.db import connection

DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}


@pytest.fixture(autouse=True)
def vacuumed_memories(request) -> None:
    """Only for a test that uses the database: the pure ones may run where no test database was
    made (pytest-django sets one up only when some test asks for it)."""
    if not (DATABASE_FIXTURES & set(request.fixturenames) or request.node.get_closest_marker("django_db")):
        return
    request.getfixturevalue("django_db_setup")
    with request.getfixturevalue("django_db_blocker").unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM memory_memory")
