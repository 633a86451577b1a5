"""Whether a value a pattern found is a secret: placeholders, plain words, public-by-design keys and
labels that name something else are not; random-looking values and recovery phrases are (pure)."""

from __future__ import annotations

import base64
import json
import math
import re
from collections import Counter

from memory.conf import setting
from memory.services.secret_labels import NOT_A_VALUE, PASSPHRASE, path_like
from memory.services.upsert.lexicon import parts_of_speech

# Values that only stand in for a secret: never redacted, so examples and templates stay readable.
PLACEHOLDER_RE = re.compile(
    r"""(?ix)^(?:
        .*\.\.\..* | .*….* | [x*#•.\-_=]{3,} | x{3,}.* | .*x{6,}.* | <.* | \[(?![\d\s,]+\])[^\]]*\] | \{[^}]*\} |
        \$.* | %[A-Za-z_]+%? | \{\{.* |
        (?:your|my|our)[-_ ][\w-]+ | (?:your|my|our)(?:token|key|pass\w*|secret|api\w*) | %\(\w+\)\w | .*(?:placeholder|changeme|change[-_]me|replace[-_]?me|redacted|
        dummy|todo|fixme|insert[-_]|example\.com|sample|\bfake\b|notreal|not[-_]a[-_]real|xxxx).* |
        none|null|nil|true|false|yes|no|on|off|undefined|required|optional|string|str|int|secret|password|token|
        env|environ.*|os\.environ.*|process\.env.*|getenv.*|settings\..*|config\..*|vault:.*|ssm:.*|arn:.*|
        \d+(?:\.\d+)?(?:[smhdkKMG]|ms|min)?
    )$""",
)
# A value that reads as an English phrase or a file path is not a secret ("the password is stored
# in Vault", "token: see docs/auth.md").
COMMON_VALUE_WORDS = frozenset(
    [
        "stored",
        "kept",
        "managed",
        "rotated",
        "set",
        "required",
        "needed",
        "missing",
        "wrong",
        "invalid",
        "expired",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "from",
        "to",
        "of",
        "for",
        "not",
        "never",
        "always",
        "only",
        "now",
        "also",
        "still",
        "being",
        "rotated",
        "shared",
        "generated",
        "provided",
        "handled",
        "configured",
        "saved",
        "located",
        "case",
        "sensitive",
        "hashed",
        "encrypted",
        "salted",
        "secret",
        "secure",
        "strong",
        "weak",
        "long",
        "short",
        "empty",
        "blank",
        "same",
        "different",
        "correct",
        "incorrect",
        "there",
        "here",
        "this",
        "that",
        "it",
        "its",
        "these",
        "those",
        "available",
        "visible",
        "optional",
        "mandatory",
        "unique",
        "random",
        "defined",
        "unset",
        "loaded",
        "read",
        "written",
        "passed",
        "sent",
        "checked",
        "validated",
        "verified",
        "used",
        "ignored",
        "reset",
        "changed",
        "updated",
        "removed",
        "deleted",
        "revoked",
        "invalidated",
        "leaked",
        "compromised",
        "1password",
    ]
)

