"""Fixbase settings: one module, driven by environment variables, with laptop defaults.

With nothing set, Fixbase runs on SQLite and FAISS files under ./var with Celery tasks run
eagerly in-process. REDIS_URL switches uploads to real Celery workers; DATABASE_URL switches
the database (PostgreSQL in production and in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


DATA_DIR = Path(env_str("FIXBASE_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me-in-production-0123456789")
DEBUG = env_bool("DJANGO_DEBUG", True)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "rest_framework.authtoken",
    "kb",
    "ingest",
    "triage",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
MEDIA_ROOT = DATA_DIR / "media"

# Limits on what a user can send. A paste larger than this is refused with 413, not truncated.
FIXBASE_MAX_PASTE_BYTES = env_int("FIXBASE_MAX_PASTE_BYTES", 2 * 1024 * 1024)
FIXBASE_MAX_UPLOAD_BYTES = env_int("FIXBASE_MAX_UPLOAD_BYTES", 4 * 1024**3)
DATA_UPLOAD_MAX_MEMORY_SIZE = FIXBASE_MAX_PASTE_BYTES + 64 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Knowledge base and triage.
FIXBASE_INDEX_DIR = DATA_DIR / "index"
FIXBASE_EMBEDDER = env_str("FIXBASE_EMBEDDER", "minilm")  # "minilm" (real model) or "fake" (tests)
# Threads the model may use in one process; 0: up to 2. Web servers with several workers: 1.
FIXBASE_TORCH_THREADS = env_int("FIXBASE_TORCH_THREADS", 0)
FIXBASE_MASK_HOSTS = env_bool("FIXBASE_MASK_HOSTS", False)  # also mask IPs and hostnames in stored text
FIXBASE_STALE_SECONDS = env_int("FIXBASE_STALE_SECONDS", 120)  # a processing document with no heartbeat
FIXBASE_MATCH_THRESHOLD = env_float("FIXBASE_MATCH_THRESHOLD", -1.0)  # < 0: use the fitted one
# Up to this many entries the ranking copy is rebuilt whole after a write (about 0.2 s at 2k); above
# it added entries are layered on the last full build, and edits rebuild in a background thread.
FIXBASE_SYNC_REBUILD_ENTRIES = env_int("FIXBASE_SYNC_REBUILD_ENTRIES", 2_000)

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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "UNAUTHENTICATED_USER": None,
}

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
