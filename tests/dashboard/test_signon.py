"""Single sign-on without a browser: the login page's button, the flow's ends when it is off or the
provider fails, and how verified claims find or make the local account (dashboard/signon.py). The
whole flow against a real provider is in test_signon_browser.py."""

from __future__ import annotations

import socket

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from dashboard.models import SignOnIdentity
from dashboard.signon import REFUSAL_ATTRIBUTE, signon_user
from tests.conftest import join

ISSUER = "https://id.acme.test"
GROUP_ROLES = [("platform", "acme", "member"), ("platform-owners", "acme", "owner")]


@pytest.fixture
def signon(settings, team):
    settings.OIDC_ISSUER = ISSUER
    settings.OIDC_PROVIDER_NAME = "Acme ID"
    settings.OIDC_RP_CLIENT_ID = "memory-lane"
    settings.OIDC_GROUP_ROLES = GROUP_ROLES
    return settings


def claims(sub: str = "sub-1", **more) -> dict:
    return {"iss": ISSUER, "sub": sub, **more}


def sign_in(**claim_values):
    request = RequestFactory().get("/oidc/callback/")
    user = signon_user(request, claims=claims(**claim_values))
    return user, getattr(request, REFUSAL_ATTRIBUTE, None)


# --- pages -----------------------------------------------------------------------------------------


def test_the_login_page_offers_no_provider_while_single_sign_on_is_off(db):
    page = Client().get("/login/").content.decode()
    assert "Sign in with" not in page
    assert 'name="username"' in page


def test_the_login_page_offers_the_provider_beside_the_local_form(signon):
    page = Client().get("/login/?next=/memories/").content.decode()
    assert "Sign in with Acme ID" in page
    assert 'href="/oidc/authenticate/?next=/memories/"' in page
    assert 'name="username"' in page


@pytest.mark.parametrize("path", ["/oidc/authenticate/", "/oidc/callback/?code=c&state=s"])
def test_the_flow_answers_404_while_single_sign_on_is_off(db, path):
    assert Client().get(path).status_code == 404


def test_an_unreachable_provider_is_a_page_that_says_so(signon):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        signon.OIDC_ISSUER = f"http://127.0.0.1:{probe.getsockname()[1]}"
    response = Client().get("/oidc/authenticate/")
    assert response.status_code == 502
    assert "Acme ID could not be reached" in response.content.decode()


def test_an_error_from_the_provider_is_a_refusal_page(signon):
    response = Client().get("/oidc/callback/?error=access_denied&state=s")
    assert response.status_code == 403
    assert "Acme ID did not sign you in (access_denied)" in response.content.decode()


def test_an_answer_to_a_sign_in_this_browser_never_started_is_refused(signon):
    client = Client()
    response = client.get("/oidc/callback/?code=c&state=s")
    assert response.status_code == 403
    assert "did not come back as it left" in response.content.decode()
    assert "_auth_user_id" not in client.session


# --- who the claims are ----------------------------------------------------------------------------


def test_a_first_sign_in_makes_an_account_named_after_the_person(signon):
    user, refusal = sign_in(
        preferred_username="alice", email="alice@acme.test", email_verified=True, groups=["platform"]
    )
    assert refusal is None
    assert user.username == "alice" and user.email == "alice@acme.test"
    assert not user.has_usable_password()
    assert SignOnIdentity.objects.get(issuer=ISSUER, subject="sub-1").user == user


def test_the_next_sign_in_finds_the_same_account_by_sub_even_with_a_new_email(signon):
    first, _ = sign_in(
        preferred_username="alice", email="alice@acme.test", email_verified=True, groups=["platform"]
    )
    again, _ = sign_in(
        preferred_username="al", email="al@acme.test", email_verified=True, groups=["platform"]
    )
    assert again == first
    assert SignOnIdentity.objects.get(subject="sub-1").email == "al@acme.test"


def test_a_verified_email_links_the_one_local_account_that_has_it(signon, member):
    member.email = "Mia@Acme.test"
    member.save()
    user, _ = sign_in(
        preferred_username="mia.m", email="mia@acme.test", email_verified=True, groups=["platform"]
    )
    assert user == member
    assert SignOnIdentity.objects.get(subject="sub-1").user == member


def test_a_verified_email_may_come_as_a_string(signon, member):
    member.email = "mia@acme.test"
    member.save()
    user, _ = sign_in(email="mia@acme.test", email_verified="true", groups=["platform"])
    assert user == member


@pytest.mark.parametrize("verified", [False, "false", None])
def test_an_unverified_email_never_links_a_local_account(signon, member, verified):
    member.email = "mia@acme.test"
    member.save()
    user, _ = sign_in(
        preferred_username="mia", email="mia@acme.test", email_verified=verified, groups=["platform"]
    )
    assert user != member
    assert user.username == "mia-2"  # the local name is taken; the new account keeps no unverified email
    assert user.email == ""


def test_an_email_two_local_accounts_share_links_neither(signon, member, owner):
    for user in (member, owner):
        user.email = "shared@acme.test"
        user.save()
    user, _ = sign_in(email="shared@acme.test", email_verified=True, groups=["platform"])
    assert user not in (member, owner)


def test_an_account_linked_to_another_person_of_the_provider_is_not_linked_again(signon, member):
    member.email = "mia@acme.test"
    member.save()
    SignOnIdentity.objects.create(user=member, issuer=ISSUER, subject="someone-else")
    user, _ = sign_in(email="mia@acme.test", email_verified=True, groups=["platform"])
    assert user != member


def test_a_person_with_no_mapped_group_and_no_team_is_refused_and_no_account_is_made(signon):
    before = get_user_model().objects.count()
    user, refusal = sign_in(preferred_username="bob", groups=["contractors"])
    assert user is None
    assert "None of your groups at {provider}" in refusal
    assert get_user_model().objects.count() == before
    assert not SignOnIdentity.objects.exists()


def test_a_person_with_no_mapped_group_who_belongs_to_a_team_signs_in(signon, member, other_team):
    member.email = "mia@acme.test"
    member.save()
    join(member, other_team, "curator")
    user, refusal = sign_in(email="mia@acme.test", email_verified=True, groups=[])
    assert user == member and refusal is None
    # The mapped team (acme) is left; the team the mapping does not name is kept.
    assert dict(member.memberships.values_list("team__slug", "role")) == {"globex": "curator"}


def test_the_groups_claim_name_is_a_setting(signon):
    signon.OIDC_GROUPS_CLAIM = "roles"
    user, _ = sign_in(preferred_username="carol", roles=["platform-owners"], groups=["nothing"])
    assert dict(user.memberships.values_list("team__slug", "role")) == {"acme": "owner"}


def test_an_account_is_named_after_the_sub_when_nothing_else_names_it(signon):
    user, _ = sign_in(sub="00uabc123def456ghi", groups=["platform"])
    assert user.username == "sso-00uabc123def"
