"""The optional LLM: any OpenAI-compatible chat completions endpoint (``MEMORYLANE_LLM_URL``).

Extraction (§4.8) and reflection (§4.9) ask it for strict JSON. Whatever comes back is untrusted
input: it is parsed and validated like a request body, and any failure — not configured,
unreachable, slow, an HTTP error, text that is not the JSON asked for — raises ``LLMUnavailable``
so the caller runs the deterministic path instead.
"""

from __future__ import annotations

import json
import logging
import re

import httpx
from django.conf import settings

from memory.conf import setting

logger = logging.getLogger(__name__)

FENCE_RE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class LLMUnavailable(Exception):
    """The LLM could not give a usable answer; the message says why."""


def llm_configured() -> bool:
    return bool(settings.LLM_URL)


def completions_url() -> str:
    """``MEMORYLANE_LLM_URL`` is the API base (``http://host:11434/v1``) or the full endpoint."""
    url = settings.LLM_URL.rstrip("/")
    return url if url.endswith("/chat/completions") else f"{url}/chat/completions"


def chat_json(system: str, user: str) -> dict:
    """One chat completion whose answer must be a JSON object. Raises LLMUnavailable."""
    if not llm_configured():
        raise LLMUnavailable("no LLM is configured")
    headers = {"Content-Type": "application/json"}
    if settings.LLM_API_KEY:
        headers["Authorization"] = f"Bearer {settings.LLM_API_KEY}"
    body = {
        "model": settings.LLM_MODEL or "default",
        "temperature": setting("LLM_TEMPERATURE"),
        "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    try:
        response = httpx.post(
            completions_url(), json=body, headers=headers, timeout=setting("LLM_TIMEOUT_SECONDS")
        )
    except httpx.HTTPError as exc:
        raise LLMUnavailable(f"the LLM is unreachable: {exc.__class__.__name__}: {exc}") from exc
    if response.status_code != 200:
        raise LLMUnavailable(f"the LLM answered HTTP {response.status_code}")
    if len(response.content) > setting("LLM_MAX_RESPONSE_CHARS") * 4:
        raise LLMUnavailable("the LLM's answer is too long")
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMUnavailable("the LLM's answer is not a chat completion") from exc
    return parse_json_object(content)


def parse_json_object(content) -> dict:
    """The JSON object in a model's answer (a ```json fence around it is tolerated)."""
    if not isinstance(content, str) or len(content) > setting("LLM_MAX_RESPONSE_CHARS"):
        raise LLMUnavailable("the LLM's answer is not text of a sensible length")
    content = content.strip()
    if match := FENCE_RE.match(content):
        content = match.group(1)
    try:
        value = json.loads(content)
    except ValueError as exc:
        raise LLMUnavailable("the LLM's answer is not JSON") from exc
    if not isinstance(value, dict):
        raise LLMUnavailable("the LLM's answer is not a JSON object")
    return value
