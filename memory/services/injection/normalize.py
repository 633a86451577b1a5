"""The readings of a text an agent might act on (DESIGN.md §8), each normalized for matching: Unicode
compatibility forms (NFKC), zero-width and bidi controls removed, confusable letters (Cyrillic and
Greek look-alikes, fullwidth forms) mapped to ASCII, leetspeak digits read as letters, s p a c e d
letters joined, words cut into syl-la-bles and strings glued with + put back together, HTML entities
and percent-encoding decoded, and base64 or hex blobs decoded and read as well. Pure."""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from urllib.parse import unquote

from memory.conf import setting

INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
CONFUSABLES = str.maketrans(
    {
        **dict(
            zip("АВЕЗІЈКМНОРЅСТУХаеіјорѕсухԁɡһԛԝᴄᴏᴠᴡ", "ABE3IJKMHOPSCTYXaeijopscyxdghqwcovw", strict=True)
        ),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικνορτυχ", "ABEZHIKMNOPTYXabeikvoptux", strict=True)),
        "ı": "i",
        "ȷ": "j",
        "ℓ": "l",
    }
)
LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "l"}
)
LEET_WORD = re.compile(r"[A-Za-z][013457@$|][A-Za-z]|\b[013457@$][A-Za-z]{2,}")
SPACED = re.compile(r"\b(?:[A-Za-z][ ._*\-]){3,}[A-Za-z]\b")
BASE64_BLOB = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
BASE64URL_BLOB = re.compile(r"(?<![A-Za-z0-9_=-])[A-Za-z0-9_-]{16,}={0,2}(?![A-Za-z0-9_=-])")
HEX_BLOB = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}(?:\s|\\x|0x)?){12,}")
# Words cut into syllables ("ig-nore pre-vious in-struc-tions", "de-lete"): a hyphen or dot between
# two letters, read away when the text holds several such words. Strings glued back together
# ("'cu'+'rl …'"): the quotes and the plus read away.
CUT_WORD = re.compile(r"[^\W\d_]+(?:[-.][^\W\d_]+)+")
CUT = re.compile(r"(?<=[^\W\d_])[-.](?=[^\W\d_])")
GLUED_STRINGS = re.compile(r"""(['"`])\s*\+\s*\1""")


def _decoded_text(raw: bytes) -> str | None:
    """``raw`` as text, when it reads as text (not a binary digest)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in text)
    letters = sum(unicodedata.category(ch)[0] in "LM" for ch in text)  # marks: Devanagari vowels
    return text if text and printable / len(text) > 0.95 and letters / len(text) > 0.5 else None


def _decoded_blobs(text: str) -> list[str]:
    found = []
    for pattern, decode in (
        (BASE64_BLOB, base64.b64decode),
        (BASE64URL_BLOB, base64.urlsafe_b64decode),
        (HEX_BLOB, lambda blob: binascii.unhexlify(re.sub(r"\s|\\x|0x", "", blob))),
    ):
        for match in pattern.finditer(text):
            blob = match.group(0)
            try:
                raw = decode(blob + "=" * (-len(blob) % 4) if pattern is not HEX_BLOB else blob)
            except (binascii.Error, ValueError):
                continue
            decoded = _decoded_text(raw)
            if decoded:
                found.append(decoded)
    return found


def _rot13(text: str) -> str:
    return text.translate(
        str.maketrans(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
        )
    )


def variants(text: str, depth: int = 0) -> list[str]:
    """The readings of ``text`` an agent might act on, each normalized for matching."""
    base = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    base = html.unescape(base)
    if "%" in base:
        base = base + "\n" + unquote(base)
    mapped = base.translate(CONFUSABLES)
    readings = [base] if mapped == base else [base, mapped]
    joined = SPACED.sub(lambda m: re.sub(r"[ ._*\-]", "", m.group(0)), mapped)
    if joined != mapped:
        readings.append(joined)
    if LEET_WORD.search(mapped):  # digits or symbols standing in for letters inside a word
        readings.append(mapped.translate(LEET))
    if len(CUT_WORD.findall(mapped)) >= setting("INJECTION_CUT_WORDS"):
        readings.append(CUT.sub("", mapped))
    if GLUED_STRINGS.search(mapped):
        readings.append(GLUED_STRINGS.sub("", mapped))
    if re.search(r"(?i)rot-?13", base):
        readings.append(_rot13(mapped))
    if depth < 2:
        for decoded in _decoded_blobs(base):
            readings += variants(decoded, depth + 1)
    return readings
