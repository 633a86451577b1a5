"""Start the tests' OpenID Connect provider in its own process (Django's runserver on a free port of
127.0.0.1, its own SQLite database) and wait until it serves its discovery document."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.workers import stop

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "tests.oidc_provider.settings"
HOST = "127.0.0.1"  # Memory Lane's live server is "localhost": another site, so other cookies
RSA_KEY_BITS = 2048
RSA_PUBLIC_EXPONENT = 65537
START_TIMEOUT_SECONDS = 60
POLL_SECONDS = 0.2
STOP_TIMEOUT_SECONDS = 10
COMMAND_TIMEOUT_SECONDS = 120


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str
    env: dict[str, str]
    log: Path

    def manage(self, *args: str) -> None:
        """Run one of the provider's management commands against its database."""
        subprocess.run(
            [sys.executable, "-m", "django", *args],
            env=self.env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )

    def set_user(
        self, username: str, *, password: str, email: str = "", groups: tuple[str, ...] = ()
    ) -> None:
        """Create the provider's user, or change their password, email and groups."""
        self.manage(
            "idp_user", username, "--password", password, "--email", email, "--groups", ",".join(groups)
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def private_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=RSA_PUBLIC_EXPONENT, key_size=RSA_KEY_BITS)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@contextmanager
def running_provider(
    workdir: Path, *, redirect_uri: str, client_id: str, client_secret: str
) -> Iterator[Provider]:
    port = free_port()
    issuer = f"http://{HOST}:{port}/o"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "PYTHONPATH": str(ROOT),
        "IDP_DATABASE": str(workdir / "idp.sqlite3"),
        "IDP_ISSUER": issuer,
        "IDP_RSA_PRIVATE_KEY": private_key_pem(),
    }
    provider = Provider(issuer, client_id, client_secret, env, workdir / "idp.log")
    provider.manage("migrate", "--noinput")
    provider.manage(
        "idp_client",
        "--client-id",
        client_id,
        "--client-secret",
        client_secret,
        "--redirect-uri",
        redirect_uri,
    )
    with provider.log.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "django", "runserver", "--noreload", f"{HOST}:{port}"],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_for_discovery(issuer, process, provider.log)
            yield provider
        finally:
            stop(process, timeout=STOP_TIMEOUT_SECONDS)


def _wait_for_discovery(issuer: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the OpenID Connect provider exited: {log.read_text()}")
        try:
            if requests.get(issuer + "/.well-known/openid-configuration", timeout=POLL_SECONDS * 5).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"the OpenID Connect provider did not start: {log.read_text()}")
