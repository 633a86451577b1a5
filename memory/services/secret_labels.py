"""A secret stated next to the word that names it (DESIGN.md §8), whatever the phrasing or language.

The prose patterns of ``redaction.py`` know how people link a word to its value ("the password is …",
"token: …"). This rule asks less of the phrasing and more of the value: after a credential word —
in a sentence ("le jeton d'API Plausible, c'est …", "the deploy key we use until Vault lands is …"),
a variable's name ("ROLLBAR_ACCESS_TOKEN (server scope) = …"), an identifier ("auth_token …",
"--accessToken …", "GenieKey …") or another language ("Schlüssel", "clé", "klucz", "kata sandi") —
every word of the same sentence, a few words on, that is shaped like a secret is one:
- a value that mixes letters, digits and symbols ("Harbor!Wind2024", "M.5oC83185WIL;X.H<e("),
- a long random run of letters and digits, hex or base64 included (it must not read as English words
  joined into an identifier, "AuthTokenRefresher2"),
- a UUID, which providers hand out as keys (a record key, an API key, a GenieKey),
- after a password word, a passphrase of four or more words joined by hyphens.
A word before the value that names something else vetoes it ("… commit 9fceb02…", "credential id:
…"), and so does a credential word that is qualified as no secret ("public key", "cache key",
"key_id"). Words, paths, addresses, versions, identifiers and placeholders are never values.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory.conf import setting
from memory.services.secret_rules import entropy, wordy
from memory.services.upsert.lexicon import parts_of_speech
from memory.services.upsert.tokens import _words

# The words that name a credential, as parts of a word ("auth_token", "accessToken", "GenieKey",
# "RESTIC_PASSWORD", "Netzwerkschlüssel" ends in one), lowercased, in the languages memories are
# written in. Password words also admit a passphrase of plain words.
PASSWORD_PARTS = _words(
    "password passwort passphrase passcode passwd pwd kennwort contraseña contrasena senha "
    "wachtwoord hasło haslo şifre sifre lösenord losenord adgangskode passord heslo пароль 密码 密碼 "
    "口令 パスワード 비밀번호 암호 sandi mdp"
)
KEY_PARTS = _words(
    "secret secrets cookie cookies token tokens key keys apikey credential credentials creds pat "
    "psk salt login auth authorize authenticate authtoken schlüssel schluessel clé cle clave "
    "chiave chave sleutel klucz nyckel nøgle nokkel anahtar kunci jeton segredo secreto segreto "
    "geheimnis rahasia ключ токен секрет 密钥 秘钥 令牌 キー トークン 키 토큰"
)
# Compounds that end in a credential word ("Netzwerkschlüssel", "WLAN-Passwort").
PASSWORD_SUFFIX = re.compile(r"(?i)(?:passwort|kennwort|wachtwoord|lösenord)$")
KEY_SUFFIX = re.compile(r"(?i)(?:schlüssel|sleutel|nyckel)$")
# Words beside a credential word that say its value is no secret: "public key", "key_id",
# "cache key", "primary key", "token bucket", "key fingerprint".
NOT_SECRET_PARTS = _words(
    "id ids public publishable authorized known cache primary foreign sort partition composite "
    "unique lookup object idempotency dedup dedupe index row map translation i18n bucket "
    "fingerprint hash name names path file length size format prefix type types version rotation "
    "policy policies expiry ttl scope scopes field fields count limit example sample dummy "
    "placeholder"
)
# A word just before a value that says what the value is, when it is not a secret: "commit 9fceb02…",
# "id: …", "SHA-256 …". Checked on the nearest word that is not a link ("is", "=", "c'est"…).
NOT_SECRET_HEAD = re.compile(
    r"(?i)^(?:ids?|uuids?|guids?|commits?|sha(?:-?\d+)?|revisions?|rev|hash(?:es)?|digests?|checksums?|"
    r"fingerprints?|versions?|builds?|runs?|jobs?|tickets?|issues?|prs?|orders?|users?(?:names?)?|"
    r"accounts?|alias(?:es)?|tags?|branch(?:es)?|images?|public|publishable|names?|paths?|files?|like|e\.g\.?|"
    r"examples?|samples?|ssh-\w+|ecdsa-\S+)$"
)
# Words that only join a name to its value, in the languages above.
LINK_WORDS = _words(
    "is are was were = : := => -> → — – - es est c'est é è ist lautet sind sont são to jest er är "
    "wordt je adalah ialah hai hain abhi bhi still now currently just 是 为 為 は 는 은"
)
# Where a sentence ends: a full stop, question or exclamation mark and a space before a capital, or a line.
SENTENCE_END = re.compile(r"[.!?;]\s+(?=[A-Z])|\n")
# Words, with "NAME=value" cut in two (an "=" that pads base64 stays with its value).
WORD = re.compile(r"(?:[^\s=]|=(?=[=\s\"'`,;)}\]]|$))+")
UUID = re.compile(r"(?i)(?:[a-z]{2,8}[-_])?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
PASSPHRASE = re.compile(r"[a-z]{3,10}(?:-[a-z]{3,10}){3,}(?:-\d{1,4})?")
# Values that are something else: a URL, an e-mail address, a version, date, time or address, a call
# or lookup, a variable's name, a template, a placeholder (paths: ``path_like``). Prose patterns of
# redaction.py ask the same of their values.
NOT_A_VALUE = re.compile(
    r"(?ix)^(?: [a-z][a-z0-9+.-]*://.* | [\w.+-]+@[\w-]+(?:\.[\w-]+)+ | (?=.{0,32}$)v?\d+(?:[.:/-]\d+)+[\w.+-]* |"
    r" [A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*(?:\(.*|\[.*) |"
    r" (?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+) | [<{$%].* | .*\{[\w.]*\}.* | .*(?:\.\.\.|…|xxxx|XXXX|\*\*\*).* )$"
)
# Where a value's edges are: quotes, brackets and sentence punctuation around it.
EDGE_OPEN = "\"'`“‘«(<[{"
EDGE_CLOSE = "\"'`”’»)>]},.;:"


def path_like(value: str) -> bool:
    """A file or key path ("kv/staging/stripe", "~/.aws/credentials", "docs/cli.md:42"), not a value
    that holds a slash among symbols (a salt, base64) or a long random run (a token with a slash)."""
    return bool(re.fullmatch(r"[~.]{0,2}/?[\w.@:-]+(?:/[\w.@:-]*)+", value)) and not re.search(
        r"[A-Za-z0-9+]{20,}", value
    )


@lru_cache(maxsize=4096)
def _credential(word: str) -> str:
    """ "password" for a password word, "key" for another credential word, "" for none. A word is cut
    into parts at underscores, hyphens, dots and changes of case."""
    bare = word.strip(EDGE_OPEN + EDGE_CLOSE + "-").rstrip("=:")
    pieces = [p for p in re.split(r"[_\-./]+|(?<=[a-z])(?=[A-Z])", bare) if p]
    parts = [p.lower() for p in pieces]
    if not parts or any(part in NOT_SECRET_PARTS for part in parts):
        return ""
    if any(part in PASSWORD_PARTS for part in parts) or PASSWORD_SUFFIX.search(bare):
        return "password"
    if any(part in KEY_PARTS for part in parts) or KEY_SUFFIX.search(bare):
        return "key"
    return ""


def _english_share(value: str) -> float:
    """The share of a value's letters in runs that are English words of three letters or more
    ("AuthTokenRefresher" is all words; "qnzwtgslpvuupvkp" none)."""
    letters = sum(c.isalpha() for c in value)
    runs = re.findall(r"[A-Z]?[a-z]{2,}|[A-Z]{3,}(?![a-z])", value)
    english = sum(len(run) for run in runs if parts_of_speech(run.lower()))
    return english / letters if letters else 0.0


def secret_shaped(value: str, *, password: bool) -> bool:
    """Whether a word found near a credential word is a secret rather than a word, name or number."""
    if len(value) < setting("SECRET_LABEL_MIN_CHARS") or NOT_A_VALUE.match(value) or path_like(value):
        return False
    if entropy(value) < setting("SECRET_LABEL_MIN_ENTROPY"):
        return False  # "sdk-00000000-0000-0000-0000-000000000000", "aaaaaaaa…": a placeholder
    if UUID.fullmatch(value):
        return True
    if PASSPHRASE.fullmatch(value):
        return password
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(not c.isalnum() and c not in "._-" for c in value)
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if letters and digits and symbols:
        return _english_share(value) < 1.0 or digits >= 3
    if len(value) < setting("SECRET_LABEL_RANDOM_MIN_CHARS") or letters < 2:
        return False
    if _english_share(value) >= setting("SECRET_LABEL_MAX_ENGLISH_SHARE"):
        return False  # words joined into an identifier: "useInfiniteScrollQueryV2Hook"
    if digits >= 2:
        scattered = digits / len(value) >= setting("SECRET_LABEL_DIGIT_SHARE")
        return wordy(value) <= setting("SECRET_LABEL_MAX_WORDY") or scattered
    # No digits: only a mixed-case random run ("CLPFaSdJgMGqlEnP"), whose case changes often.
    return (
        mixed_case
        and wordy(value) <= setting("SECRET_LABEL_NO_DIGITS_MAX_WORDY")
        and entropy(value) >= setting("SECRET_LABEL_NO_DIGITS_MIN_ENTROPY")
    )


def _value(word: str) -> tuple[int, int]:
    """The value inside a word: its span once quotes, brackets and closing punctuation are cut."""
    start, end = 0, len(word)
    while start < end and word[start] in EDGE_OPEN:
        start += 1
    while end > start and word[end - 1] in EDGE_CLOSE:
        end -= 1
    return start, end


def labelled_secrets(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret-shaped word a few words after a credential word, in its
    sentence."""
    window = setting("SECRET_LABEL_WINDOW_CHARS")
    words = list(WORD.finditer(text))
    ends = [match.start() for match in SENTENCE_END.finditer(text)]
    spans = []
    for index, match in enumerate(words):
        kind = _credential(match.group()) or _password_flag(words, index)
        if not kind or _qualified_away(words, index) or _map_key(text, match):
            continue
        limit = min(match.end() + window, next((e for e in ends if e >= match.end()), len(text)))
        head = match.group()
        for following in words[index + 1 :]:
            if following.start() >= limit:
                break
            word = following.group()
            start, end = _value(word)
            value = word[start:end]
            if not NOT_SECRET_HEAD.match(head.strip(EDGE_OPEN + EDGE_CLOSE)) and secret_shaped(
                value, password=kind == "password"
            ):
                kind_found = "password" if kind == "password" else "credential"
                spans.append((following.start() + start, following.start() + end, kind_found))
            if word.lower().strip(EDGE_OPEN + EDGE_CLOSE) not in LINK_WORDS and word not in LINK_WORDS:
                head = word
    return spans