HIGH_ENTROPY_CANDIDATE = re.compile(r"(?<![\w/.+=-])[A-Za-z0-9+=_-]{32,}(?![\w/.+=-])")
# What precedes a random-looking blob that is public by design: integrity hashes, public keys, data URIs.
PUBLIC_BLOB_PREFIX = re.compile(
    r"(?:(?i:sha(?:1|256|384|512)|md5)[-:]|\bh1:|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-nistp\d+ |sk-ssh-ed25519@openssh\.com |"
    r"base64,)$"
)
# Keys that are public by design: Stripe publishable keys and Mapbox public tokens by their prefix; any
# value labelled publishable, public, search-only or site key; a Firebase web config's apiKey.
PUBLIC_TOKEN = re.compile(r"pk_(?:live|test)_|pk\.eyJ")
PUBLIC_LABEL = re.compile(
    r"(?i)publishable|(?:wallet|public) address|address \(public\)|public[\s_-]?key|search[\s_-]?only|\bsite[\s_-]?key|sitekey|client[\s_-]?side|browser[\s_-]key"
)
# A WireGuard peer line ("peer: <public key>") and the shape of a WireGuard key (32 bytes in base64).
WIREGUARD_PEER = re.compile(r"(?i)(?:^|\n)[ \t]*peer[ \t]*:[ \t]*\Z")
WIREGUARD_KEY = re.compile(r"[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=")
# An account's SID (Twilio's "AC…") names the account, like a user name; its auth token is the secret.
# (A session's SID, a cookie, is one: only "account SID" counts.)
NAMED_SID = re.compile(r"(?i)\baccount[\s_-]+SIDs?\s*(?:[:=]|is)?\s*[\"'`]?$")
# After a value, on its line: words that say it is meant to be seen (the browser bundle, the client).
PUBLIC_NOTE = re.compile(
    r"(?i)\b(?:public|publishable|client[\s_-]?side|(?:in|for|to) the browser|safe to (?:ship|share|expose|commit|publish))\b"
)
NEGATED_PUBLIC = re.compile(
    r"(?i)\b(?:not|never|no longer|isn't|aren't|don't|must not|shouldn't|non)[\s-]+(?:\w+[\s-]+){0,4}?"
    r"(?:public|publishable|client|browser|frontend|bundle|safe|ship|share|expose|commit|publish)"
)
SECRET_LABEL = re.compile(r"(?i)secret|private|pass(?:word|phrase)|admin|server[\s_-]?key|write")
FIREBASE_WEB_CONFIG = re.compile(
    r"authDomain|firebaseapp\.com|messagingSenderId|firebaseConfig|initializeApp\("
)
# A test-mode key quoted from documentation ("Stripe's docs use sk_test_… as the example key").
DOCS_CONTEXT = re.compile(r"(?i)\b(?:docs?|documentation|example|sample|dummy|tutorial|quickstart|readme)\b")
HIGH_ENTROPY_BITS = 4.2  # above the 4.0 ceiling of hex, so git SHAs and checksums pass through


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(token: str) -> bool:
    """Mixed case and digits with high entropy. Random keys scatter digits; code identifiers
    (``useInfiniteScrollQueryV2Hook``) carry one or none, so two or more are required."""
    classes = sum(bool(re.search(pattern, token)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    digits = sum(char.isdigit() for char in token)
    return classes == 3 and digits >= 2 and entropy(token) >= HIGH_ENTROPY_BITS


def is_placeholder(value: str) -> bool:
    """A value that stands in for a secret (``<token>``, ``${API_KEY}``, ``xxxx``, ``changeme``)."""
    value = value.strip().strip("\"'`“”‘’")
    return not value or "EXAMPLE" in value or bool(PLACEHOLDER_RE.match(value))


def plausible(kind: str, value: str) -> bool:
    """Whether a value a keyword or prose pattern found is a secret rather than a word or a path."""
    if kind == "account_number":
        return True  # digits, which is_placeholder takes for a number
    if is_placeholder(value):
        return False
    if re.fullmatch(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*\(.*", value):
        return False  # a call: token = getToken(), std::env::var("…")
    if re.fullmatch(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][\w$]*)+(?:\[.*)?", value) and not re.search(
        r"\d", value
    ):
        return False  # a reference to where it lives: BuildConfig.MAPS_TOKEN, ProcessInfo.processInfo.environment[…]
    if kind in ("secret", "password", "cli_password", "connection_string_key", "npm_auth"):
        bare = value.strip("\"'`.,;:()[]")
        if (
            is_placeholder(bare)
            and not bare.isdigit()
            or bare.lower() in COMMON_VALUE_WORDS
            or path_like(bare)
        ):
            return False
        if kind == "password" and bare.isalpha() and bare.islower() and len(bare) < 12:
            return False  # "the password is hunter" reads as a word; hunter2 does not
        if kind == "password" and english_compound(bare):
            return False  # "credentials are short-lived", "read-only": words, not a passphrase
        if re.fullmatch(r"[a-z]+(?:[._-][a-z]+)*", bare) and kind == "secret" and len(bare) < 8:
            return False
    return True


def english_compound(value: str) -> bool:
    """Two or three lowercase English words joined by hyphens ("short-lived", "self-hosted-only");
    four or more is a passphrase's shape (see ``strong``)."""
    parts = value.split("-")
    return 2 <= len(parts) <= 3 and all(
        part.isalpha() and part.islower() and parts_of_speech(part) for part in parts
    )


def strong(kind: str, value: str) -> bool:
    """Whether a value found after a word in prose is a secret: a token mixing classes (letters with
    digits or symbols), not a word, identifier, version, date, address, path or call. A passphrase of
    four or more hyphen-joined words ("otter-velvet-copper-pepper-71", Apple's "abcd-efgh-ijkl-mnop")
    is one too."""
    if kind == "password" and PASSPHRASE.fullmatch(value):
        return True
    if len(value) < 6 or value[0] in "([{<" or is_placeholder(value) or value.lower() in COMMON_VALUE_WORDS:
        return False
    if len(value) >= 16 and entropy(value) < setting("SECRET_LABEL_MIN_ENTROPY"):
        return False  # "sdk-00000000-0000-0000-0000-000000000000": a placeholder's shape
    if (
        NOT_A_VALUE.match(
            value
        )  # versions, dates, addresses, URLs (their passwords have their own pattern), calls
        or re.fullmatch(r"[a-z]+(?:[._-][a-z0-9]+)*", value)
        and sum(c.isdigit() for c in value) < 3
        or "/" in value
        and not re.search(r"[A-Za-z0-9+]{20,}", value)  # paths
    ):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(not c.isalnum() and c not in "._-/" for c in value)
    if kind == "credential":
        return letters >= 2 and digits >= 2 and not re.fullmatch(r"[a-z][\w-]*(?:\.[\w-]+){2,}", value)
    if kind == "secret":
        return bool(letters and (digits or symbols)) or len(value) >= 24
    upper_and_lower = any(c.isupper() for c in value) and any(c.islower() for c in value)
    classes = bool(letters) + bool(digits) + bool(symbols) + upper_and_lower
    return bool(digits or symbols) and classes >= 2 and bool(letters or symbols)


SEED_LENGTHS = (24, 21, 18, 15, 12)


def seed_end(text: str, start: int, end: int) -> int | None:
    """The end of a recovery phrase: the longest run of 12, 15, 18, 21 or 24 words (the counts BIP-39
    allows) from its start, so the words of the sentence after it stay."""
    words = list(re.finditer(r"\S+", text[start:end]))
    count = next((n for n in SEED_LENGTHS if n <= len(words)), 0)
    return start + words[count - 1].end() if count else None


def encoded_json(token: str) -> bool:
    """A blob that is base64 of a small JSON object ("eyJhbGciOi…" alone, a JWT's header, an event):
    data anyone can decode, not a key. A whole JWT has dots and is found by its own pattern."""
    if not token.startswith("eyJ"):
        return False
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError:  # not base64, not UTF-8 or not JSON
        return False
    if not isinstance(data, dict):
        return False
    # A tunnel or connector token is base64 JSON too, around its secret: a long value in it is one.
    return not any(isinstance(v, str | dict | list) and len(str(v)) >= 16 for v in data.values())


def public_note(text: str, start: int, end: int) -> bool:
    """A note after the value on its line that says it is public by design ("// client-side token,
    safe to ship in the browser bundle", "(publishable, used by Stripe.js)"), with no negation ("not
    public", "never in the browser") and no secret word before the value ("SECRET_KEY=…")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    note = text[end : line_end if line_end >= 0 else len(text)]
    if SECRET_LABEL.search(text[line_start:start]) or not PUBLIC_NOTE.search(note):
        return False
    return not NEGATED_PUBLIC.search(note)


def public_by_design(text: str, start: int, end: int, kind: str) -> bool:
    """A key that is public by design (a publishable key, a search-only key, a site key, a Firebase web
    config's apiKey, a WireGuard PublicKey, one a note on its line calls public), an account's SID, or
    a test-mode key quoted from documentation."""
    if kind == "private_key":
        return False
    value = text[start:end]
    if PUBLIC_TOKEN.match(value):
        return True
    label = text[max(0, start - 80) : start].rsplit("\n", 1)[-1]
    publics = list(PUBLIC_LABEL.finditer(label))
    if publics and not SECRET_LABEL.search(label[publics[-1].end() :]):
        return True  # the nearest label says public, and no secret word comes after it
    if public_note(text, start, end) or NAMED_SID.search(text[max(0, start - 40) : start]):
        return True
    if WIREGUARD_PEER.search(text[max(0, start - 40) : start]) and WIREGUARD_KEY.fullmatch(value):
        return True  # `wg show`: each peer is named by its public key
    if value.startswith("AIza") and FIREBASE_WEB_CONFIG.search(text):
        return True
    if re.search(r"-----BEGIN [A-Z ]*PUBLIC KEY-----[^-]*$", text[:start]):
        return True  # inside a PEM public key
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    return bool(re.match(r"[sr]k_test_", value) and DOCS_CONTEXT.search(line))
