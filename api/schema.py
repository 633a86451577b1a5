"""OpenAPI: describe the bearer-token authentication to drf-spectacular."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token from `manage.py create_token` or the dashboard's Tokens page. "
            "A token belongs to one team membership and sees that team only (another team's ids answer "
            "404 like missing ones). Scopes, never above the member's role: read (search, context, list, "
            "export), write (store, feedback, sessions; members, curators, owners), curate (edit, delete, "
            "merge, changed facts; curators and owners). A token limited to projects sees and stores only "
            "memories about them; a store about no project or another one is a 400 naming `entities`.",
        }
