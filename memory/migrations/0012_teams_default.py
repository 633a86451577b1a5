"""Put everything that exists into the team ``default`` (DESIGN.md §11): every row of every
team-owned table, every user as a member (staff as owners, the others as members), every token bound
to its user's membership. Nothing is created on an empty database: ``make run`` creates the team
with its admin as owner."""

from django.conf import settings
from django.db import migrations

TEAM_OWNED = (
    "Memory",
    "Entity",
    "EntityMention",
    "Session",
    "SessionMessage",
    "Recall",
    "FeedbackEvent",
    "MemoryEvent",
    "FactChange",
    "TaskRun",
)


def into_default(apps, schema_editor):
    Team = apps.get_model("memory", "Team")
    Membership = apps.get_model("memory", "Membership")
    ApiToken = apps.get_model("memory", "ApiToken")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    has_rows = User.objects.exists() or any(
        apps.get_model("memory", name).objects.exists() for name in TEAM_OWNED
    )
    if not has_rows:
        return
    team, _ = Team.objects.get_or_create(slug="default", defaults={"name": "Default"})
    for name in TEAM_OWNED:
        apps.get_model("memory", name).objects.filter(team__isnull=True).update(team=team)
    for user in User.objects.all():
        Membership.objects.get_or_create(
            user=user, team=team, defaults={"role": "owner" if user.is_staff else "member"}
        )
    for token in ApiToken.objects.filter(membership__isnull=True):
        token.membership = Membership.objects.get(user_id=token.user_id, team=team)
        token.save(update_fields=["membership"])


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_teams"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [migrations.RunPython(into_default, migrations.RunPython.noop)]
