"""Django settings for Memory Lane.

Configuration is environment variables (the table in README.md). Every rule's number lives in
``MEMORY_LANE`` below; ``MEMORYLANE_CONFIG`` may name a JSON file whose keys override it.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from memorylane import embedded

BASE_DIR = Path(__file__).resolve().parent.parent
VERSION = "0.1.0"


def envbool(name: str, default: str = "false") -> bool:
    value = os.environ.get(name, default).strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: str) -> int:
    value = os.environ.get(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


# memory.models.TeamRole's values, which the settings cannot import (tests/memorylane/test_signon_settings.py).
TEAM_ROLES = ("owner", "curator", "member", "reader")


def env_group_roles(name: str) -> list[tuple[str, str, str]]:
    """``group=team:role,group=team:role`` → ``[(group, team, role), ...]``. A group may be named
    more than once (one group, several teams); a group name may hold ``=`` but not ``,``."""
    rules = []
    for item in os.environ.get(name, "").split(","):
        if not item.strip():
            continue
        group, equals, target = item.strip().rpartition("=")
        team, colon, role = target.partition(":")
        group, team, role = group.strip(), team.strip(), role.strip()
        if not (group and equals and team and colon and role in TEAM_ROLES):
            raise ImproperlyConfigured(
                f"{name}: {item.strip()!r} is not group=team:role with a role of {', '.join(TEAM_ROLES)}"
            )
        rules.append((group, team, role))
    return rules


def parse_database_url(url: str) -> dict:
    """``postgresql://user:password@host:port/name?host=/socket/dir`` → a Django DATABASES entry."""
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgresql:// URL, not {parsed.scheme!r}")
    query: dict = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
    host = query.pop("host", None) or unquote(parsed.hostname or "")
    port = query.pop("port", None) or (str(parsed.port) if parsed.port else "")
    # The web process runs Django on a fixed pool of threads (memorylane/asgi.py), so a connection
    # kept per thread (CONN_MAX_AGE; make run's processes keep theirs 300 s) is reused; a pool shares
    # at most DATABASE_POOL_SIZE connections between a process's threads instead.
    if pool_size := envint("DATABASE_POOL_SIZE", "0"):
        query["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": 30}
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": host,
        "PORT": port,
        "OPTIONS": query,
        "CONN_MAX_AGE": 0 if pool_size else envint("DATABASE_CONN_MAX_AGE", "0"),
        "CONN_HEALTH_CHECKS": True,
    }


MEMORYLANE_HOME = embedded.home()
# The name this machine goes by in extraction claims and worker names ("host:pid", worker@host): two
# runners on one machine (the scale-out drill) set different ones; default the machine's host name.
MEMORYLANE_HOST = os.environ.get("MEMORYLANE_HOST", "").strip() or socket.gethostname()


def _secret_key() -> str:
    if key := os.environ.get("DJANGO_SECRET_KEY"):
        return key
    path = MEMORYLANE_HOME / "secret_key"
    if not path.exists():
        # O_EXCL: two processes starting at once must not each write a different key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("DJANGO_DEBUG")
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "csp",
    "memory",
    "api",
    "dashboard",
]

MIDDLEWARE = [
    "memorylane.middleware.TeamWallMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "api.middleware.BodySizeLimitMiddleware",
    "memorylane.middleware.DatabaseUnavailableMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "memorylane.urls"
WSGI_APPLICATION = "memorylane.wsgi.application"
ASGI_APPLICATION = "memorylane.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.context_processors.navigation",
            ],
        },
    },
]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = MEMORYLANE_HOME / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files are served by WhiteNoise straight from the finders, so no collectstatic is needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

CSRF_FAILURE_VIEW = "memorylane.views.csrf_failure"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# Single sign-on through OpenID Connect (docs/teams.md), off while MEMORYLANE_OIDC_ISSUER is unset;
# local accounts always work. mozilla-django-oidc reads the OIDC_* names; the provider's endpoints
# come from its discovery document, fetched when a sign-in first needs them (dashboard/signon.py).
OIDC_ISSUER = os.environ.get("MEMORYLANE_OIDC_ISSUER", "").strip().rstrip("/")
OIDC_PROVIDER_NAME = os.environ.get("MEMORYLANE_OIDC_PROVIDER_NAME", "").strip() or "single sign-on"
OIDC_RP_CLIENT_ID = os.environ.get("MEMORYLANE_OIDC_CLIENT_ID", "").strip()
OIDC_RP_CLIENT_SECRET = os.environ.get("MEMORYLANE_OIDC_CLIENT_SECRET", "")
OIDC_RP_SCOPES = os.environ.get("MEMORYLANE_OIDC_SCOPES", "openid email profile").strip()
OIDC_RP_SIGN_ALGO = os.environ.get("MEMORYLANE_OIDC_SIGN_ALGO", "RS256").strip()
OIDC_GROUPS_CLAIM = os.environ.get("MEMORYLANE_OIDC_GROUPS_CLAIM", "groups").strip()
OIDC_GROUP_ROLES = env_group_roles("MEMORYLANE_OIDC_GROUP_ROLES")
OIDC_TIMEOUT = envint("MEMORYLANE_OIDC_TIMEOUT_SECONDS", "10")  # each call to the provider
OIDC_USE_PKCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "dashboard:signon_callback"
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
if OIDC_ISSUER:
    if not OIDC_RP_CLIENT_ID:
        raise ImproperlyConfigured("MEMORYLANE_OIDC_ISSUER is set: set MEMORYLANE_OIDC_CLIENT_ID too")
    AUTHENTICATION_BACKENDS.append("dashboard.signon.SignOnBackend")

# Security defaults; the production compose file sets DJANGO_SECURE=true behind TLS.
SECURE = envbool("DJANGO_SECURE")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
SECURE_SSL_REDIRECT = SECURE
SECURE_HSTS_SECONDS = 31536000 if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE
SECURE_HSTS_PRELOAD = SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("MEMORYLANE_MAX_BODY_BYTES", str(1024 * 1024))

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.LimitedJSONParser"],
    # An Accept header the API cannot satisfy gets JSON, not a 406 (api/negotiation.py).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.JSONWhateverAccepted",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "api.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.TokenRateThrottle"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # `format` is the context endpoint's own parameter (markdown|json), not a renderer override.
    "URL_FORMAT_OVERRIDE": None,
}

if REDIS_URL := os.environ.get("REDIS_URL", ""):
    # Shared by every web process, so throttling counts a token's requests across all of them.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Lane API",
    "DESCRIPTION": "Team memory for AI coding agents.",
    "VERSION": VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and the docs page are public, so a new user can read them before holding a token.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "memory.models.MemoryType",
        "EntityTypeEnum": "memory.models.EntityType",
        "MemoryStatusEnum": "memory.models.Status",
        "MaturityEnum": "memory.models.Maturity",
        "MemorySourceEnum": "memory.models.Source",
        "FeedbackSourceEnum": "memory.models.FeedbackSource",
        "FactChangeKindEnum": "memory.models.FactChangeKind",
        "MemoryKindEnum": "memory.models.Kind",
        "ReviewStatusEnum": [("active", "active"), ("rejected", "rejected")],
        "MaturityActionEnum": [("proven", "proven"), ("deprecated", "deprecated"), ("reset", "reset")],
    },
}

