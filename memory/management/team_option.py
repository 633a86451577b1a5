"""The ``--team SLUG`` option of the commands that work on a team's memory (DESIGN.md §11)."""

from __future__ import annotations

from django.core.management.base import CommandError

from memory.models import Team
from memory.services.errors import NotFound
from memory.services.teams import team_get


def add_team_argument(parser, *, every_team: bool) -> None:
    """``--team SLUG``: with ``every_team`` the command works on every team (one after another)
    when it is left out; otherwise it is required when there are several teams."""
    help_text = (
        "The team's slug (default: every team, one after another)."
        if every_team
        else "The team's slug (required when there are several teams; default: the only one)."
    )
    parser.add_argument("--team", default=None, metavar="SLUG", help=help_text)


def team_or_every_team(slug: str | None) -> Team | None:
    """The team named by ``--team``, or None (every team) when it was left out."""
    if slug is None:
        return None
    try:
        return team_get(slug)
    except NotFound as exc:
        raise CommandError(f"no team {slug!r}") from exc


def one_team(slug: str | None) -> Team | None:
    """The team named by ``--team``, or without it the only team there is (None when there is none
    yet); several teams and no ``--team`` is an error that names them."""
    if slug is not None:
        return team_or_every_team(slug)
    teams = list(Team.objects.order_by("slug").values_list("slug", flat=True)[:50])
    if len(teams) > 1:
        raise CommandError(f"there are several teams; name one with --team: {', '.join(teams)}")
    return Team.objects.get(slug=teams[0]) if teams else None