def _qualified_away(words: list[re.Match], index: int) -> bool:
    """A credential word right after a word that says it is no secret: "public key", "cache key",
    "search-only API key"."""
    before = [w.group().lower().strip(EDGE_OPEN + EDGE_CLOSE) for w in words[max(0, index - 3) : index]]
    return any(word in NOT_SECRET_PARTS or word.endswith("-only") for word in before[-2:]) or any(
        word in ("no", "not", "without", "fake") for word in before
    )


def _map_key(text: str, match: re.Match) -> bool:
    """The bare word "key" as the name of a field (``{ key: 'user-42' }``, ``, key=…``): a map's key,
    a React list key, a sort key far more often than a credential. Not after a word ("API key: …")."""
    word = match.group()
    bare = word.lstrip(EDGE_OPEN)
    after = match.start() + len(word) - len(bare) + 3
    before = text[: match.start()].rstrip(" \t")
    return (
        bare[:3].lower() == "key"
        and bare[3:4] in ("", ":", '"', "'")
        and bool(re.match(r"[\"']?\s*[:=]", text[after : after + 4]))
        and (not before or before[-1] in "{(,;\n" or word[0] in "\"'")
    )


def _password_flag(words: list[re.Match], index: int) -> str:
    """``-p`` after ``-u <user>`` on a command line (altool, rabbitmqadmin, mysql…) is a password."""
    return (
        "password" if words[index].group() == "-p" and index >= 2 and words[index - 2].group() == "-u" else ""
    )
