"""The configuration reference is generated from settings.py, and every setting in it is described."""

from __future__ import annotations

import os
import shutil

import pytest
from django.conf import settings

from memorylane import configuration_reference as reference
from memorylane import settings_descriptions


def test_every_memory_lane_key_has_a_description():
    missing = [problem for problem in reference.problems() if "MEMORY_LANE[" in problem]
    assert not missing, "\n".join(missing)


def test_every_environment_variable_the_server_reads_has_a_description():
    missing = [problem for problem in reference.problems() if "environment variable" in problem]
    assert not missing, "\n".join(missing)


def test_no_description_outlives_its_setting_or_is_given_twice():
    stale = [
        problem for problem in reference.problems() if "no longer" in problem or "two sections" in problem
    ]
    assert not stale, "\n".join(stale)


def test_it_reads_every_key_of_the_live_settings_in_order():
    assert [setting.key for setting in reference.memory_lane_settings()] == list(settings.MEMORY_LANE)


def test_defaults_are_the_code_s_with_no_variable_set(monkeypatch):
    monkeypatch.setenv("MEMORYLANE_WEB_THREADS", "9")  # the reference never reads the environment
    found = {setting.key: setting for setting in reference.memory_lane_settings()}
    assert found["WEB_THREADS"].default == 4
    assert found["WEB_THREADS"].environment == ["MEMORYLANE_WEB_THREADS"]
    assert found["INTENT_SCREEN"].default is False
    assert found["API_THROTTLE_RATE"].environment == ["MEMORYLANE_THROTTLE_RATE"]
    assert found["DECAY_EVERY_SECONDS"].default == 7 * 24 * 3600
    overridden = set(settings.MEMORY_LANE) if os.environ.get("MEMORYLANE_CONFIG") else set()
    differ = [
        key
        for key, setting in found.items()
        if not setting.environment and key not in overridden and setting.default != settings.MEMORY_LANE[key]
    ]
    assert not differ, differ


def test_it_finds_the_variables_of_settings_embedded_database_and_runner():
    variables = {variable.name: variable for variable in reference.environment_variables()}
    assert variables["MEMORYLANE_HOME"].files == ["memorylane/embedded.py"]
    assert variables["MEMORYLANE_MAX_BODY_BYTES"].default == str(1024 * 1024)
    assert variables["DJANGO_DEBUG"].default == "false"  # envbool's own default
    assert variables["DJANGO_SECRET_KEY"].default is None
    assert "memorylane/runner.py" in variables["DATABASE_URL"].files
    assert "DJANGO_SETTINGS_MODULE" not in variables


def test_a_new_setting_is_picked_up_and_named_with_where_to_describe_it(tmp_path, monkeypatch):
    copy = tmp_path / "settings.py"
    shutil.copy(reference.SETTINGS, copy)
    source = copy.read_text()
    source = source.replace(
        "MEMORY_LANE: dict = {",
        'MEMORY_LANE: dict = {\n    "NEW_KNOB": envint("MEMORYLANE_NEW_KNOB", "7"),',
        1,
    )
    copy.write_text(source + '\nMEMORY_LANE["LATE_KNOB"] = [1, 2]\n')
    monkeypatch.setattr(reference, "SETTINGS", copy)

    found = {setting.key: setting for setting in reference.memory_lane_settings()}
    assert found["NEW_KNOB"].default == 7 and found["NEW_KNOB"].environment == ["MEMORYLANE_NEW_KNOB"]
    assert found["LATE_KNOB"].default == [1, 2]
    problems = reference.problems()
    assert (
        "MEMORY_LANE['NEW_KNOB'] has no description: add 'NEW_KNOB': '…' to a section of MEMORY_LANE "
        "in memorylane/settings_descriptions.py"
    ) in problems
    assert any(p.startswith("MEMORYLANE_NEW_KNOB (an environment variable") for p in problems)
    page = reference.render()
    assert "### Not described yet" in page and "`NEW_KNOB`" in page and "`MEMORYLANE_NEW_KNOB`" in page


def test_the_page_lists_every_key_and_variable_with_long_defaults_in_full():
    page = reference.render()
    for setting in reference.memory_lane_settings():
        assert f"| `{setting.key}` |" in page
    for name in settings_descriptions.ENVIRONMENT:
        assert f"| `{name}` |" in page
    assert "([in full](#upsert_phrases))" in page and "#### UPSERT_PHRASES {#upsert_phrases}" in page
    assert "| `RRF_K` | `60` | — |" in page


@pytest.mark.parametrize("value", ["a|b", "x\ny"])
def test_a_cell_never_breaks_its_table(value):
    assert "|" not in reference._cell(value).replace("\\|", "") and "\n" not in reference._cell(value)
