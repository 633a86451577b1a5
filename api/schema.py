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
            "Scopes: read (search, context, list, export), write (store, feedback, sessions), "
            "curate (edit, delete, merge; staff only).",
        }
