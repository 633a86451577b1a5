from django.contrib import admin

from memory import models


@admin.register(models.Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = [
        "short_content",
        "kind",
        "memory_type",
        "category",
        "priority",
        "maturity",
        "status",
        "created_at",
    ]
    list_filter = ["kind", "memory_type", "category", "priority", "maturity", "status", "source"]
    search_fields = ["content", "id"]
    readonly_fields = ["content_hash", "embedding", "search_vector", "created_at", "updated_at"]
    raw_id_fields = ["session", "author", "reviewed_by", "superseded_by", "inverted_from", "condensed_into"]
    filter_horizontal = []
    exclude = ["sources"]

    @admin.display(description="content")
    def short_content(self, obj: models.Memory) -> str:
        return obj.content[:80]


@admin.register(models.Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ["slug", "type", "name", "merged_into"]
    list_filter = ["type"]
    search_fields = ["slug", "name", "aliases"]
    raw_id_fields = ["merged_into"]


@admin.register(models.EntityMention)
class EntityMentionAdmin(admin.ModelAdmin):
    list_display = ["raw", "entity", "resolved", "memory"]
    list_filter = ["resolved"]
    raw_id_fields = ["memory", "entity"]


class SessionMessageInline(admin.TabularInline):
    model = models.SessionMessage
    extra = 0


@admin.register(models.Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "user", "agent", "started_at", "implicit_label", "extraction_status"]
    list_filter = ["agent", "implicit_label", "extraction_status"]
    search_fields = ["external_id"]
    raw_id_fields = ["project"]
    inlines = [SessionMessageInline]


@admin.register(models.Recall)
class RecallAdmin(admin.ModelAdmin):
    list_display = ["session", "memory", "rank", "score", "surfaced_at"]
    raw_id_fields = ["session", "memory"]


@admin.register(models.FeedbackEvent)
class FeedbackEventAdmin(admin.ModelAdmin):
    list_display = ["memory", "signal", "value", "source", "user", "created_at"]
    list_filter = ["signal", "source"]
    raw_id_fields = ["memory", "session"]


@admin.register(models.MemoryEvent)
class MemoryEventAdmin(admin.ModelAdmin):
    list_display = ["memory_ref", "action", "actor", "created_at"]
    list_filter = ["action"]
    raw_id_fields = ["memory"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # the audit log is append-only


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "user", "scopes", "last_used_at", "expires_at", "revoked_at"]
    readonly_fields = ["prefix", "key_hash", "last_used_at", "created_at"]
