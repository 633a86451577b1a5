from django.contrib import admin

from dashboard.models import SignOnIdentity


@admin.register(SignOnIdentity)
class SignOnIdentityAdmin(admin.ModelAdmin):
    """Who signs in through which provider; deleting one unlinks the account (its next sign-in
    creates a new one, or links by a verified email)."""

    list_display = ["user", "issuer", "subject", "email", "last_signed_in_at"]
    search_fields = ["user__username", "subject", "email"]
    readonly_fields = ["issuer", "subject", "email", "created_at", "last_signed_in_at"]
