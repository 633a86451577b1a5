"""Dashboard forms: they parse and validate what a person typed; the services hold the rules."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator

from memory.models import (
    Agent,
    Category,
    EntityType,
    ExtractionStatus,
    Maturity,
    Membership,
    MemoryType,
    Priority,
    Scope,
    Signal,
    Status,
    TeamRole,
)


class DashboardForm(forms.Form):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")  # "Type", not "Type:"
        super().__init__(*args, **kwargs)


def _any(choices, label: str = "Any") -> list[tuple[str, str]]:
    return [("", label), *[(value, text.replace("_", " ")) for value, text in choices]]


def split_list(text: str) -> list[str]:
    """ "a, b,,c" → ["a", "b", "c"] (commas or new lines)."""
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


class MemoryFilterForm(DashboardForm):
    q = forms.CharField(label="Search", required=False, max_length=2000)
    type = forms.ChoiceField(label="Type", required=False, choices=_any(MemoryType.choices))
    category = forms.ChoiceField(label="Category", required=False, choices=_any(Category.choices))
    priority = forms.ChoiceField(label="Priority", required=False, choices=_any(Priority.choices))
    maturity = forms.ChoiceField(label="Maturity", required=False, choices=_any(Maturity.choices))
    status = forms.ChoiceField(label="Status", required=False, choices=_any(Status.choices))
    entity = forms.CharField(label="Entity", required=False, max_length=200)

    def __init__(self, *args, curator: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not curator:  # members see active memories only
            del self.fields["status"]


class MemoryEditForm(DashboardForm):
    content = forms.CharField(label="Content", widget=forms.Textarea(attrs={"rows": 5}), max_length=8000)
    memory_type = forms.ChoiceField(label="Type", choices=MemoryType.choices)
    category = forms.ChoiceField(label="Category", choices=Category.choices)
    priority = forms.ChoiceField(label="Priority", choices=Priority.choices)
    tags = forms.CharField(label="Tags", required=False, help_text="Comma-separated.")
    entities = forms.CharField(
        label="Entities", required=False, help_text="Comma-separated slugs, e.g. project:billing-api."
    )

    def __init__(self, *args, memory, **kwargs) -> None:
        # Ids unique per memory: several items may be in edit mode on one page.
        kwargs.setdefault("auto_id", f"edit-{memory.pk.hex[:12]}-%s")
        super().__init__(*args, **kwargs)
        self.fields["content"].widget.attrs["autofocus"] = True

    @classmethod
    def for_memory(cls, memory) -> MemoryEditForm:
        return cls(
            memory=memory,
            initial={
                "content": memory.content,
                "memory_type": memory.memory_type,
                "category": memory.category,
                "priority": memory.priority,
                "tags": ", ".join(memory.tags),
                "entities": ", ".join(m.entity.slug for m in memory.resolved_mentions),
            },
        )

    def changes(self) -> dict:
        data = self.cleaned_data
        return {
            "content": data["content"],
            "memory_type": data["memory_type"],
            "category": data["category"],
            "priority": data["priority"],
            "tags": split_list(data["tags"]),
            "entities": split_list(data["entities"]),
        }


class RejectForm(DashboardForm):
    reason = forms.CharField(label="Reason", required=False, max_length=1000)


class FactChangeForm(DashboardForm):
    action = forms.ChoiceField(
        choices=[("confirm", "Confirm"), ("undo", "Undo"), ("both_true", "Both true")],
        error_messages={
            "required": "Choose Confirm, Undo or Both true.",
            "invalid_choice": "Unknown action.",
        },
    )


class SplitForm(DashboardForm):
    reinforcement = forms.IntegerField(min_value=1, error_messages={"required": "Choose what to split out."})


class RestoreForm(DashboardForm):
    version = forms.IntegerField(min_value=1, error_messages={"required": "Choose a version to restore."})


class DeprecateForm(DashboardForm):
    reason = forms.CharField(label="Reason", max_length=1000, error_messages={"required": "Say why."})


class MergeForm(DashboardForm):
    target = forms.UUIDField(
        label="Merge into", required=False, error_messages={"invalid": "That is not a memory id."}
    )
    target_id = forms.UUIDField(
        label="Or paste a memory id", required=False, error_messages={"invalid": "That is not a memory id."}
    )

    def clean(self) -> dict:
        data = super().clean()
        chosen = data.get("target_id") or data.get("target")
        if not chosen and not self.errors:
            raise forms.ValidationError("Pick the memory to merge into.")
        data["chosen"] = chosen
        return data


class FeedbackForm(DashboardForm):
    signal = forms.ChoiceField(label="Signal", choices=Signal.choices)
    note = forms.CharField(label="Note", required=False, max_length=2000)


class MaturityActionForm(DashboardForm):
    action = forms.ChoiceField(
        choices=[("promote", "Promote"), ("deprecate", "Deprecate"), ("reset", "Reset")]
    )
    reason = forms.CharField(required=False, max_length=1000)


class MentionResolveForm(DashboardForm):
    slug = forms.CharField(
        label="Entity", max_length=200, error_messages={"required": "Pick or type the entity's slug."}
    )


class EntityMergeForm(DashboardForm):
    source = forms.CharField(label="Merge this entity", max_length=200)
    target = forms.CharField(label="into this one", max_length=200)


class AliasesForm(DashboardForm):
    aliases = forms.CharField(label="Aliases", required=False, help_text="Comma-separated.")


class EntityFilterForm(DashboardForm):
    q = forms.CharField(label="Name or slug", required=False, max_length=200)
    type = forms.ChoiceField(label="Type", required=False, choices=_any(EntityType.choices))


class SessionFilterForm(DashboardForm):
    q = forms.CharField(label="Session id", required=False, max_length=200)
    agent = forms.ChoiceField(label="Agent", required=False, choices=_any(Agent.choices))
    extraction = forms.ChoiceField(label="Extraction", required=False, choices=_any(ExtractionStatus.choices))


class ExportForm(DashboardForm):
    project = forms.CharField(
        label="Project",
        required=False,
        max_length=200,
        help_text="Empty: the whole team. A project: its memories plus the team-wide ones.",
    )


class TokenForm(DashboardForm):
    name = forms.CharField(
        label="Name", required=False, max_length=100, help_text="E.g. “laptop claude-code”."
    )
    scopes = forms.MultipleChoiceField(
        label="Scopes",
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[Scope.READ],
        error_messages={"required": "Pick at least one scope."},
    )
    projects = forms.CharField(
        label="Projects",
        required=False,
        max_length=2000,
        help_text="Optional: comma-separated project slugs (project:mobile-app). The token then sees and "
        "writes only those projects. Empty: the whole team.",
    )
    expires_days = forms.IntegerField(
        label="Expires after (days)",
        required=False,
        min_value=1,
        max_value=3650,
        help_text="Empty: never.",
    )

    def __init__(self, *args, allowed_scopes=frozenset(Scope.values), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only the scopes the role allows are offered. The field still accepts every scope, so one
        # above the role reaches token_create, which holds that rule and refuses it (InvalidScopes).
        self.fields["scopes"].widget.choices = [(v, t) for v, t in Scope.choices if v in allowed_scopes]
        self.fields["scopes"].initial = [
            scope for scope in (Scope.READ, Scope.WRITE) if scope in allowed_scopes
        ]

    def clean_projects(self) -> list[str]:
        from memory.services.tokens import InvalidScopes, parse_projects

        try:
            return parse_projects(self.cleaned_data["projects"])
        except InvalidScopes as exc:
            raise forms.ValidationError(str(exc)) from exc


class MemberAddForm(DashboardForm):
    username = forms.CharField(label="Username", max_length=150)
    role = forms.ChoiceField(label="Role", choices=TeamRole.choices, initial=TeamRole.MEMBER)

    def __init__(self, *args, team, **kwargs) -> None:
        kwargs.setdefault("auto_id", "add-%s")
        super().__init__(*args, **kwargs)
        self.team = team

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(f"No user “{username}”. Create one below.")
        if Membership.objects.filter(team=self.team, user=user).exists():
            raise forms.ValidationError(f"{username} is a member already; change their role in the list.")
        return user


class MemberCreateForm(DashboardForm):
    """A new account (username and password) that joins the team at once."""

    username = forms.CharField(
        label="Username",
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="Letters, digits and @/./+/-/_ only.",
    )
    password = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Tell them to change it after their first login.",
    )
    role = forms.ChoiceField(label="Role", choices=TeamRole.choices, initial=TeamRole.MEMBER)

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "create-%s")
        super().__init__(*args, **kwargs)

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(f"A user “{username}” exists already; add them above.")
        return username

    def clean(self) -> dict:
        data = super().clean()
        if data.get("username") and data.get("password"):
            user = get_user_model()(username=data["username"])
            try:
                validate_password(data["password"], user)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data

    def create_user(self):
        return get_user_model().objects.create_user(
            username=self.cleaned_data["username"], password=self.cleaned_data["password"]
        )


class MemberRoleForm(DashboardForm):
    role = forms.ChoiceField(label="Role", choices=TeamRole.choices)
