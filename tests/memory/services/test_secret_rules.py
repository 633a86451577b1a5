"""The maintained rule set beside our own patterns (issue 43): its rules load and compile, provider
formats our own patterns lack are redacted in prose, and what its filters reject — placeholders,
words, low-entropy values — stays as written."""

from __future__ import annotations

import re
import secrets
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.services.redaction import redact
from memory.services.secret_rules import entropy, provider_secrets, rule_set, translate, wordy


def _random(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits

# Provider formats as their documentation shows them, values drawn at random.
PROVIDER_TOKENS = {
    "pulumi_api_token": lambda: "pul-" + _random(HEX, 40),
    "postman_api_token": lambda: f"PMAK-{_random(HEX, 24)}-{_random(HEX, 34)}",
    "prefect_api_token": lambda: "pnu_" + _random(ALNUM, 36),
    "shippo_api_token": lambda: "shippo_live_" + _random(HEX, 40),
    "sendinblue_api_token": lambda: f"xkeysib-{_random(HEX, 64)}-{_random(ALNUM, 16)}",
    "readme_api_token": lambda: "rdme_" + _random(string.ascii_lowercase + string.digits, 70),
}


def test_the_rule_set_loads_hundreds_of_provider_rules_each_compiled():
    rules, _ = rule_set()
    assert len(rules) >= 400
    assert all(isinstance(rule.regex, re.Pattern) for rule in rules)
    assert not any(rule.id.startswith("generic-") for rule in rules)


@pytest.mark.parametrize("kind", PROVIDER_TOKENS)
@pytest.mark.parametrize(
    "sentence",
    [
        "The nightly job authenticates with {s}.",
        "export TOKEN={s}",
        'token: "{s}"',
        "Use {s}, then rotate it.",
    ],
)
def test_a_provider_token_in_prose_or_config_is_redacted_with_the_rule_as_its_kind(kind, sentence):
    token = PROVIDER_TOKENS[kind]()
    text = sentence.format(s=token)
    assert any(text[start:end] == token and found == kind for start, end, found in provider_secrets(text))
    redacted, _ = redact(text)
    assert token not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "Set the Pulumi token with `pulumi login`; it looks like pul-<40 hex characters>.",
        "The Postman key format is PMAK-xxxxxxxxxxxxxxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.",
        "Prefect keys start with pnu_ and are rotated every 90 days.",
        "resolved: sha512-" + "A" * 86 + "==",
        "Image pinned by digest sha256:" + "ab" * 32 + ".",
        "Request 3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f failed with 502 at the gateway.",
    ],
)
def test_placeholders_format_notes_and_hashes_stay_as_written(text):
    assert provider_secrets(text) == []
    assert redact(text)[0] == text


def test_a_filtered_value_is_not_a_finding():
    low_entropy = "pul-" + "0" * 40
    assert entropy(low_entropy[4:]) == 0
    assert provider_secrets(f"The token is {low_entropy}.") == []


@given(st.text(alphabet="abcdefXYZ(?i)[:alnum:]\\z<>_-", max_size=40))
def test_translation_keeps_python_readable_patterns_readable(pattern):
    try:
        re.compile(pattern)
    except re.error:
        return
    if "(?" not in pattern and "[:" not in pattern and "\\z" not in pattern:
        assert translate(pattern) == pattern


def test_words_are_wordier_than_random_keys():
    assert wordy("production_database_password") > 4 > wordy("aZ3kQ9xLm2Pq8WvT")
