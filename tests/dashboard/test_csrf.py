"""Every write needs the CSRF token: a POST without it is refused, the same POST with it is not."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import Memory
from tests.dashboard.test_access import CURATOR_ACTIONS, MEMBER_ACTIONS, OWNER_ACTIONS, form, url

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.fixture
def strict(owner) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    return client


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS + MEMBER_ACTIONS + OWNER_ACTIONS)
def test_a_post_without_the_csrf_token_is_refused(strict, world, path, data):
    response = strict.post(url(path, world), form(data, world))
    assert response.status_code == 403
    assert b"CSRF" in response.content


def test_the_token_in_the_htmx_header_is_accepted(strict, world):
    strict.get("/memories/")  # sets the csrftoken cookie
    token = strict.cookies["csrftoken"].value
    response = strict.post(
        url("/memories/{memory}/feedback/", world),
        {"signal": "helpful"},
        headers={"HX-Request": "true", "X-CSRFToken": token},
    )
    assert response.status_code == 200
    assert Memory.objects.get(pk=world["memory"]).helpful_count == 1


def test_every_page_puts_the_token_in_htmx_headers(strict, world):
    page = strict.get("/memories/").content.decode()
    assert 'hx-headers=\'{"x-csrftoken": "' in page


def test_pages_send_a_strict_content_security_policy(strict, world):
    response = strict.get("/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "<script>" not in response.content.decode()  # no inline script anywhere
