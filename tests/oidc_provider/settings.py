"""Settings of the tests' OpenID Connect provider; the test that starts it passes the rest in the
environment (its database, issuer and signing key)."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

SECRET_KEY = os.environ.get("IDP_SECRET_KEY", "the tests' identity provider, never deployed")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "tests.oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ.get("IDP_DATABASE", ":memory:")}
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
# The provider and Memory Lane both run on this machine: cookies of their own names, so neither
# reads the other's session (cookies do not tell ports apart).
SESSION_COOKIE_NAME = "idp_sessionid"
CSRF_COOKIE_NAME = "idp_csrftoken"
LOGIN_URL = "/accounts/login/"
# Its users' passwords are test data; a fast hash keeps seeding quick.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": os.environ.get("IDP_ISSUER", ""),
    "OIDC_RSA_PRIVATE_KEY": os.environ.get("IDP_RSA_PRIVATE_KEY", ""),
    "OAUTH2_VALIDATOR_CLASS": "tests.oidc_provider.validators.GroupsValidator",
    "PKCE_REQUIRED": True,
    "SCOPES": {
        "openid": "Sign you in",
        "profile": "Your name and user name",
        "email": "Your email address",
        "groups": "The groups you belong to",
    },
}
