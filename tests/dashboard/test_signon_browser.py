"""Single sign-on in a real browser against a real OpenID Connect provider.

The provider (tests/oidc_provider/, django-oauth-toolkit) runs in its own process on 127.0.0.1 with
an RS256 key made at its start; Memory Lane is the live server on localhost. Debian's Chromium,
driven by Playwright, clicks "Sign in with …", signs in on the provider's form and comes back: the
tokens are the provider's own, exchanged and checked by mozilla-django-oidc. Nothing is mocked.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from dashboard.models import SignOnIdentity
from memory.models import ApiToken, Membership
from memory.services.tokens import token_create
from tests.dashboard.test_browser import SCREENSHOTS
from tests.oidc_provider.server import running_provider

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PROVIDER_NAME = "Acme ID"
CLIENT_ID = "memory-lane"
CLIENT_SECRET = "the-tests-client-secret"  # the test provider's, made for this test
GROUP_ROLES = [
    ("platform-owners", "acme", "owner"),
    ("platform", "acme", "member"),
    ("readers", "acme", "reader"),
    ("globex-readers", "globex", "reader"),
]
ALICE_PASSWORD = "pw-alice-at-the-provider"


@pytest.fixture(scope="module")
def provider(live_server, tmp_path_factory):
    with running_provider(
        tmp_path_factory.mktemp("oidc-provider"),
        redirect_uri=live_server.url + "/oidc/callback/",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
    ) as provider:
        yield provider


@pytest.fixture
def signon(settings, provider, team, other_team):
    """Memory Lane configured as the environment variables would (memorylane/settings.py)."""
    settings.OIDC_ISSUER = provider.issuer
    settings.OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.OIDC_GROUP_ROLES = GROUP_ROLES
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "dashboard.signon.SignOnBackend"]
    return provider


class Browsing:
    """One browser context (its own cookies), recording CSP violations and script errors."""

    def __init__(self, browser, base: str) -> None:
        self.base = base
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda exc: self.problems.append(str(exc)))
        self.page.on("console", self._console)

    def _console(self, message) -> None:
        failed_load = message.text.startswith("Failed to load resource")  # the refusal page's 403
        if "Content Security Policy" in message.text or (message.type == "error" and not failed_load):
            self.problems.append(message.text)

    def start_signon(self) -> None:
        self.page.goto(self.base + "/login/")
        self.page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()

    def sign_in_at_provider(self, username: str, password: str) -> None:
        expect(self.page.get_by_role("heading", name="Test identity provider")).to_be_visible()
        self.page.get_by_label("Identity provider user name").fill(username)
        self.page.get_by_label("Identity provider password").fill(password)
        self.page.get_by_role("button", name="Sign in to the provider").click()

    def close(self) -> None:
        self.context.close()
        assert self.problems == [], self.problems


@pytest.fixture
def browse(browser, live_server):
    opened: list[Browsing] = []

    def open_() -> Browsing:
        opened.append(Browsing(browser, live_server.url))
        return opened[-1]

    yield open_
    for browsing in opened:
        browsing.close()


def signed_in_as(page, username: str, role: str) -> None:
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    whoami = page.locator(".whoami")
    expect(whoami).to_contain_text(username)
    expect(whoami.locator(".role")).to_have_text(role)


def roles_of(username: str) -> dict[str, str]:
    return dict(Membership.objects.filter(user__username=username).values_list("team__slug", "role"))


def test_a_person_signs_in_through_the_provider_with_the_roles_their_groups_map_to(signon, browse):
    signon.set_user(
        "alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("platform", "globex-readers")
    )
    visit = browse()
    visit.page.goto(visit.base + "/login/")
    # The provider's button beside the local form, which stays.
    expect(visit.page.get_by_label("Username")).to_be_visible()
    expect(visit.page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    visit.page.screenshot(path=SCREENSHOTS / "login-with-sso-laptop.png", full_page=True)

    visit.start_signon()
    visit.sign_in_at_provider("alice", ALICE_PASSWORD)
    signed_in_as(visit.page, "alice", "member")
    # Two mapped teams: the switcher offers both; a member sees no Review or Members pages.
    switcher = visit.page.get_by_label("Team")
    expect(switcher.locator("option")).to_have_text(["Acme", "Globex"])
    expect(visit.page.get_by_role("link", name="Review", exact=True)).to_have_count(0)
    expect(visit.page.get_by_role("link", name="Members", exact=True)).to_have_count(0)
    switcher.select_option("globex")
    visit.page.get_by_role("button", name="Switch").click()
    expect(visit.page.locator(".whoami .role")).to_have_text("reader")

    assert roles_of("alice") == {"acme": "member", "globex": "reader"}
    identity = SignOnIdentity.objects.get(issuer=signon.issuer)
    assert identity.user.username == "alice" and identity.email == "alice@acme.test"
    assert not identity.user.has_usable_password()


def test_a_change_of_groups_at_the_provider_changes_the_role_at_the_next_sign_in(signon, browse, team):
    signon.set_user("alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("readers",))
    first = browse()
    first.start_signon()
    first.sign_in_at_provider("alice", ALICE_PASSWORD)
    signed_in_as(first.page, "alice", "reader")
    alice = get_user_model().objects.get(username="alice")
    token, _ = token_create(user=alice, team=team, scopes=["read"])

    signon.set_user(
        "alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("readers", "platform-owners")
    )
    second = browse()
    second.start_signon()
    second.sign_in_at_provider("alice", ALICE_PASSWORD)
    signed_in_as(second.page, "alice", "owner")
    expect(second.page.get_by_role("link", name="Members", exact=True)).to_be_visible()
    assert roles_of("alice") == {"acme": "owner"}
    assert ApiToken.objects.filter(pk=token.pk).exists()  # a new role keeps the membership's tokens

    # Out of every mapped group, and in no other team: the membership goes, with its tokens.
    signon.set_user("alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("contractors",))
    third = browse()
    third.start_signon()
    third.sign_in_at_provider("alice", ALICE_PASSWORD)
    expect(third.page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(third.page.get_by_role("alert")).to_contain_text("None of your groups")
    assert roles_of("alice") == {}
    assert not ApiToken.objects.filter(pk=token.pk).exists()


def test_a_person_whose_groups_map_to_nothing_and_who_has_no_team_is_refused(signon, browse):
    signon.set_user("bob", password="pw-bob-at-the-provider", email="bob@acme.test", groups=("contractors",))
    visit = browse()
    visit.start_signon()
    visit.sign_in_at_provider("bob", "pw-bob-at-the-provider")
    expect(visit.page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(visit.page.get_by_role("alert")).to_contain_text(f"None of your groups at {PROVIDER_NAME}")
    assert not get_user_model().objects.filter(username="bob").exists()  # no account was made
    visit.page.goto(visit.base + "/")
    assert "/login/" in visit.page.url  # not signed in


def tampered(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    return urlunsplit(parts._replace(query=urlencode({**query, **params})))


@pytest.mark.parametrize("param", ["state", "nonce"])
def test_an_answer_with_a_wrong_state_or_nonce_is_refused(signon, browse, param):
    """The browser starts a sign-in; the request it carries to the provider is changed on the way
    (another state, or another nonce, which the provider then signs into the ID token)."""
    signon.set_user("alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("platform",))
    visit = browse()
    authorize = re.compile(re.escape(signon.issuer + "/authorize/"))
    visit.page.route(authorize, lambda route: route.abort())
    with visit.page.expect_request(authorize) as request:
        visit.start_signon()
    visit.page.unroute(authorize)
    visit.page.goto(tampered(request.value.url, **{param: "chosen-by-an-attacker"}))
    visit.sign_in_at_provider("alice", ALICE_PASSWORD)
    expect(visit.page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(visit.page.get_by_role("alert")).to_contain_text("did not come back as it left")
    visit.page.goto(visit.base + "/")
    assert "/login/" in visit.page.url
    assert not get_user_model().objects.filter(username="alice").exists()


def test_local_accounts_still_log_in_beside_single_sign_on(signon, browse, member):
    visit = browse()
    visit.page.goto(visit.base + "/login/")
    expect(visit.page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()
    visit.page.get_by_label("Username").fill("mia")
    visit.page.get_by_label("Password").fill("pw-mia-12345")
    visit.page.get_by_role("button", name="Log in").click()
    signed_in_as(visit.page, "mia", "member")


def test_a_disabled_account_is_refused(signon, browse):
    signon.set_user("alice", password=ALICE_PASSWORD, email="alice@acme.test", groups=("platform",))
    first = browse()
    first.start_signon()
    first.sign_in_at_provider("alice", ALICE_PASSWORD)
    signed_in_as(first.page, "alice", "member")
    get_user_model().objects.filter(username="alice").update(is_active=False)
    second = browse()
    second.start_signon()
    second.sign_in_at_provider("alice", ALICE_PASSWORD)
    expect(second.page.get_by_role("alert")).to_contain_text("Your account here is disabled")
