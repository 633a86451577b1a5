"""Configuration: built-in defaults < the config file < ``MEMLANE_*`` environment variables.

The config file is ``$MEMLANE_CONFIG``, else ``$XDG_CONFIG_HOME/memlane/config.json``, else
``~/.config/memlane/config.json``: a JSON object with any of the keys of ``DEFAULTS``. Each key
is also read from the environment as ``MEMLANE_<KEY>`` (``MEMLANE_URL``, ``MEMLANE_TOKEN``, …).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Every number the client uses, in one place (README, "Agent integrations").
DEFAULTS: dict[str, object] = {
    "url": "http://127.0.0.1:8000",
    "token": "",
    "project": "",  # empty: project:<name of the working directory>
    "timeout": 3.0,  # seconds a hook or command waits for the server before giving up (fail open)
    "upload_timeout": 30.0,  # seconds per request of the detached transcript uploader
    "upload_retries": 2,  # extra attempts of an upload request when the server is unreachable
    "pending_max_age_days": 7,  # an upload still failing after this long is given up (and logged)
    "batch_size": 500,  # transcript messages per request (the server accepts at most 500)
    "max_messages": 5000,  # messages uploaded per session (the server keeps at most 5000)
    "max_message_chars": 50000,  # longer messages are cut (the server's limit)
    "max_files": 500,  # files_touched per session (the server's limit)
    "context_budget_tokens": 1500,  # SessionStart context block size asked of the server
    "context_max_chars": 9000,  # SessionStart additionalContext is cut to this many characters
    "prompt_budget_tokens": 300,  # UserPromptSubmit recall block size
    "prompt_min_chars": 12,  # shorter prompts ("yes", "go on") get no recall
    "recall_limit": 5,  # results of `memlane recall`
    "harvest_on_session_end": 1,  # 0: SessionEnd does not harvest the Auto Memory notes
    "write_back": 1,  # 0: SessionStart does not write the team block to .claude/rules/
    # The team block's size: Claude Code warns about an instruction file above 40,000 characters
    # (its floor; clients/memlane/writeback.py).
    "write_back_max_chars": 40000,
    "state_dir": "",  # empty: $XDG_STATE_HOME/memlane or ~/.local/state/memlane
}
NUMBERS = {key for key, value in DEFAULTS.items() if isinstance(value, int | float)}


def config_path() -> Path:
    if explicit := os.environ.get("MEMLANE_CONFIG"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memlane" / "config.json"


def read_file(path: Path | None = None) -> dict:
    try:
        data = json.loads((path or config_path()).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load() -> dict:
    config = dict(DEFAULTS)
    config.update({key: value for key, value in read_file().items() if key in DEFAULTS})
    for key in DEFAULTS:
        if (value := os.environ.get(f"MEMLANE_{key.upper()}")) is not None:
            config[key] = value
    for key in NUMBERS:
        try:
            config[key] = type(DEFAULTS[key])(config[key])
        except (TypeError, ValueError):
            config[key] = DEFAULTS[key]
    config["url"] = str(config["url"]).rstrip("/")
    if not config["state_dir"]:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        config["state_dir"] = str(Path(base) / "memlane")
    return config


def write(updates: dict, path: Path | None = None) -> Path:
    """Merge ``updates`` into the config file (created 0600: it holds a token)."""
    path = path or config_path()
    data = {**read_file(path), **updates}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    return path


def project_slug(config: dict, cwd: str | None) -> str:
    """``project:<kebab name>`` of the working directory, unless configured."""
    project = str(config.get("project") or "")
    if not project:
        name = Path(cwd or os.getcwd()).resolve().name
        kebab = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
        while "--" in kebab:
            kebab = kebab.replace("--", "-")
        project = kebab
    if not project:
        return ""
    return project if ":" in project else f"project:{project}"