# --- Celery -------------------------------------------------------------------------------------
BROKER_DIR = MEMORYLANE_HOME / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    # kombu's filesystem transport (made atomic in memorylane/broker.py): a broker that needs no server.
    for sub in ("queue", "processed", "control", "results"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT = "memorylane.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{BROKER_DIR / 'results'}"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_EXPIRES = 3600
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(MEMORYLANE_HOME / "celerybeat-schedule")
# CELERY_BEAT_SCHEDULE is set at the end, from MEMORY_LANE's *_EVERY_SECONDS.

# --- Embeddings and the optional LLM --------------------------------------------------------------
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
EMBEDDING_MODEL = os.environ.get("MEMORYLANE_EMBEDDING_MODEL", "")  # empty: the packaged MiniLM
LLM_URL = os.environ.get("MEMORYLANE_LLM_URL", "")
LLM_MODEL = os.environ.get("MEMORYLANE_LLM_MODEL", "")
LLM_API_KEY = os.environ.get("MEMORYLANE_LLM_API_KEY", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Secrets never reach a log line either (DESIGN.md §8).
    "filters": {"redact": {"()": "memory.services.redaction.RedactingFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

# --- The rule book (DESIGN.md §4): every number a rule uses ------------------------------------
MEMORY_LANE: dict = {
    "EMBEDDING_DIMENSIONS": 384,
    # Texts per model call. Smaller calls keep the model's working memory in the CPU's cache: 16
    # took 25% less CPU than 64 on one thread and a third less time on two, with the same vectors
    # (bench/HISTORY.md, stop 36).
    "EMBEDDING_BATCH_SIZE": 16,
    "EMBEDDING_BACKEND": "onnx",  # onnx (the model exported once, run by onnxruntime) | torch
    # Threads per web process serving Django (memorylane/asgi.py); the processes are WEB_CONCURRENCY.
    "WEB_THREADS": envint("MEMORYLANE_WEB_THREADS", "4"),
    # Each web and worker process loads the models, the screens and the lexicons in the background as
    # it starts (memory/services/warmup.py) instead of at its first request or task.
    "WARM_UP": True,
    # onnxruntime's threads per model call of at least EMBEDDING_PARALLEL_MIN_TEXTS texts (a batch
    # store, an extraction); 0 lets it take one per core. A smaller call (a query, a store) runs on
    # one thread: split across two, it cost 10–30% more CPU (bench/HISTORY.md, stop 27).
    "EMBEDDING_THREADS": envint("MEMORYLANE_EMBEDDING_THREADS", "0"),
    "EMBEDDING_PARALLEL_MIN_TEXTS": 16,
    # A batch store embeds its items in chunks of this many on background threads and looks up,
    # decides and inserts each chunk while the model embeds the next (memory/embeddings.py
    # ChunkedEncoding). Below EMBEDDING_PARALLEL_MIN_TEXTS a chunk runs on one onnxruntime thread
    # (bench/HISTORY.md, stop 31).
    "EMBEDDING_PIPELINE_CHUNK": 10,
    # Threads per process running those chunks, each on a one-thread session: with two, the model
    # takes both cores while the batch waits on the database (bench/HISTORY.md, stop 34).
    "EMBEDDING_PIPELINE_THREADS": envint("MEMORYLANE_EMBEDDING_PIPELINE_THREADS", "2"),
    # §4.1 taxonomy
    "TYPE_WEIGHTS": {
        "correction": 1.0,
        "decision": 1.0,
        "commitment": 1.0,
        "insight": 0.7,
        "learning": 0.7,
        "confidence": 0.7,
        "pattern_seed": 0.4,
        "cross_agent": 0.4,
        "workflow_note": 0.4,
        "gap": 0.4,
    },
    "HALF_LIFE_DAYS": {"critical": 180, "moderate": 90, "ephemeral": 14},
    "DEFAULT_TYPE": "insight",
    "DEFAULT_CATEGORY": "workflow",
    "DEFAULT_PRIORITY": "moderate",
    "DEFAULT_CONFIDENCE": 70,
    # §4.2 entities
    "ENTITY_PROJECT_ROOTS": ["packages", "apps"],
    "ENTITY_SOURCE_ROOTS": ["src", "lib", "app"],
    "ENTITY_GENERIC_DIRS": [
        "features",
        "feature",
        "components",
        "component",
        "utils",
        "util",
        "common",
        "shared",
        "lib",
        "libs",
        "tests",
        "test",
        "__tests__",
        "spec",
        "src",
        "app",
        "core",
        "helpers",
        "internal",
        "modules",
        "pages",
        "routes",
        "hooks",
        "types",
        "services",
        "api",
        "config",
    ],
    # §4.3 store
    "MAX_CONTENT_CHARS": 8000,
    "NOOP_JACCARD": 0.8,
    "NOOP_COSINE": 0.95,
    "UPDATE_COSINE": 0.85,
    # The upsert decision (memory/services/upsert/). Memories whose entities of one of these types are
    # disjoint (another project, person…) are never duplicates of each other.
    "UPSERT_SCOPE_ENTITY_TYPES": ["project", "person", "business", "feature", "other"],
    "UPSERT_NEIGHBOURS": 8,  # nearest memories of a compatible scope each new memory is compared with
    # A text whose content-bearing tokens are all the same, in the same roles, is the same fact from this
    # cosine up (an identical reading, ordinary words included).
    "UPSERT_SAME_TOKENS_COSINE": 0.65,
    # Between texts not both in Latin script the model's cosine vouches for a rewording or a changed fact
    # only when they share at least this share of their words (memory/services/language.py).
    "UPSERT_OTHER_LANGUAGE_JACCARD": 0.5,
    # From this cosine up, a rewording whose only differences are in ordinary words (verbs, adverbs, a
    # detail added) and that keeps every strong token, the polarity, the scope and the roles is the same
    # fact (a NOOP that reinforces). 0.75 until stop 54; at 0.70 two more dev paraphrases and one test
    # paraphrase were reinforced and no near-but-different pair of either split became a NOOP (0.65 gained
    # four dev paraphrases more, also with none: not taken, the labeled pairs hold few other facts on a topic).
    "UPSERT_REWORDED_COSINE": 0.70,
    # Below UPDATE_COSINE, a rewording that names more than this many things the other text does not is
    # another fact on the same topic (ADD), not the same fact reworded.
    "UPSERT_REWORDED_THINGS": 2,
    # At most this many ordinary words replaced on each side is a substitution ("the platform team" →
    # "the payments team"): a changed fact when the words replaced are nouns on both sides.
    "UPSERT_SUBSTITUTION_WORDS": 2,
    "REVIEW_CHANGED_FACTS_SHOWN": 5,  # changed facts at the top of the review queue's "All" tab
    # Governed change (memory/services/governance.py): a non-curator's change of settled knowledge is a
    # proposal; it takes effect when a curator confirms it or this many distinct people propose it.
    "PROPOSAL_CONFIRMATIONS": 2,
    # Words that are content-bearing even though they look like function words: swapping one for another
    # in its group changes the fact. The first word of a group is what its synonyms map to. An entry is
    # a pole: words joined by "|" are one pole ("increase|raise" → "decrease|lower" is an exchange,
    # "raise" → "increase" is not); a word may stand in several groups ("lower").
    "UPSERT_CONTRAST_GROUPS": [
        ["before", "after"],
        ["enable", "enabled", "disable", "disabled"],
        ["on", "off"],
        ["enable|enabled|on", "disable|disabled|off"],  # "stay enabled" / "be switched off"
        ["allow", "allowed", "deny", "denied", "block", "blocked"],
        ["allowlist", "denylist", "blocklist", "whitelist", "blacklist"],
        ["read", "write"],
        ["approved", "rejected"],
        ["staging", "production", "development", "test", "qa", "preview", "local"],
        ["server", "client"],
        ["source", "target", "destination"],
        ["sender", "receiver", "recipient"],
        ["primary", "secondary", "standby", "replica"],
        ["least", "most", "minimum", "maximum", "min", "max"],
        ["more", "less", "fewer"],
        ["larger", "smaller"],
        ["longer", "shorter"],
        ["higher", "lower"],
        ["earlier", "later"],
        ["newer", "older"],
        ["stricter", "looser"],
        ["strict", "loose", "lenient"],
        ["inbound", "outbound"],
        ["ingress", "egress"],
        ["hourly", "daily", "nightly", "weekly", "biweekly", "monthly", "quarterly", "yearly", "annually"],
        ["usually", "often", "sometimes", "rarely", "occasionally"],
        ["true", "false"],
        ["up", "down"],
        ["first", "last"],
        ["upper", "lower", "uppercase", "lowercase"],
        ["sync", "async", "synchronous", "asynchronous"],
        ["public", "private", "internal", "external"],
        ["ascending", "descending", "asc", "desc"],
        ["inclusive", "exclusive"],
        ["start", "end", "stop"],
        ["open", "closed", "close"],
        ["push", "pull"],
        ["import", "export"],
        ["input", "output"],
        ["left", "right"],
        ["above", "below", "over", "under"],
        ["increase|raise|bump", "decrease|lower|reduce"],
        ["add", "remove", "delete"],
        ["include", "exclude", "omit"],
        ["grant", "revoke"],
        ["accept", "reject"],
        ["encrypt", "decrypt"],
        ["may", "optional"],
        ["old", "new", "legacy"],
        ["major", "minor", "patch"],
        ["out", "inside", "outside"],
    ],
    # Opposite qualities: one said under a negation is the other ("short-lived" ≡ "not … long",
    # memory/services/upsert/compare/antonyms.py).
    "UPSERT_ANTONYMS": [
        ["short", "long"],
        ["small", "large"],
        ["small", "big"],
        ["few", "many"],
        ["fast", "slow"],
        ["low", "high"],
        ["early", "late"],
        ["cheap", "expensive"],
        ["narrow", "wide"],
        ["thin", "thick"],
        ["temporary", "permanent"],
    ],
    # Words (and their light stems) that say the same thing; the first of a group is the canonical one.
    "UPSERT_SYNONYMS": [
        ["production", "prod", "live"],
        ["development", "dev"],
        ["staging", "stage", "stg"],
        ["use", "utilize", "utilise", "employ"],
        ["run", "execute", "invoke"],
        ["fast", "quick", "speedy"],
        ["large", "big", "huge"],
        ["larger", "bigger", "greater"],
        ["longer", "slower"],
        ["shorter", "faster", "quicker"],
        ["small", "little", "tiny"],
        ["begin", "commence"],
        ["repository", "repo"],
        ["database", "db"],
        ["environment", "env"],
        ["configuration", "config", "settings"],
        ["documentation", "docs", "doc"],
        ["application", "app"],
        ["directory", "folder", "dir"],
        ["kubernetes", "k8s"],
        ["end-to-end", "e2e"],
        ["postgres", "postgresql", "pg"],
        ["javascript", "js"],
        ["typescript", "ts"],
        ["need", "require", "requires", "needs"],
        ["fix", "repair", "resolve"],
        ["break", "crash"],
        ["check", "verify", "confirm"],
        ["show", "display"],
        ["change", "modify", "alter"],
        ["error", "failure"],
        ["wrong", "incorrect"],
        ["correct", "accurate"],
        ["prefer", "favor", "favour"],
        ["manually", "manual", "hand"],
        ["old", "stale", "outdated", "unused"],
        ["latest", "newest"],
        ["startup", "boot"],
        ["ephemeral", "throwaway", "disposable", "temporary"],
        ["approval", "sign-off", "signoff"],
        ["current", "up-to-date"],
        ["delete", "remove", "drop"],
        ["ticket", "issue"],
        ["reply", "answer", "response"],
        ["inbound", "incoming"],
        ["outbound", "outgoing"],
        ["bug", "defect"],
        ["flag", "toggle"],
        ["restart", "reboot", "bounce"],
        ["purge", "clear", "wipe", "flush"],
        ["credentials", "creds"],
        # A bound said by its noun: "a minimum of 2 approvals" ≡ "at least 2", "max 5 retries" ≡ "at most 5".
        ["least", "minimum", "min"],
        ["most", "maximum", "max"],
        ["endpoint", "route"],
        ["notify", "alert", "ping"],
        ["allowlist", "whitelist"],
        ["denylist", "blocklist", "blacklist"],
    ],
    # Contrast words that are mostly prepositions or particles: one on one side only ("on the last day",
    # "bring the stack up") is no change — an exchange ("up" → "down") still is. Any other contrast word
    # on one side only ("optional", "all", "production") is a changed fact.
    "UPSERT_PREPOSITION_CONTRASTS": ["on", "over", "under", "above", "below", "up", "down", "off", "out"],
    # A word with one of these before it says the opposite ("safe" / "unsafe", "allowed" / "disallowed").
    "UPSERT_NEGATING_PREFIXES": ["un", "non", "in", "im", "dis"],
    # Words of obligation: "must" ≡ "always" ≡ "make sure" ≡ "is required to" ≡ "should" — a rule reworded,
    # not another fact. They are read as nothing (a permission — "may", "optional" — is a contrast word).
    "UPSERT_MODAL_WORDS": [
        "must",
        "always",
        "should",
        "shall",
        "ensure",
        "required",
        "mandatory",
        "compulsory",
        "need",
        "needs",
    ],
    # Verbs that carry no fact of their own ("use X" ≡ "X is what we go with"): read as nothing.
    "UPSERT_LIGHT_VERBS": [
        *["use", "go", "take", "bring", "put", "act", "serve", "make", "have"],
        *["goes", "went", "gone", "took", "taken", "brought", "made"],  # forms the stemmer does not reach
    ],
    # Words that narrow a rule (the word → its kind): one side saying "only" or "except" and the other not
    # is a changed scope.
    "UPSERT_SCOPE_WORDS": {
        "only": "only",
        "solely": "only",
        "exclusively": "only",
        "alone": "only",  # "a tag alone is not enough" ≡ "not only by tag"
        "except": "except",
        "excluding": "except",
        "besides": "except",
    },
    # Words that narrow a rule only before a thing — a determiner or a preposition — and are filler before a
    # verb: "just the staging env" ≡ "only the staging env", "just run it" ≡ "run it".
    "UPSERT_SCOPE_WORDS_BEFORE_THINGS": {"just": "only"},
    # Quantifiers (the word → its kind). "every service" ≡ "services"; "all teams" vs "some teams", or "all
    # actions" vs "admin actions", is a changed scope.
    "UPSERT_QUANTIFIERS": {
        "all": "all",
        "every": "all",
        "each": "all",
        "any": "all",
        "some": "some",
        "several": "some",
        "certain": "some",
        "no": "all",  # "no deploy ships without a plan" ≡ "every deploy needs a plan"
    },
    # A clause holding one of these rejects what it names ("Flower is deprecated; use Grafana").
    "UPSERT_REJECTION_WORDS": [
        "deprecated",
        "discouraged",
        "forbidden",
        "banned",
        "obsolete",
        "dropped",
        "retired",
        "abandoned",
        "prohibited",
        "disallowed",
    ],
    # Verbs of leaving undone count as a negation (any form): "skip the tests" ≡ "don't run the tests", and
    # "don't forget to tag it" ≡ "tag it" (two negations).
    # Failing and refusing too: "fails to start" ≡ "doesn't start", "the build fails" ≡ "fails to build".
    "UPSERT_OMISSION_VERBS": [
        *["forget", "forgot", "forgotten", "neglect", "skip", "omit", "lack", "refrain"],
        *["fail", "refuse", "decline"],
    ],
    # Closing something off, as an act or a state, in either voice, is a negation: "main is frozen for
    # merges" ≡ "nobody merges to main", "block inbound traffic" ≡ "inbound traffic is blocked by the
    # firewall"; "locked" against "open" is a flipped rule. Not the forms in -ing, which qualify a thing
    # ("blocking writes" against "non-blocking writes").
    "UPSERT_CLOSING_WORDS": [
        *["block", "blocks", "blocked", "lock", "locks", "locked"],
        *["freeze", "freezes", "froze", "frozen"],
    ],
    # Words that say "without" before a determiner: "PRs missing a ticket" ≡ "PRs without a ticket".
    "UPSERT_PRIVATIVE_WORDS": ["missing", "minus"],
    # "out of" or "away from" after one of these verbs is a negation: "keep tokens out of the logs" ≡ "never
    # put tokens in the logs", "X must stay out of Y" ≡ "X is never in Y".
    "UPSERT_KEEPING_VERBS": [
        *["keep", "keeps", "kept", "keeping", "stay", "stays", "stayed", "staying"],
        *["leave", "leaves", "left", "leaving", "remain", "remains", "remained", "hold", "holds", "held"],
    ],
    # A phrase opened by one of these bounds the rule in time: said on one side only, the scope changed
    # ("production deploys need approval" → "production deploys during business hours need approval").
    "UPSERT_CONDITION_PREPOSITIONS": ["during", "outside"],
    # A condition said on one side only ("rotate the keys when a partner has production access" / "for
    # every partner") changes the scope when it names at least this many things the other side does not
    # (one is as often a rewording: "when the phone regains connectivity" / "once it is online").
    "UPSERT_CONDITION_THINGS": 2,
    # Kinds of thing a name is of: said after a name both texts give ("the ml-notebooks repo" /
    # "ml-notebooks", "the develop branch" / "develop") they add nothing (compare/words.py).
    "UPSERT_KIND_NOUNS": [
        *["repository", "repo", "branch", "environment", "env", "service", "app", "application"],
        *["project", "codebase", "package", "library", "module", "cluster", "channel", "bucket"],
    ],
    # Words for a group of people: the agent is the word before ("the data team reviews…" → data;
    # memory/services/upsert/agents.py).
    "UPSERT_GROUP_NOUNS": ["team", "group", "squad", "crew", "folks", "org", "department", "guild"],
    # Verbs that name one action when who does what is compared (the first of a group stands for it):
    # "the server stores it" / "it is kept by the server", "requested by product" / "product asks for".
    "UPSERT_ACTION_SYNONYMS": [
        ["store", "keep", "retain", "persist", "hold"],
        ["request", "ask"],
        ["read", "consume"],
        ["write", "produce"],
        ["approve", "sign"],
    ],
    # Nouns of assent: who gives one ("sign-off from the finance lead", "approval by legal") is its agent,
    # read first as the subject of "the finance lead approves" (memory/services/upsert/reading.py).
    "UPSERT_ASSENT_NOUNS": [
        *["approval", "sign-off", "signoff", "review", "confirmation", "consent", "permission"],
        *["authorization", "authorisation", "go-ahead", "ack", "acknowledgement", "ok"],
    ],
    # People in general: a rule of theirs is a rule of everyone ("engineers never push to main" ≡ "nobody
    # pushes to main"); any other subject against "nobody"/"anyone" is a narrower rule ("interns …").
    "UPSERT_GENERIC_PEOPLE": [
        *["engineer", "developer", "dev", "people", "person", "folk", "member", "staff", "employee"],
        *["contributor", "teammate", "colleague", "user", "human"],
    ],
    # "over" rejects what follows it after one of these verbs ("prefer X over Y").
    "UPSERT_PREFERENCE_VERBS": ["prefer", "favor", "favour", "choose", "pick", "select"],
    # Verbs whose object (or passive subject) gives way to something else: "replace X with Y" rejects X.
    # Not "substitute", whose object is the newcomer ("substitute Y for X").
    "UPSERT_REPLACING_VERBS": ["replace", "swap", "supersede"],
    # Words that start another clause (besides punctuation, and "and"/"or" before a new subject).
    "UPSERT_CLAUSE_WORDS": [
        "while",
        "whereas",
        "but",
        "then",
        "although",
        "though",
        "when",
        "whenever",
        "if",
        "unless",
        "because",
        "so",
        "once",
    ],
    # Words that give what follows them a role (source/target, first/second…): the word → its relation.
    "UPSERT_RELATIONS": {
        "before": "before",
        "after": "after",
        "than": "than",
        "from": "from",
        "to": "to",
        "into": "to",
        "onto": "to",
        "then": "then",
        "until": "until",
        "vs": "versus",
        "versus": "versus",
    },
    # Prepositions that open a verb's object ("the app depends on the framework", "waits for the lock"):
    # who does that action is read as for a direct object (memory/services/upsert/agents.py), and the
    # action is the verb with its preposition.
    "UPSERT_OBJECT_PREPOSITIONS": ["on", "upon", "for", "at", "with", "about"],
    # Relations that say the same read from either end (regular expressions, case-insensitive): two
    # things traded places around one of them are the same fact ("never run the backup alongside the
    # reindex" ≡ "the reindex must not run alongside the backup"). "share … with" only of a thing held
    # jointly ("share a database with", not "shares its tokens with"). Not a relation ending in a word of
    # UPSERT_RELATIONS ("isolated from", "next to"): what those point at is compared as a frame.
    "UPSERT_SYMMETRIC_RELATIONS": [
        r"\balongside\b",
        r"\b(?:in parallel|concurrently|simultaneously|at the same time)\s+(?:with|as)\b",
        r"\bshar(?:e|es|ed|ing)\s+(?:a|an|one|the same|any|no)\b[\w\s-]*?\bwith\b",
        r"\b(?:coexist|collide|conflict|clash|overlap|interfere)(?:s|ed|ing)?\s+with\b",
        r"\b(?:compatible|incompatible|interchangeable|in sync)\s+with\b",
        r"\bthe same\b[\w\s-]*?\bas\b",  # "on the same disk as"
        r"\bbeside\b",
    ],
    # A negation before a comparative in one clause reads as a bound: "no user gets more than one" ≡ "at most
    # one".
    "UPSERT_NEGATED_COMPARATIVES": {
        "more than": "most",
        "longer than": "most",
        "less than": "least",
        "fewer than": "least",
        "over #": "most",  # a strict bound already read as one word ("not more than 3" → "not over 3")
        "under #": "least",
        "until": "after",  # "can't ship until QA signs off" ≡ "ship after QA signs off"
    },
    # Phrases read as one word before tokens are compared ("make sure" = "ensure"). A replacement is at
    # most as long as its phrase; a phrase ending in " #" is read so only before a number.
    "UPSERT_PHRASES": [
        ["make sure", "ensure"],
        ["in order to", "to"],
        ["as well as", "and"],
        ["no later than", "most"],  # before "later than": "no later than 30 days after" ≡ "within 30 days of"
        ["off-limits", "forbidden"],  # "the holdout set is off-limits for training" ≡ "never train on it"
        ["allowed to", "may"],  # a permission in words: "are allowed to silence" ≡ "may silence"
        ["permitted to", "may"],
        ["reserved to", "only"],
        ["not just", "not only"],  # "not just the source IP" ≡ "the source IP alone is never enough"
        ["prior to", "before"],
        ["ahead of", "before"],
        ["later than", "after"],
        ["do not", "don't"],
        ["does not", "doesn't"],
        ["is not", "isn't"],
        ["are not", "aren't"],
        ["can not", "cannot"],
        ["must not", "mustn't"],
        ["should not", "shouldn't"],
        ["will not", "won't"],
        ["not even", "even"],
        ["or not", "or"],  # "encrypted or not": whichever, no negation
        ["instead of", "insteadof"],
        ["rather than", "insteadof"],
        ["in place of", "insteadof"],
        ["free of", "without"],  # "logs must be free of PII" ≡ "logs must not contain PII"
        ["no longer than", "most"],  # "live no longer than three days" ≡ "at most three days"
        ["no longer", "not"],
        ["may not", "mustn't"],  # a permission denied is a prohibition
        ["half an hour", "30 minutes"],  # "in under half an hour" ≡ "within 30 minutes"
        ["half a minute", "30 seconds"],
        ["half a day", "12 hours"],
        ["half a year", "6 months"],
        ["only one", "single"],  # "hosts that serve only one tenant" ≡ "single-tenant hosts"
        # "nobody except admins" ≡ "only admins" (before "no one else", whose words they share)
        ["nobody except", "only"],
        ["no one except", "only"],
        ["nobody but", "only"],
        ["no one but", "only"],
        ["nobody other than", "only"],
        ["no one other than", "only"],
        ["none but", "only"],
        ["no one else", "only"],
        ["nobody else", "only"],
        ["nothing else", "only"],
        ["no other", "only"],
        ["a minimum of", "least"],  # "for a maximum of 90 days" ≡ "for at most 90 days"
        ["a maximum of", "most"],
        ["at least", "least"],
        ["at most", "most"],
        # A bound after its number ("48 hours or more" ≡ "at least 48 hours").
        ["# or more", "least"],
        ["# or longer", "least"],
        ["# or higher", "least"],
        ["# or above", "least"],
        ["# or later", "least"],
        ["# or newer", "least"],
        ["# or less", "most"],
        ["# or fewer", "most"],
        ["# or shorter", "most"],
        ["# or lower", "most"],
        ["# or below", "most"],
        ["# or earlier", "most"],
        ["# or older", "most"],
        ["no more than", "most"],
        ["not more than", "most"],
        ["capped at", "most"],
        ["limited to #", "most"],
        ["limited to", "only"],
        ["restricted to", "only"],  # "write access is restricted to the deploy role" ≡ "only the deploy role"
        ["reserved for", "only"],
        ["up to #", "most"],
        ["within #", "most"],  # "merged within three days" ≡ "at most three days"
        ["inside #", "most"],
        ["in under #", "most"],  # "a reply in under 15 minutes" ≡ "within 15 minutes"
        ["out of", "from"],
        ["by hand", "manually"],
        ["a no-go", "banned"],  # "flashing over a USB hub is a no-go" ≡ "don't flash over USB hubs"
        ["most recent", "last"],  # "the two most recent versions" ≡ "the last two versions"
        ["single sign-on", "SSO"],  # "single" reads as an article ("a single replica"): its initial is lost
        ["single sign on", "SSO"],
        ["acts as", "is"],
        ["serves as", "is"],
        ["is required to", "must"],
        ["are required to", "must"],
        ["needs to", "must"],
        ["need to", "must"],
        ["has to", "must"],
        ["have to", "must"],
        ["every day", "daily"],
        ["each day", "daily"],
        ["in a day", "daily"],
        ["every week", "weekly"],
        ["each week", "weekly"],
        ["every month", "monthly"],
        ["each month", "monthly"],
        ["every hour", "hourly"],
        ["each hour", "hourly"],
        ["every night", "nightly"],
        ["each night", "nightly"],
        ["every quarter", "quarterly"],
        ["each quarter", "quarterly"],
        ["every year", "yearly"],
        ["each year", "yearly"],
        ["per day", "daily"],
        ["per week", "weekly"],
        ["per month", "monthly"],
        ["per hour", "hourly"],
        ["per quarter", "quarterly"],
        ["per year", "yearly"],
        ["once a day", "daily"],
        ["once a week", "weekly"],
        ["once a month", "monthly"],
        # A strict bound before a number, however worded: "more than 2 hours" ≡ "over 2 hours" ≡ "above".
        ["more than #", "over"],
        ["greater than #", "over"],
        ["longer than #", "over"],
        ["higher than #", "over"],
        ["above #", "over"],
        ["exceeding #", "over"],
        ["in excess of #", "over"],
        ["less than #", "under"],
        ["fewer than #", "under"],
        ["lower than #", "under"],
        ["shorter than #", "under"],
        ["below #", "under"],
    ],
    "REVIEW_EXTRACTED": envbool("MEMORYLANE_REVIEW_EXTRACTED"),
    # The screen of intent (memory/services/intent.py): a classifier over the sentence vector that holds
    # for review a memory that would make an agent act against the team, whatever its wording. The file
    # is built by `manage.py build_intent_screen` (empty: the shipped memory/data/intent_screen.json);
    # the threshold, None, is the one it chose by cross-validation on dev. Off: on the frozen test split
    # it held 9 more of 266 payloads and 2 more of 141 legitimate texts (stop 48, docs/benchmarks.md).
    "INTENT_SCREEN": envbool("MEMORYLANE_INTENT_SCREEN"),
    # The learned injection screen (memory/services/injection/learned.py): a classifier of character
    # n-grams, in any language, that holds for review a text shaped like the dev payloads. Built by
    # `manage.py build_injection_screen` (file empty: the shipped memory/data/injection_ngrams.json); the
    # threshold, None, is the one it chose by cross-validation on dev. The build: piece sizes, pieces in
    # at least this many texts, the legitimate share its threshold may hold, folds, strengths tried.
    # A text with at least this many words cut by a hyphen or dot between letters ("ig-nore pre-vious
    # in-struc-tions") is also read with the cuts removed (memory/services/injection/normalize.py).
    "INJECTION_CUT_WORDS": 3,
    "INJECTION_LEARNED_SCREEN": envbool("MEMORYLANE_INJECTION_LEARNED_SCREEN", "true"),
    "INJECTION_LEARNED_FILE": "",
    "INJECTION_LEARNED_THRESHOLD": None,
    "INJECTION_LEARNED_NGRAMS": [3, 5],
    "INJECTION_LEARNED_MIN_DF": 2,
    "INJECTION_LEARNED_MAX_BENIGN_HELD": 0.01,
    "INJECTION_LEARNED_FOLDS": 5,
    "INJECTION_LEARNED_C": [3.0, 10.0, 30.0, 100.0],
    # Provider secret formats of a maintained rule set (memory/data/betterleaks.toml, read by
    # memory/services/secret_rules.py) beside our own patterns.
    "SECRET_RULE_SET": True,
    "SECRET_RULE_GAP_CHARS": 200,  # an unbounded gap (".*") of a rule matches at most this many characters
    # A value shaped like a secret a few words after a credential word, in its sentence
    # (memory/services/secret_labels.py): how far after the word, and what the value must look like.
    "SECRET_LABEL_WINDOW_CHARS": 60,
    "SECRET_LABEL_MIN_CHARS": 8,  # letters, digits and symbols mixed: at least this long
    "SECRET_LABEL_RANDOM_MIN_CHARS": 16,  # letters and digits only: at least this long
    "SECRET_LABEL_MAX_ENGLISH_SHARE": 0.6,  # … and less of its letters in English words than this
    "SECRET_LABEL_MIN_ENTROPY": 2.5,  # bits per character below which a value is a placeholder (0000…)
    "SECRET_LABEL_MAX_WORDY": 3.5,  # … and runs of letters this short on average (random keys ~2)
    "SECRET_LABEL_DIGIT_SHARE": 0.125,  # … or this share of digits at least
    "SECRET_LABEL_NO_DIGITS_MAX_WORDY": 2.5,  # with no digit: mixed case in shorter runs still
    "SECRET_LABEL_NO_DIGITS_MIN_ENTROPY": 3.5,  # … and at least this many bits per character
    "INTENT_SCREEN_FILE": "",
    "INTENT_SCREEN_THRESHOLD": None,
    # The model reads English (memory/services/language.py): a text reads as English when at least this
    # share of its words are common English words. The screen of intent judges only those, and the upsert
    # lets a cosine vouch for a rewording only between them.
    "ENGLISH_TEXT_SHARE": 0.25,
    "LATIN_SCRIPT_SHARE": 0.5,  # a text is in Latin script when at least this share of its letters are
    "ENGLISH_TEXT_WORDS": (
        "the a an and or but if then else of to in on at by for from with without into onto over under "
        "is are was were be been being do does did done have has had will would can could should must may "
        "might shall not no never always all any every each some this that these those it its they them "
        "their we our us you your he she his her i me my who what when where which why how there here "
        "as so than too very just only also before after again once now use run make keep set add get put "
        "please ignore forget instead rather new rule rules other agent assistant"
    ),
    # The build: the benign share held for review the threshold may cost in cross-validation, its folds,
    # and the regularization strengths tried.
    "INTENT_SCREEN_MAX_BENIGN_HELD": 0.01,
    "INTENT_SCREEN_FOLDS": 5,
    "INTENT_SCREEN_C": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
    "MAX_TAGS": 20,
    "MAX_ENTITIES": 20,
    "MAX_BATCH": 100,
    # API limits
    "API_THROTTLE_RATE": os.environ.get("MEMORYLANE_THROTTLE_RATE", "600/min"),
    "API_PAGE_SIZE": 20,
    "API_MAX_PAGE_SIZE": 100,
    # §4.4 search
    "SEARCH_DEFAULT_LIMIT": 10,
    "SEARCH_MAX_LIMIT": 50,
    "SEARCH_CANDIDATES_MIN": 50,
    "SEARCH_CANDIDATES_PER_RESULT": 5,
    # Fusion of similarity and BM25 into the base relevance (memory/services/search/fusion.py,
    # README "Ranking"): adaptive = α × min-max similarity + (1 − α) × BM25 / best BM25, α by what the
    # question looks like.
    # DESIGN.md's RRF (k = 60) and the older similarity + coverage bonus measured worse (README).
    "FUSION_METHOD": "adaptive",  # adaptive | convex | absolute | rrf | bonus (README "Ranking")
    "FUSION_ALPHA": 0.5,  # convex: the weight of the normalised similarity (the rest is normalised BM25)
    "FUSION_ALPHA_MAX": 0.9,  # adaptive: the similarity weight when no memory matches the query's words
    "FUSION_ALPHA_MIN": 0.35,  # adaptive: … when one matches all of them
    # adaptive: alpha falls from MAX at the first coverage to MIN at the second (a memory has every word)
    "FUSION_COVERAGE_RANGE": [0.4, 1.0],
    "FUSION_NAME_MIN_COVERAGE": 0.2,  # adaptive: a name counts when the best word match covers this much
    "FUSION_MIN_SPREAD": 0.2,  # adaptive/convex: similarities are normalised over at least this range
    "RRF_K": 60,  # rrf
    "ENTITY_MATCH_BOOST": 1.2,  # a memory about an entity the question names, in the one ordering
    "LEXICAL_WEIGHT": 0.1,  # bonus: similarity + LEXICAL_WEIGHT × coverage^LEXICAL_COVERAGE_POWER
    "LEXICAL_COVERAGE_POWER": 2,
    # Vector-only candidates below this similarity are dropped (lexical matches pass). DESIGN.md: 0.50 and
    # 0.40; MiniLM scores questions against statements lower, and those floors dropped relevant memories.
    "SIMILARITY_FLOOR": 0.2,
    "SIMILARITY_FLOOR_ENTITY": -1.0,  # no floor: the caller asked for this entity's memories
    # The second stage (memory/services/search/rerank.py, docs/ranking.md): a cross-encoder over the
    # most relevant candidates. Off by default: it lifts LoCoMo but costs ~10 ms of CPU per candidate.
    "RERANK_ENABLED": False,
    "RERANK_CANDIDATES": 30,  # the candidates of highest fused relevance it reads
    # With the late-interaction stage on too: 0, the cross-encoder takes its place; N, it rereads only
    # the first N of the late stage's order (docs/ranking.md, "The cross-encoder after the late stage").
    "RERANK_AFTER_LATE": 0,
    # Only questions whose fusion leans on words (α at most this; FUSION_ALPHA_MIN): on paraphrases
    # (α high) the cross-encoder ordered worse than meaning alone.
    "RERANK_MAX_ALPHA": 0.35,
    "RERANK_WEIGHT": 1.0,  # the model's share of their new relevance (the rest: the fused relevance)
    "RERANK_MAX_TOKENS": 256,  # question and memory together, truncated to this many tokens
    "RERANK_BATCH": 16,  # pairs per model call, grouped by length
    "RERANK_THREADS": 0,  # onnxruntime threads (0: one per core)
    "RERANK_MODEL": "",  # a directory with model.onnx and tokenizer.json; "" = the packaged one
    # The late-interaction stage (memory/services/search/late.py, docs/ranking.md): each memory read
    # once into token vectors, kept; a question's tokens scored against the candidates' (MaxSim).
    "LATE_RERANK_ENABLED": True,
    "LATE_RERANK_CANDIDATES": 50,  # the candidates of highest fused relevance it reorders (all of N at limit 10)
    "LATE_RERANK_MAX_ALPHA": 0.35,  # only questions whose fusion leans on words, as the cross-encoder
    "LATE_DIMENSIONS": 192,  # the first this many of the model's 384 per token (kept 8-bit)
    "LATE_MAX_TOKENS": 256,  # a memory's text truncated to this many tokens
    "LATE_QUESTION_TOKENS": 64,  # a question's
    "LATE_BATCH": 16,  # texts per model call, grouped by length
    "LATE_THREADS": 0,  # onnxruntime threads (0: one per core)
    "LATE_MODEL": "",  # a directory with model.onnx and tokenizer.json; "" = the packaged one
    # A search computes at most this many candidates' missing vectors (~3 ms each on two cores); with
    # more missing (a fresh import) it keeps those and leaves the first stage's order.
    "LATE_COMPUTE_PER_SEARCH": 8,
    "LATE_VECTORS_EVERY_SECONDS": 60,  # beat: compute the vectors no search has needed yet
    "LATE_VECTORS_PER_RUN": 5000,  # memories per run, newest first (~4 ms each on two cores)
    "INTENT_BOOST": 1.3,  # DESIGN.md: 1.15; 1.3 measured better on intent queries and no worse elsewhere
    # final = relevance × Π factor^exponent. Type weight and decay at full strength cost recall and MRR on
    # every query kind; they stay in the explain and in context/export standing, not in search order.
    "RANKING_EXPONENTS": {
        "type_weight": 0.0,
        "intent_boost": 1.0,
        "feedback_score": 1.0,
        "decay": 0.0,
        "maturity_multiplier": 1.0,
    },
    "INTENT_CUES": {
        "correction": ["mistake", "wrong", "error", "bug"],
        "gap": ["mistake", "wrong", "error", "bug"],
        "decision": ["decided", "chose", "choice", "why did we"],
        "pattern_seed": ["pattern", "usually", "habit"],
        "commitment": ["pattern", "usually", "habit", "always", "never", "prefer"],
        "learning": ["learned", "lesson", "til"],
        "insight": ["learned", "lesson", "til"],
    },
    # Memories are short statements: weak length normalisation (b) and early term saturation (k1)
    # measured best on LoCoMo (recall@10 0.637 -> 0.660) and changed nothing on the coding sets.
    "BM25_K1": 0.9,
    "BM25_B": 0.3,
    "HNSW_EF_SEARCH": 100,
    # Bounded work per query at scale (README "Capacity"). A query whose words are held by more memories than
    # LEXICAL_SCAN_ROWS scores only those holding all of its words and those holding its rarest ones (up
    # to this many each), with corpus-wide document frequencies; below it every match is scored.
    "LEXICAL_SCAN_ROWS": 2000,
    # … and when even its rarest word is held by more than that (its scan a sample of them), that scan
    # is skipped if the memories holding every word fill the candidate list.
    "LEXICAL_SKIP_SAMPLED_RAREST": True,
    # Up to this many words in a question, BM25 reads each word's count in a memory from ts_rank (a
    # test per word and row); a longer question unnests each matched memory's words instead. The same
    # scores either way; the cheaper one by the question's length (bench/HISTORY.md, stop 33).
    "LEXICAL_RANK_COUNT_MAX_WORDS": 30,
    # The planner's price of an operator (PostgreSQL's cpu_operator_cost, 0.0025 by default) while it
    # plans the bounded lexical statement: at the default, testing the words on every row of the table
    # looked cheaper than the GIN index (search._word_index_plans; bench/HISTORY.md, stop 34).
    "LEXICAL_PLAN_CPU_OPERATOR_COST": 0.02,
    "LEXICAL_STATS_SECONDS": 300,  # corpus size, average length and lexeme counts are kept this long per process
    "LEXICAL_STATS_EXACT_ROWS": 100_000,  # up to this many memories they are counted; above, estimated and sampled
    "LEXICAL_DF_COUNT_MAX": 100_000,  # a lexeme's count stops here (pg_stats estimates the common ones)
    # A filtered vector search scans the filter's rows exactly when the planner expects at most this many;
    # above, HNSW with ef_search raised so that VECTOR_OVERFETCH × the candidates needed pass the filter.
    # A scan the lexical list shows stranded runs again at HNSW_EF_SEARCH_MAX, then exactly up to
    # VECTOR_EXACT_MAX_ROWS rows (search.rescued_vector_candidates).
    "VECTOR_EXACT_MAX_ROWS": 10_000,
    # The planner's price of a page read out of order (PostgreSQL's random_page_cost, 4 by default,
    # which assumes a disk) while it plans an exact vector scan: at 4 it read the whole table to pick
    # a filter's few percent (search._exact_scan_plans; bench/HISTORY.md, stop 38).
    "VECTOR_EXACT_RANDOM_PAGE_COST": 1.1,
    "VECTOR_OVERFETCH": 2.0,
    "HNSW_EF_SEARCH_MAX": 1000,  # pgvector's own limit
    # Stranded (search.vector_list_stranded): the words found a memory more similar than the scan's best,
    # or at least this many, and this share of the list, more similar than its least similar.
    "VECTOR_STRANDED_MISSES": 3,
    "VECTOR_STRANDED_SHARE": 0.05,
    "ENTITY_INDEX_SECONDS": 60,  # the name index of entity detection is rebuilt at least this often per process
    # §4.5 feedback and maturity
    "HELPFUL_MULTIPLIER": 1.1,
    "HARMFUL_MULTIPLIER": 0.5,
    "IMPLICIT_HARMFUL_MULTIPLIER": 0.7,
    "SCORE_MIN": 0.05,
    "SCORE_MAX": 5.0,
    "FEEDBACK_HALF_LIFE_DAYS": 90,
    "MATURITY_MIN_EVENTS": 3,
    # Promotion beyond candidate (and so into the export) needs helpful feedback from this many distinct
    # people, or a curator's review: one token cannot vote a memory into every teammate's MEMORY.md.
    "MATURITY_MIN_VOTERS": 2,
    "PROVEN_MIN_HELPFUL": 5,
    "PROVEN_MAX_HARMFUL_RATIO": 0.15,
    "DEPRECATE_HARMFUL_RATIO": 0.30,
    "MATURITY_MULTIPLIERS": {"candidate": 0.5, "established": 1.0, "proven": 1.5, "deprecated": 0.0},
    "INVERSION_HARMFUL_RATIO": 0.60,
    "PRESCRIPTIVE_TYPES": ["decision", "commitment", "pattern_seed", "workflow_note"],
    # sessions
    "MAX_MESSAGES_PER_REQUEST": 500,
    "MAX_MESSAGE_CHARS": 50_000,
    "MAX_SESSION_MESSAGES": 5000,
    # §4.6 implicit feedback
    "OUTCOME_DURATION_MINUTES": [5, 30],
    "OUTCOME_DURATION_SCORES": [1.0, 0.6, 0.2],
    "OUTCOME_ERROR_BOUNDS": [0, 2],
    "OUTCOME_ERROR_SCORES": [1.0, 0.6, 0.2],
    "OUTCOME_RETRY_SCORES": [1.0, 0.7, 0.3],
    "OUTCOME_WEIGHTS": {"success": 0.4, "duration": 0.2, "errors": 0.2, "retries": 0.2},
    "OUTCOME_HELPFUL_AT": 0.7,
    "OUTCOME_HARMFUL_AT": 0.4,
    # §4.7 decay
    "DECAY_EVERY_SECONDS": 7 * 24 * 3600,
    "STALE_HALF_LIVES": 2,
    # §4.8 extraction (the memory catcher)
    "EXTRACTION_BASE_CONFIDENCE": 70,
    "EXTRACTION_TYPE_BONUS": {"correction": 15, "decision": 10, "insight": 5, "commitment": 15, "gap": 10},
    "EXTRACTION_FAST_SECONDS": 30,  # a session shorter than this adds EXTRACTION_FAST_BONUS
    "EXTRACTION_FAST_BONUS": 10,
    "EXTRACTION_EVIDENCE_PHRASES": 2,  # more cue phrases than this add EXTRACTION_EVIDENCE_BONUS
    "EXTRACTION_EVIDENCE_BONUS": 15,
    "EXTRACTION_MAX_CANDIDATES": 30,
    "EXTRACTION_SENTENCE_CHARS": [20, 600],
    "EXTRACTION_SOURCE_CHUNK_CHARS": 1500,
    # Two candidates of one session are one lesson when this share of the shorter one's content words is
    # in the other (the assistant's root cause and the user's rule about it).
    "EXTRACTION_SAME_LESSON_OVERLAP": 0.6,
    # A candidate this close (cosine) to a live memory of its scope, with no number, version, name, path,
    # identifier, negation or order that differs (none replaced by another, whatever kind each is read
    # as) and no contrast word or "all"/"every" on one side only, is a lesson the team already has: it
    # reinforces it.
    "EXTRACTION_SAME_LESSON_COSINE": 0.68,
    # A finding ("the root cause was…") this close to a rule of the same session is said by the rule.
    "EXTRACTION_FINDING_COVERED_COSINE": 0.5,
    # Two candidates of one session this close are one lesson told twice (the rule, then the agent's
    # report of applying it): one is stored.
    "EXTRACTION_SAME_SESSION_COSINE": 0.7,
    "EXTRACTION_CUES": {
        # Correction cues count in user turns only; the others in user and assistant turns.
        "correction": [
            r"^(no|nope)\b[,.!]",
            r"\bdon'?t\b",
            r"\bdo not\b",
            r"\bthat'?s (wrong|not right)\b",
            r"\bactually\b",
            r"\binstead\b",
            r"\bstop\b",
        ],
        "commitment": [r"\balways\b", r"\bnever\b", r"\bfrom now on\b", r"\bmake sure\b", r"\bprefer\b"],
        "decision": [
            r"\bwe decided\b",
            r"\blet'?s go with\b",
            r"\bchose\b",
            r"\bdecided to\b",
            r"\b\w+ instead of \w+\b",
        ],
        "insight": [r"\bturns out\b", r"\broot cause\b", r"\bthe problem was\b", r"\bthe issue was\b"],
        "gap": [r"\bnot supported\b", r"\bmissing\b", r"\black(s|ing)?\b"],
    },
    # From the outcome (summary and evaluation), checked in this order.
    "EXTRACTION_OUTCOME_CUES": {
        "insight": [r"\bunexpected(ly)?\b", r"\bdiscovered\b"],
        "commitment": [r"\balways\b", r"\bnever\b", r"\bprefer\b"],
        "gap": [r"\bmissing\b", r"\blacking\b"],
    },
    "EXTRACTION_CONFIG_FILES": [
        r"(^|/)(pyproject\.toml|setup\.cfg|package\.json|tsconfig[^/]*\.json|Dockerfile|docker-compose[^/]*\.ya?ml"
        r"|Makefile|\.env[^/]*|[^/]*\.(ini|toml|ya?ml|conf|cfg))$",
        r"(^|/)(config|settings|\.github)/",
    ],
    "EXTRACTION_TYPE_CATEGORY": {
        "correction": "gotcha",
        "commitment": "convention",
        "decision": "architecture",
        "insight": "gotcha",
        "gap": "workflow",
    },
    "EXTRACTION_DEBUGGING_CUES": [
        r"\berror\b",
        r"\btraceback\b",
        r"\bexception\b",
        r"\bstack trace\b",
        r"\bfail(s|ed|ing)?\b",
        r"\bbug\b",
    ],
    # Retries of transient failures (database, embedder, disk): exponential backoff with jitter.
    "EXTRACTION_MAX_ATTEMPTS": 4,
    "EXTRACTION_RETRY_BASE_SECONDS": 5,
    "EXTRACTION_RETRY_MAX_SECONDS": 300,
    # A claim is a lease: the worker renews it every HEARTBEAT seconds while it works; a lease not renewed
    # for LEASE seconds (its worker died or hung) is taken over by any worker on any host.
    "EXTRACTION_LEASE_SECONDS": 30,
    "EXTRACTION_HEARTBEAT_SECONDS": 10,
    # A run still going after this long stops renewing its lease, so a hung extraction is taken over.
    "EXTRACTION_MAX_RUN_SECONDS": 600,
    # A failure because the database is unreachable spends no attempt and is retried this often.
    "EXTRACTION_OUTAGE_RETRY_SECONDS": 10,
    "EXTRACTION_SWEEP_SECONDS": 60,  # how often beat looks for lost or expired extractions
    "EXTRACTION_LOST_AFTER_SECONDS": 60,  # an ended session still pending this long after its task was due
    # §2 `make run` supervision (memorylane/supervision.py): a part that dies is restarted after
    # BACKOFF_INITIAL seconds, doubling up to BACKOFF_MAX while it keeps failing quickly (within
    # STABLE_SECONDS of its start); more than CRASH_LOOP_FAILURES quick failures in a row and the runner
    # gives up on it (web or database: everything stops; worker or beat: health says degraded).
    "RUNNER_BACKOFF_INITIAL_SECONDS": 1.0,
    "RUNNER_BACKOFF_MAX_SECONDS": 30.0,
    "RUNNER_CRASH_LOOP_FAILURES": 5,
    "RUNNER_STABLE_SECONDS": 10.0,
    "RUNNER_STOP_TIMEOUT_SECONDS": 15.0,  # per part, before SIGKILL
    "RUNNER_POLL_SECONDS": 0.2,  # how often the runner looks at its parts
    # How long make run's processes keep a database connection (DATABASE_CONN_MAX_AGE when unset).
    "RUNNER_CONN_MAX_AGE_SECONDS": 300,
    # uvicorn processes under make run when WEB_CONCURRENCY is unset: one process's threads share one
    # interpreter lock, and on two cores two processes answered a third more requests under load.
    "RUNNER_WEB_PROCESSES": 2,
    # A database outage answers 503 SERVICE_UNAVAILABLE with this Retry-After (API, /mcp, dashboard, health).
    "DATABASE_RETRY_AFTER_SECONDS": 5,
    # The embedded PostgreSQL's own settings (ALTER SYSTEM, applied by the process that starts it;
    # a changed shared_buffers restarts it once). PostgreSQL's default of 128MB holds a quarter of a
    # 100,000-memory table with its indexes (512 MB); 1GB holds all of it.
    "EMBEDDED_POSTGRES_SETTINGS": {"shared_buffers": "1GB"},
    # Requests act for their team under PostgreSQL row-level security (migration 0014, the second
    # wall; docs/teams.md). The search's candidate statements, each written around the team's
    # memories, run as the tables' owner (teams.as_table_owner): under a policy PostgreSQL does not
    # use the GIN index for their words. Off only where the database account may not create roles.
    "ROW_LEVEL_SECURITY": True,
    # A team's own search indexes (memory.services.team_indexes, docs/capacity.md): in a deployment of
    # several teams, a team of at least MIN memories gets a partial HNSW and GIN index of its own; it
    # keeps them until it falls below KEEP. Checked (and the answer cached per process) every EVERY.
    "TEAM_INDEX_MIN_MEMORIES": 5000,
    "TEAM_INDEX_KEEP_MEMORIES": 2500,
    "TEAM_INDEX_EVERY_SECONDS": 600,
    # manage.py export_data / import_data: rows per written batch.
    "BACKUP_BATCH_SIZE": 500,
    # The optional LLM (MEMORYLANE_LLM_URL, OpenAI-compatible chat completions)
    "LLM_TIMEOUT_SECONDS": 60,
    "LLM_WINDOW_TOKENS": 4000,
    "LLM_MAX_MEMORIES_PER_WINDOW": 10,
    "LLM_MAX_RESPONSE_CHARS": 50_000,
    "LLM_TEMPERATURE": 0.0,
    # §4.9 reflection
    "REFLECTION_EVERY_SECONDS": 24 * 3600,
    "REFLECTION_WINDOW_DAYS": 7,
    "REFLECTION_CLUSTER_COSINE": 0.75,
    "REFLECTION_MIN_CLUSTER": 2,
    "REFLECTION_MERGE_JACCARD": 0.8,
    "REFLECTION_MERGE_COSINE": 0.9,
    "REFLECTION_MAX_OBSERVATIONS": 20_000,  # per run, newest first
    # Task health (/api/v1/health): a backlog older than this, or a daily job this late, is reported.
    "TASK_BACKLOG_WARN_SECONDS": 600,
    "TASK_LATE_FACTOR": 2,  # a periodic job not finished within this many periods is "late"
    # §4.10 context and export
    "CONTEXT_BUDGET_TOKENS": 1500,
    "CHARS_PER_TOKEN": 4,
    "CONTEXT_SEARCH_LIMIT": 20,
    "EXPORT_MIN_SCORE": 0.5,
    "EXPORT_CATEGORY_QUOTA": 15,
    "EXPORT_ANTI_PATTERN_QUOTA": 15,
    # §7 the MCP server at /mcp: stateless JSON responses, so any web process answers any request
    "MCP_STATELESS": True,
    "MCP_JSON_RESPONSE": True,
    "MCP_AGENT_NAME": "mcp",  # agent_name of memories stored through MCP tools
    # The dashboard's Connect an agent page (DESIGN.md §6): where teammates install the client and
    # the Claude Code marketplace from (pipx install "git+<repo>#subdirectory=clients",
    # /plugin marketplace add <repo>), and the server's URL as agents reach it — empty: the URL the
    # page was opened at (set it when a proxy rewrites the Host).
    "CLIENT_REPO_URL": os.environ.get("MEMORYLANE_REPO_URL", "https://github.com/memory-lane/memory-lane"),
    "PUBLIC_URL": os.environ.get("MEMORYLANE_PUBLIC_URL", ""),
}

if config_path := os.environ.get("MEMORYLANE_CONFIG"):
    try:
        overrides = json.loads(Path(config_path).read_text())
    except (OSError, ValueError) as exc:
        raise ImproperlyConfigured(f"MEMORYLANE_CONFIG={config_path}: {exc}") from exc
    unknown = set(overrides) - set(MEMORY_LANE)
    if unknown:
        raise ImproperlyConfigured(f"MEMORYLANE_CONFIG has unknown keys: {sorted(unknown)}")
    MEMORY_LANE.update(overrides)

if database_url := os.environ.get("DATABASE_URL"):
    DATABASES = {"default": parse_database_url(database_url)}
else:
    DATABASES = {
        "default": parse_database_url(embedded.database_url(MEMORY_LANE["EMBEDDED_POSTGRES_SETTINGS"]))
    }

CELERY_BEAT_SCHEDULE = {
    "reflect-daily": {
        "task": "memory.tasks.reflect_task",
        "schedule": MEMORY_LANE["REFLECTION_EVERY_SECONDS"],
    },
    "decay-weekly": {"task": "memory.tasks.decay_task", "schedule": MEMORY_LANE["DECAY_EVERY_SECONDS"]},
    "team-indexes": {
        "task": "memory.tasks.team_indexes_task",
        "schedule": MEMORY_LANE["TEAM_INDEX_EVERY_SECONDS"],
    },
    "token-vectors": {
        "task": "memory.tasks.token_vectors_task",
        "schedule": MEMORY_LANE["LATE_VECTORS_EVERY_SECONDS"],
    },
    "extraction-sweep": {
        "task": "memory.tasks.extraction_sweep_task",
        "schedule": MEMORY_LANE["EXTRACTION_SWEEP_SECONDS"],
    },
}
