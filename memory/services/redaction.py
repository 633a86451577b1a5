"""Safety of stored text (DESIGN.md §8): secrets are redacted, instructions aimed at agents flagged.

:func:`redact` runs before anything is stored or embedded and replaces each secret with
``[REDACTED:<kind>]``. :func:`injection_reasons` lists why a text looks like it tries to instruct
the agents that will read it; the store service quarantines such memories until a curator approves.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# Order matters: specific formats first, so a key inside a URL or assignment gets its own kind.
SECRET_PATTERNS: list[tuple[str, re.Pattern]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9 ]+ )?PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("api_key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    ("memorylane_token", re.compile(r"\bml_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}")),
    ("bearer_token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}")),
    ("password", re.compile(r"(?<=://)(?P<user>[^\s:/@]+):[^\s/@]+(?=@)")),
    (
        "secret",
        re.compile(
            r"(?i)(?P<name>\b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)"
            r"[\"']?\s*[:=]\s*)(?P<quote>[\"']?)(?P<value>[^\s\"',;]{6,})"
        ),
    ),
]

HIGH_ENTROPY_CANDIDATE = re.compile(r"(?<![\w/.-])[A-Za-z0-9+=_-]{32,}(?![\w/.-])")
HIGH_ENTROPY_BITS = 4.2  # above the 4.0 ceiling of hex, so git SHAs and checksums pass through


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_random(token: str) -> bool:
    """Mixed case and digits with high entropy. Random keys scatter digits; code identifiers
    (``useInfiniteScrollQueryV2Hook``) carry one or none, so two or more are required."""
    classes = sum(bool(re.search(pattern, token)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    digits = sum(char.isdigit() for char in token)
    return classes == 3 and digits >= 2 and _entropy(token) >= HIGH_ENTROPY_BITS


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets with ``[REDACTED:<kind>]``; returns the text and the kinds found, in order."""
    found: list[str] = []

    def replacer(kind: str):
        def replace(match: re.Match) -> str:
            found.append(kind)
            if kind == "password":
                return f"{match.group('user')}:[REDACTED:password]"
            if kind == "secret":
                return f"{match.group('name')}{match.group('quote')}[REDACTED:secret]"
            return f"[REDACTED:{kind}]"

        return replace

    for kind, pattern in SECRET_PATTERNS:
        text = pattern.sub(replacer(kind), text)

    def replace_random(match: re.Match) -> str:
        if not _looks_random(match.group(0)):
            return match.group(0)
        found.append("high_entropy")
        return "[REDACTED:high_entropy]"

    text = HIGH_ENTROPY_CANDIDATE.sub(replace_random, text)
    return text, found


INJECTION_PATTERNS: list[tuple[str, re.Pattern]] = [
    (
        "override previous instructions",
        re.compile(
            r"(?i)\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|any|system)\b"
            r"[^.\n]{0,20}\b(?:instructions?|prompts?|rules|directions|guidelines|context)\b"
        ),
    ),
    (
        "role reassignment",
        re.compile(
            r"(?i)\byou are now (?:a|an|the|my|in|DAN)\b|\byou are no longer (?:a|an|bound|restricted|limited)\b"
            r"|\bpretend (?:to be|you are)\b|\bjailbreak\b|\bDAN mode\b"
        ),
    ),
    (
        "system prompt access",
        re.compile(r"(?i)\b(?:reveal|print|show|repeat|leak)\b[^.\n]{0,30}\bsystem prompt\b"),
    ),
    (
        "tool-call syntax",
        re.compile(
            r"(?i)</?(?:system|assistant|tool_use|tool_call|function_calls?|invoke|parameter|tool_result)\b[^>]*>"
            r"|\"(?:tool_calls?|function_call)\"\s*:"
            r"|\[/?(?:INST|SYSTEM)\]|<\|im_(?:start|end)\|>"
        ),
    ),
    ("hidden instructions to the agent", re.compile(r"(?i)\b(?:new|hidden|secret) instructions?\s*:")),
    (
        "remote code execution",
        re.compile(r"(?i)\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"),
    ),
    (
        "data exfiltration",
        re.compile(
            r"(?i)\b(?:send|post|upload|exfiltrate|forward)\b[^.\n]{0,60}\b(?:secrets?|credentials|tokens?|api keys?|\.env|ssh keys?)\b"
            r"[^.\n]{0,60}\b(?:to|at)\b[^.\n]{0,20}(?:https?://|\b\d{1,3}(?:\.\d{1,3}){3}\b)"
        ),
    ),
]


def injection_reasons(text: str) -> list[str]:
    """Why ``text`` looks like it instructs the agents that will read it (empty when it does not)."""
    return [reason for reason, pattern in INJECTION_PATTERNS if pattern.search(text)]
