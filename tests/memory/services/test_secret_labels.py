"""The decision of secret_labels.py on thousands of generated values: random keys, hex and UUIDs are
shaped like secrets; identifiers made of English words, paths, addresses, versions and placeholders
are not (pure, seeded)."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from memory.services.secret_labels import labelled_secrets, secret_shaped

RNG_SEED = 55
ALNUM = string.ascii_letters + string.digits
WORDS = [
    "user",
    "session",
    "token",
    "refresh",
    "handler",
    "service",
    "client",
    "server",
    "request",
    "response",
    "cache",
    "queue",
    "worker",
    "payment",
    "invoice",
    "order",
    "account",
    "profile",
    "config",
    "setting",
    "manager",
    "factory",
    "builder",
    "provider",
    "adapter",
    "repository",
    "controller",
    "view",
    "model",
    "schema",
    "query",
    "mutation",
    "event",
    "stream",
    "buffer",
    "reader",
    "writer",
    "parser",
    "loader",
    "router",
    "gateway",
    "proxy",
    "auth",
    "login",
    "signup",
    "billing",
    "report",
    "export",
    "import",
    "upload",
    "download",
    "file",
    "image",
    "search",
    "index",
    "filter",
    "sort",
    "page",
    "list",
    "item",
    "table",
    "row",
    "column",
    "field",
    "value",
    "key",
    "store",
    "state",
    "action",
    "reducer",
    "effect",
    "hook",
    "component",
    "render",
    "update",
    "delete",
    "create",
    "fetch",
    "load",
    "save",
    "sync",
    "retry",
    "timeout",
    "limit",
    "rate",
    "window",
    "batch",
    "job",
    "task",
    "schedule",
    "deploy",
    "release",
    "build",
    "test",
    "check",
    "validate",
    "verify",
    "sign",
    "encode",
    "decode",
    "hash",
    "secret",
]


def random_key(rng: random.Random) -> str:
    while True:
        value = "".join(rng.choice(ALNUM) for _ in range(rng.randint(20, 48)))
        if sum(c.isdigit() for c in value) >= 2:
            return value


def identifier(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 4))]
    joined = rng.choice(
        [
            words[0] + "".join(w.title() for w in words[1:]),
            "".join(w.title() for w in words),
            "_".join(words),
            "-".join(words),
        ]
    )
    return joined + rng.choice(["", "2", "V2", "v3", "_v2"])


def test_random_keys_hex_and_uuids_are_shaped_like_secrets():
    rng = random.Random(RNG_SEED)
    keys = [random_key(rng) for _ in range(3000)]
    hexes = [
        "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((32, 40, 64)))) for _ in range(1000)
    ]
    uuids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(1000)]
    missed = [key for key in keys if not secret_shaped(key, password=False)]
    assert len(missed) <= len(keys) * 0.005, missed[:10]  # a few draws read as words (wordy runs)
    assert all(secret_shaped(value, password=False) for value in hexes + uuids)


def test_identifiers_of_english_words_are_never_shaped_like_secrets():
    rng = random.Random(RNG_SEED)
    flagged = [name for name in (identifier(rng) for _ in range(3000)) if secret_shaped(name, password=False)]
    assert flagged == []


@pytest.mark.parametrize(
    "value",
    [
        "kv/staging/webhooks/stripe",
        "~/.aws/credentials",
        "docs/reference/cli.md:42",
        "https://vault.internal:8200/v1/secret",
        "ops-team@example.com",
        "2026-11-28",
        "v1.24.3",
        "00000000-0000-0000-0000-000000000000",
        "${STRIPE_SECRET_KEY}",
        "price:{plan_id}:{currency}:v2",
        "STRIPE_SECRET_KEY",
        "os.environ['API_TOKEN']",
        "correct-horse-battery-staple",  # a passphrase's shape counts after a password word only
    ],
)
def test_paths_addresses_versions_names_and_placeholders_are_not_values(value):
    assert not secret_shaped(value, password=False)


def test_a_passphrase_counts_after_a_password_word_only():
    assert secret_shaped("correct-horse-battery-staple", password=True)
    assert labelled_secrets("Passphrase for the backup disk: amber-falcon-river-tulip-7")
    assert not labelled_secrets("The deploy key is stored as amber-falcon-river-tulip-7 in Vault.")


def test_every_generated_key_is_found_after_a_credential_word_in_any_of_its_languages():
    rng = random.Random(RNG_SEED)
    sentences = [
        "The {word} for the staging cluster is {key}.",
        "{word}: {key}",
        "Le {word} du bot, c'est {key}, ne le partage pas.",
        "{word} untuk runner adalah {key}",
    ]
    for word in ("token", "API key", "secret", "jeton", "Passwort", "klucz", "kata sandi", "accessToken"):
        for template in sentences:
            key = random_key(rng)
            text = template.format(word=word, key=key)
            assert [text[start:end] for start, end, _ in labelled_secrets(text)] == [key], text
