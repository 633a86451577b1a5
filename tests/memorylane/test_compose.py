"""Docker cannot run here: check that the compose file parses and agrees with the settings."""

from __future__ import annotations

import re

import yaml

from tests.workers import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def settings_variables() -> set[str]:
    """Every environment variable the project's settings, database bootstrap and runner read."""
    source = "".join(
        (ROOT / "memorylane" / name).read_text() for name in ("settings.py", "embedded.py", "runner.py")
    )
    found = re.findall(
        r"""(?:envbool|envint|environ\.get|environ\.setdefault)\(\s*["']([A-Z_]+)["']""", source
    )
    return set(found) - {"DJANGO_SETTINGS_MODULE"}  # Django's own, not configuration


def test_compose_runs_the_production_services():
    assert set(COMPOSE["services"]) >= {"postgres", "redis", "web", "worker", "beat"}
    assert "pgvector" in COMPOSE["services"]["postgres"]["image"]
    assert "memorylane.asgi:application" in COMPOSE["services"]["web"]["command"]
    assert COMPOSE["services"]["worker"]["command"][:4] == ["celery", "-A", "memorylane", "worker"]
    assert COMPOSE["services"]["beat"]["command"][:4] == ["celery", "-A", "memorylane", "beat"]


def test_every_app_service_gets_the_same_environment_and_settings_read_it():
    known = settings_variables()
    environments = [COMPOSE["services"][name]["environment"] for name in ("web", "worker", "beat", "migrate")]
    assert all(env == environments[0] for env in environments)
    assert set(environments[0]) <= known, set(environments[0]) - known
    assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"} <= set(environments[0])


def test_every_variable_the_settings_read_is_documented_and_the_readme_points_there():
    """The README keeps the variables a first run needs; the configuration reference (generated
    from the settings, docs/configuration.md) documents every one of them with its default."""
    from memorylane.configuration_reference import render

    reference = render()
    missing = sorted(name for name in settings_variables() if f"`{name}`" not in reference)
    assert not missing, missing
    readme = (ROOT / "README.md").read_text()
    assert "docs/configuration.md" in readme
    assert {"MEMORYLANE_HOME", "DATABASE_URL", "REDIS_URL"} <= {
        n for n in settings_variables() if f"`{n}`" in readme
    }


def test_web_and_workers_scale_out_to_two_each_with_one_beat():
    services = COMPOSE["services"]
    assert services["web"]["deploy"]["replicas"] == 2
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["beat"]["deploy"]["replicas"] == 1
    worker = services["worker"]["command"]
    assert worker[worker.index("--hostname") + 1] == "worker@%h"  # distinct names per replica
    # Two replicas cannot share one host port: the web service publishes a range.
    assert all("}-${" in port.rsplit(":", 1)[0] for port in services["web"]["ports"])
