"""How DATABASE_URL and the DATABASE_* variables become Django's DATABASES entry."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from memorylane.settings import parse_database_url

URL = "postgresql://app:secret@db.example:5433/memories"


def test_kept_connections_prepare_repeated_statements_planned_for_their_own_values(monkeypatch):
    monkeypatch.delenv("DATABASE_PREPARE_THRESHOLD", raising=False)
    options = parse_database_url(URL)["OPTIONS"]
    assert options["server_side_binding"] is True
    assert options["prepare_threshold"] == 5
    assert options["options"] == "-c plan_cache_mode=force_custom_plan"


def test_the_url_s_own_server_options_are_kept(monkeypatch):
    monkeypatch.setenv("DATABASE_PREPARE_THRESHOLD", "3")
    database = parse_database_url(URL + "?options=-c%20statement_timeout%3D5000&sslmode=require")
    assert database["OPTIONS"]["options"] == "-c statement_timeout=5000 -c plan_cache_mode=force_custom_plan"
    assert database["OPTIONS"]["sslmode"] == "require"
    assert database["OPTIONS"]["prepare_threshold"] == 3
    assert (database["HOST"], database["PORT"], database["NAME"]) == ("db.example", "5433", "memories")


def test_a_threshold_of_zero_binds_on_the_client_and_prepares_nothing(monkeypatch):
    """For a pooler in transaction mode (pgbouncer), which cannot keep prepared statements."""
    monkeypatch.setenv("DATABASE_PREPARE_THRESHOLD", "0")
    options = parse_database_url(URL)["OPTIONS"]
    assert not {"server_side_binding", "prepare_threshold", "options"} & set(options)


@pytest.mark.parametrize("value", ["-1", "often"])
def test_a_threshold_that_is_not_a_count_is_refused(monkeypatch, value):
    monkeypatch.setenv("DATABASE_PREPARE_THRESHOLD", value)
    with pytest.raises(ImproperlyConfigured, match="DATABASE_PREPARE_THRESHOLD"):
        parse_database_url(URL)
