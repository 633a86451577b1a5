"""The memlane client as a teammate without the server installs it: its wheel built from clients/,
installed into a fresh virtual environment (no Django, no torch) without network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.workers import ROOT

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # no venv, no ~/.local/bin: memlane is not on it
MAX_INSTALL_MB = 1.0  # the client is a few Python files


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def megabytes(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def clean_env(**extra: str) -> dict[str, str]:
    """Nothing of the test run's own environment: no venv, no PYTHONPATH, no memlane settings."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("MEMLANE_")}
    return {**env, "PATH": SYSTEM_PATH, **extra}


def standalone_client(work: Path) -> Path:
    """A fresh venv holding only the memlane client, installed from its wheel without network."""
    # Build from a copy: the build writes its scratch folders next to the sources.
    source = work / "clients"
    skip = shutil.ignore_patterns("node_modules", "agents", "build", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "clients", source, ignore=skip)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
        + ["--wheel-dir", str(work / "dist"), str(source)],
        check=True,
        cwd=work,
    )
    built = time.monotonic() - started
    wheel = next((work / "dist").glob("memlane-*.whl"))
    venv = work / "venv"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env(), cwd=work)
    created = time.monotonic() - started
    before = megabytes(site_packages(venv))
    started = time.monotonic()
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", str(wheel)],
        check=True,
        env=clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"),
        cwd=work,
    )
    installed = time.monotonic() - started
    added = megabytes(site_packages(venv)) - before
    print(
        f"\nmemlane client: wheel {wheel.stat().st_size / 1e3:.1f} kB built in {built:.1f} s; "
        f"fresh venv {created:.1f} s; pip install {installed:.1f} s, {added:.2f} MB added to site-packages"
    )
    assert added < MAX_INSTALL_MB
    return venv


def memlane(venv: Path, args: list[str], env: dict, cwd: Path, timeout: float = 60):
    return subprocess.run(
        [str(venv / "bin" / "memlane"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
