"""Secrets never stored (DESIGN.md §8): every text is redacted before it is stored, embedded or logged.

:func:`redact` replaces each secret with ``[REDACTED:<kind>]`` and says which kinds it found.
Detection builds on Yelp's maintained ``detect-secrets`` plugins (cloud keys, VCS tokens, chat and
payment keys, JWTs, basic auth in URLs…) and the maintained provider rule set of
``secret_rules.py``, and adds our own patterns for what they lack: provider prefixes (``glpat-``,
``hvs.``, ``shpat_``, ``npm_``, ``SG.``, ``GOCSPX-``, ``lin_api_``, ``HRKU-``, FCM server keys, Google
refresh tokens, wallet WIF keys…), credentials in URLs of any scheme (``redis://:pw@host`` included),
keyword assignments in env lines, JSON, YAML, XML, code and function calls (``define('AUTH_KEY', …)``,
``jwt.sign(payload, '…')``, framework keys: ``APP_KEY=base64:``, ``secret_key_base``, ``SECRET_KEY``),
connection strings and SAS signatures, Docker and npm auth blobs, webhook URLs, PEM, PGP and OpenVPN
key blocks — plus an entropy check for random tokens nobody named. Families, rather than phrasings:

- a password stated in prose in many languages: a password word (``password``, ``Passwort``,
  ``contraseña``, ``mot de passe``, ``senha``, ``пароль``, ``密码``, ``パスワード``, ``비밀번호``,
  ``wachtwoord``, ``hasło``, ``şifre``…), a bounded gap ("for the staging DB", "от админки"), a link
  (``:``, ``=``, a dash, an arrow or the language's verb: is, es, lautet, est, é, to, 是, は, 는…) and a
  value that mixes classes — a plain word, a version, a path, an address or a call is not one;
- a credential noun in prose (``integration key``, ``admin API key``, ``refresh token``, ``private
  key``, or a provider's name before ``key``/``token``/``secret``) followed by a token of 16+ characters
  with letters and digits ("the PagerDuty integration key is …", "SerpApi key: …");
- passwords on command lines, by tool and flag (``mysql -p``, ``redis-cli -a``, ``mongosh -p``,
  ``sqlcmd -P``, ``ldapsearch -w``, ``keytool -storepass``, ``docker login -p``, ``openssl … pass:``,
  ``smbclient -U user%pass``, ``htpasswd -b``, ``MYSQL_PWD=``, ``echo … | … --password-stdin``…);
- wallet recovery phrases: 12 to 24 short words after "mnemonic" or "seed phrase", cut to a count
  BIP-39 allows.

A label in front of a value vetoes it when it names something that is no secret (a fingerprint, an id,
a hash, a cache or idempotency key, a public or search-only key).

Benign look-alikes stay: git SHAs and digests (hex has too little entropy to count), integrity hashes
(``sha512-…``, go.sum ``h1:…``), SSH fingerprints, UUIDs, placeholders (``sk-...``, ``<your-token>``,
``${API_KEY}``, ``$SECRET``, ``xxxx``, ``changeme``, AWS's ``…EXAMPLE`` keys, test-mode keys quoted from
documentation), references to variables and calls (``os.environ[…]``, ``getToken()``), keys public by
design (Stripe ``pk_live_``/``pk_test_``, Mapbox ``pk.``, a Firebase web config's ``apiKey``, keys
labelled publishable, search-only, site key or PublicKey), and the word "password" itself.

The package: ``patterns.py`` (our own patterns), ``checks.py`` (whether a value found is a secret)
and this file: detection over every detector, and redaction.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from memory.services.literals import Prefilter
from memory.services.redaction.checks import (
    HIGH_ENTROPY_CANDIDATE,
    PUBLIC_BLOB_PREFIX,
    encoded_json,
    is_placeholder,
    looks_random,
    plausible,
    public_by_design,
    seed_end,
    strong,
)
from memory.services.redaction.patterns import NOT_A_SECRET_LABEL, OWN_PATTERNS
from memory.services.secret_labels import labelled_secrets
from memory.services.secret_rules import provider_secrets

__all__ = ["RedactingFilter", "find_secrets", "is_placeholder", "redact", "redact_value"]

# detect-secrets plugins we run (not its entropy scanners: they flag hex digests, nor the public IP
# one: an address is no secret). Class name → our kind.
DETECT_SECRETS_PLUGINS = {
    "ArtifactoryDetector": "artifactory_token",
    "AWSKeyDetector": "aws_access_key",
    "AzureStorageKeyDetector": "azure_storage_key",
    "BasicAuthDetector": "password",
    "CloudantDetector": "cloudant_credentials",
    "DiscordBotTokenDetector": "discord_bot_token",
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "IbmCloudIamDetector": "ibm_cloud_key",
    "IbmCosHmacDetector": "ibm_cos_key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp_key",
    "NpmDetector": "npm_token",
    "OpenAIDetector": "api_key",
    "PypiTokenDetector": "pypi_token",
    "SendGridDetector": "sendgrid_key",
    "SlackDetector": "slack_token",
    "SoftlayerDetector": "softlayer_key",
    "SquareOAuthDetector": "square_token",
    "StripeDetector": "stripe_key",
    "TelegramBotTokenDetector": "telegram_bot_token",
    "TwilioKeyDetector": "twilio_key",
}

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _own_patterns() -> list[tuple[str, re.Pattern, int | str, str]]:
    """(kind, compiled pattern, group, check): the check is "" (the usual ones), "strong" (a value found in
    prose must look like a secret, not a word) or "seed" (a recovery phrase of 12 to 24 words)."""
    compiled = []
    for kind, pattern, group, *check in OWN_PATTERNS:
        flags = re.S if kind in ("private_key", "putty_key") else 0
        compiled.append((kind, re.compile(pattern, flags), group, check[0] if check else ""))
    return compiled


@lru_cache(maxsize=1)
def _own_prefilter() -> Prefilter:
    return Prefilter([pattern for _, pattern, _, _ in _own_patterns()])


@lru_cache(maxsize=1)
def _plugins() -> list[tuple[str, object]]:
    """The detect-secrets plugins, once per process. Missing ones (an older release) are skipped."""
    import importlib
    import pkgutil

    import detect_secrets.plugins as package

    found = []
    for module_info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for name, kind in DETECT_SECRETS_PLUGINS.items():
            plugin_class = getattr(module, name, None)
            if plugin_class is not None and plugin_class.__module__ == module.__name__:
                found.append((kind, plugin_class()))
    return found


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """The secrets in ``text`` as (start, end, kind) spans, earliest first, overlaps merged."""
    spans: list[tuple[int, int, str]] = []
    prefilter = _own_prefilter()
    present = prefilter.present(text)
    for index, (kind, pattern, group, check) in enumerate(_own_patterns()):
        if not prefilter.may_match(index, present):
            continue  # the text lacks a word every match of this pattern needs (literals.py)
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if start < 0 or end <= start:
                continue
            if check and NOT_A_SECRET_LABEL.search(text[match.start() : start]):
                continue  # "the signing key fingerprint is …", "the search-only API key is …"
            if check == "seed":
                end = seed_end(text, start, end)
                if end is None:
                    continue
            elif check == "strong" and not strong(kind, text[start:end]):
                continue
            if plausible(kind, text[start:end]):
                spans.append((start, end, kind))
    for kind, plugin in _plugins():
        try:
            values = set(plugin.analyze_string(text))
        except Exception:  # noqa: BLE001 - a plugin's own bug must not stop a store
            logger.exception("detect-secrets plugin %s failed", type(plugin).__name__)
            continue
        for value in values:
            value = value.strip(" \t\"'=:")
            if len(value) < 8 or is_placeholder(value):
                continue
            spans += [(m.start(), m.end(), kind) for m in re.finditer(re.escape(value), text)]
    spans += provider_secrets(text)  # the maintained rule set (memory/services/secret_rules.py)
    spans += labelled_secrets(text)  # a secret-shaped word after a credential word (secret_labels.py)
    for match in HIGH_ENTROPY_CANDIDATE.finditer(text):
        start, token = match.start(), match.group(0)
        if named := re.match(r"[A-Za-z_][A-Za-z0-9_]*=(?=[^=])", token):
            start, token = start + named.end(), token[named.end() :]  # NAME=value: the value alone
        public = PUBLIC_BLOB_PREFIX.search(text[max(0, start - 40) : start])
        if (
            looks_random(token)
            and not public
            and not re.match(r"sha(?:1|256|384|512)-", token)
            and not encoded_json(token)
        ):
            spans.append((start, match.end(), "high_entropy"))
    return _merge([span for span in spans if not public_by_design(text, *span)])


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans become one, with the kind of the one that starts first (the longest on a tie)."""
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    return merged


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets with ``[REDACTED:<kind>]``; returns the text and the kinds found, in order."""
    if not text:
        return text, []
    spans = find_secrets(text)
    if not spans:
        return text, []
    pieces, cursor = [], 0
    for start, end, kind in spans:
        pieces += [text[cursor:start], f"[REDACTED:{kind}]"]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), [kind for _, _, kind in spans]


def redact_value(value):
    """Redact every string inside a JSON-like value (an audit diff, a report)."""
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from every record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)[0]
        if record.args:
            if isinstance(record.args, dict):
                record.args = {k: redact(v)[0] if isinstance(v, str) else v for k, v in record.args.items()}
            else:
                record.args = tuple(redact(a)[0] if isinstance(a, str) else a for a in record.args)
        return True
