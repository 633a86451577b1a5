"""`make run` on an empty home: the team ``default`` exists with ``admin`` as its owner (DESIGN.md §11)."""

from __future__ import annotations

from memory.models import Membership
from memorylane.runner import ensure_admin


def test_ensure_admin_makes_admin_the_owner_of_the_default_team(db, monkeypatch, capsys):
    monkeypatch.setenv("MEMORYLANE_ADMIN_PASSWORD", "pw-admin-12345")
    ensure_admin()
    ensure_admin()
    (membership,) = Membership.objects.select_related("user", "team")
    assert (membership.user.username, membership.team.slug, membership.role) == ("admin", "default", "owner")


def test_ensure_admin_gives_an_upgraded_admin_without_a_team_the_default_one(django_user_model, capsys):
    django_user_model.objects.create_superuser(username="root", password="pw-root-12345")
    ensure_admin()
    assert Membership.objects.get().role == "owner"
