"""Fixbase settings: one module, driven by environment variables, with laptop defaults.

With nothing set, Fixbase runs on SQLite and FAISS files under ./var with Celery tasks run
eagerly in-process. REDIS_URL switches uploads to real Celery workers; DATABASE_URL switches
the database (PostgreSQL in production and in CI).
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def env_bool(name: str, default: bool = False) -> bool:
    """A yes/no setting; a value that is neither (a typo such as "ture") stops start-up instead of
    quietly reading as False."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    word = value.strip().lower()
    if word not in TRUE_WORDS + FALSE_WORDS:
        raise ImproperlyConfigured(f"{name}={value!r} is not a yes/no value ({', '.join(TRUE_WORDS + FALSE_WORDS)}).")
    return word in TRUE_WORDS


def env_int(name: str, default: int) -> int:
    return int(_env_number(name, default, int, "a whole number"))


def env_float(name: str, default: float) -> float:
    return float(_env_number(name, default, float, "a number"))


def _env_number(name: str, default: float, parse: type[int] | type[float], what: str) -> float:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return parse(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not {what}.") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


DATA_DIR = Path(env_str("FIXBASE_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def data_dir_secret() -> str:
    """A secret key made once for this data directory (mode 0600) when none is configured, so a
    fresh installation never runs on a key published in the source. Written aside and linked
    into place, so processes starting together (web, worker, migrate) all read the same key."""
    path = DATA_DIR / "secret_key"
    if not path.exists():
        tmp = DATA_DIR / f".secret_key.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(50))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process was first: use its key
        finally:
            tmp.unlink(missing_ok=True)
    return path.read_text().strip()


SECRET_KEY = env_str("DJANGO_SECRET_KEY") or data_dir_secret()
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

# HTTPS: on by default in production. `runserver` cannot speak TLS, so it runs plain HTTP; a
# plain-HTTP intranet host sets FIXBASE_HTTPS=0. Behind a TLS-terminating proxy, set
# FIXBASE_PROXY_SSL_HEADER=1 so Django trusts X-Forwarded-Proto.
RUNSERVER = len(sys.argv) > 1 and sys.argv[1] == "runserver"
FIXBASE_HTTPS = env_bool("FIXBASE_HTTPS", not DEBUG and not RUNSERVER)
SECURE_SSL_REDIRECT = FIXBASE_HTTPS
# An API client has sent its token by the time it could be redirected: redirecting protects
# nothing and breaks CI hooks configured with an http:// URL on an internal network.
SECURE_REDIRECT_EXEMPT = [r"^api/"]
SESSION_COOKIE_SECURE = FIXBASE_HTTPS
CSRF_COOKIE_SECURE = FIXBASE_HTTPS
SECURE_HSTS_SECONDS = env_int("FIXBASE_HSTS_SECONDS", 31_536_000) if FIXBASE_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = FIXBASE_HTTPS
SECURE_HSTS_PRELOAD = FIXBASE_HTTPS
if env_bool("FIXBASE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Everything the pages load is served by Fixbase itself: no CDN, no inline script.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Accounts: every page needs a login except the login page itself and the API (which has its
# own token auth). FIXBASE_PUBLIC_TRIAGE=1 opens the paste page and read-only browsing.
FIXBASE_PUBLIC_TRIAGE = env_bool("FIXBASE_PUBLIC_TRIAGE", False)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles, whose runserver command config's (a pool of threads) takes the place of.
    "config",
    "django.contrib.staticfiles",
    "django_htmx",
    "reversion",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "rest_framework",
    "rest_framework.authtoken",
    "kb",
    "ingest",
    "triage",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.NulQueryMiddleware",
    # Before CSRF, which reads the body: an oversize paste gets its friendly 413 first.
    "config.middleware.BodySizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.FixbaseLoginRequiredMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'fixbase.sqlite3'}"), conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# WhiteNoise serves static files with DEBUG off too (compose stack, `make run`); from the
# finders when collectstatic has not run (a fresh checkout).
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = DATA_DIR / "media"

# Limits on what a user can send. A paste larger than this is refused with 413, not truncated.
FIXBASE_MAX_PASTE_BYTES = env_int("FIXBASE_MAX_PASTE_BYTES", 2 * 1024 * 1024)
FIXBASE_MAX_UPLOAD_BYTES = env_int("FIXBASE_MAX_UPLOAD_BYTES", 4 * 1024**3)
# A request may carry this much besides the paste: a multipart form's boundaries and other fields.
FIXBASE_FORM_OVERHEAD_BYTES = 64 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = FIXBASE_MAX_PASTE_BYTES + FIXBASE_FORM_OVERHEAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Django's partial uploads go here, not the system temp dir, so a killed upload's file is found
# and removed (ingest.dispatch.resume_abandoned).
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "upload-tmp")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
# A compressed upload may expand to at most this much text, and at most this many times its size.
FIXBASE_MAX_EXPANDED_BYTES = env_int("FIXBASE_MAX_EXPANDED_BYTES", 8 * 1024**3)
FIXBASE_MAX_EXPANSION_RATIO = env_int("FIXBASE_MAX_EXPANSION_RATIO", 100)

# Knowledge base and triage.
FIXBASE_INDEX_DIR = DATA_DIR / "index"
FIXBASE_EMBEDDER = env_str("FIXBASE_EMBEDDER", "minilm")  # "minilm" (real model) or "fake" (tests)
# Threads the embedding model runs on in each process (0: up to 2; web servers with several workers:
# 1). FIXBASE_TORCH_THREADS is its name from before the model ran on ONNX Runtime.
FIXBASE_MODEL_THREADS = env_int("FIXBASE_MODEL_THREADS", env_int("FIXBASE_TORCH_THREADS", 0))
# Where the model's ONNX export is kept (made once, by `make install` or on first use).
FIXBASE_MODEL_CACHE = Path(env_str("FIXBASE_MODEL_CACHE", str(BASE_DIR / "var" / "models"))).resolve()
FIXBASE_MASK_HOSTS = env_bool("FIXBASE_MASK_HOSTS", False)  # also mask IPs and hostnames in stored text
FIXBASE_STALE_SECONDS = env_int("FIXBASE_STALE_SECONDS", 120)  # a processing document with no heartbeat
FIXBASE_MATCH_THRESHOLD = env_float("FIXBASE_MATCH_THRESHOLD", -1.0)  # < 0: use the fitted one
# Up to this many entries the ranking copy is rebuilt whole after a write (about 0.2 s at 2k); above
# it what changed is layered on the last full build (triage/ranking_cache.py).
FIXBASE_SYNC_REBUILD_ENTRIES = env_int("FIXBASE_SYNC_REBUILD_ENTRIES", 2_000)
# A full ranking copy of at least this many entries is saved under DATA_DIR/ranking, so the next
# process maps it instead of building it (minutes at a million entries).
FIXBASE_SAVE_COPY_ENTRIES = env_int("FIXBASE_SAVE_COPY_ENTRIES", 20_000)
FIXBASE_RANKING_COPY_DIR = DATA_DIR / "ranking"  # `rebuild_index` removes it

# Celery: eager in-process unless a broker is configured.
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("FIXBASE_CELERY_QUEUE", "fixbase")
# Without a broker, uploads are ingested by a background thread of the web process.
FIXBASE_INGEST_IN_THREAD = env_bool("FIXBASE_INGEST_IN_THREAD", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "config.api.ApiTokenAuthentication",
        "config.api.LegacyTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["config.api.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["config.api.TokenRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "config.api.NulFreeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "config.api.Pages",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "config.api_errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
# Requests per token: an abuse guard, far above what a CI fleet posts (a triage takes ~30 ms).
FIXBASE_API_RATE = env_str("FIXBASE_API_RATE", "100/s")
SPECTACULAR_SETTINGS = {
    "TITLE": "Fixbase API",
    "DESCRIPTION": "Triage failures of RL fine-tuning jobs against a team's knowledge base.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",  # served from this host: no CDN
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_responses",
    ],
}
CACHES = (
    {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    if REDIS_URL
    else {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "fixbase": {"handlers": ["console"], "level": env_str("FIXBASE_LOG_LEVEL", "INFO")},
        "django.request": {"handlers": ["console"], "level": "WARNING"},
    },
}
