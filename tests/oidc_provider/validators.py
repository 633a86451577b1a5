from __future__ import annotations

from oauth2_provider.oauth2_validators import OAuth2Validator


class GroupsValidator(OAuth2Validator):
    """Standard claims from the Django user, and its groups' names in ``groups`` (scope ``groups``).
    Every email counts as verified: this provider's accounts are made by the tests."""

    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "groups"}

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "email": user.email,
            "email_verified": True,
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
