"""Which texts the embedding model reads (issue 43).

The model (all-MiniLM-L6-v2) was trained on English. In other languages, and above all in other
scripts, its vectors say little about what a text means: two unrelated Russian or Korean sentences
can lie closer than two wordings of one English rule. Whatever decides by a cosine asks first
whether it can read the texts: the screen of intent judges only texts that read as English
(``memory/services/intent.py``; dev, stop 48: 66% of payloads held at 1% of legitimate texts with
English data, 10% once legitimate texts in 14 languages joined), and the upsert lets a cosine vouch
for a rewording or a changed fact only between texts in Latin script, unless they share words
(``memory/services/upsert/``; terse technical English — "Pin provider versions." — has too few
common English words for the first test).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from memory.conf import setting

WORD_RE = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    return frozenset(setting("ENGLISH_TEXT_WORDS").split())  # a string of words


def reads_as_english(text: str) -> bool:
    """Whether at least ``ENGLISH_TEXT_SHARE`` of the words of ``text`` are common English words
    (letters of other scripts count against it). Pure."""
    words = [word.lower() for word in WORD_RE.findall(text)]
    if not words:
        return False
    english = sum(word in _english_words() for word in words)
    return english / len(words) >= setting("ENGLISH_TEXT_SHARE")


def latin_script(text: str) -> bool:
    """Whether at least ``LATIN_SCRIPT_SHARE`` of the letters of ``text`` are Latin (any accent). Pure."""
    return _latin_share(text) >= setting("LATIN_SCRIPT_SHARE")


@lru_cache(maxsize=1024)  # the upsert asks it of the same texts for every neighbour
def _latin_share(text: str) -> float:
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return 1.0
    return sum("LATIN" in unicodedata.name(char, "") for char in letters) / len(letters)
