"""Settings for the URN Namespace Registry: one module, read from the environment.

With nothing set, the app runs on an embedded default: SQLite in the project
folder, Celery tasks run eagerly in-process, mail printed on the console.
``REGISTRY_ENV=production`` turns every missing required variable into a
start-up error (see registry/env.py and docs/operations.md's settings table).
"""

from __future__ import annotations

import re
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from registry.env import (
    DEV_SECRET_KEY_FILE,
    DEV_SITE_URL_FILE,
    IS_PRODUCTION,
    development_secret_key,
    development_site_url,
    env_bool,
    env_int,
    env_list,
    env_str,
)
from registry.proxies import UNIX_SOCKET, parse_networks

BASE_DIR = Path(__file__).resolve().parent.parent


SECRET_KEY = (
    env_str("SECRET_KEY", required_in_production=True)
    if IS_PRODUCTION
    else env_str("SECRET_KEY", "") or development_secret_key(BASE_DIR / DEV_SECRET_KEY_FILE)
)
DEBUG = env_bool("DEBUG", not IS_PRODUCTION)
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"], required_in_production=True
)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "crispy_forms",
    "crispy_bootstrap5",
    "allauth",
    "allauth.account",
    "registry.accounts",
    "registry.namespaces",
    "registry.review",
]

MIDDLEWARE = [
    # The security headers first (outermost): they reach every answer, also the ones a
    # middleware below gives without a view (the HTTPS redirect, a bad Host's 400, a
    # static file, a 304).
    "registry.protection.ProtectionHeadersMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The client address from TRUSTED_PROXIES, before anything reads it.
    "registry.proxies.TrustedProxyMiddleware",
    # HEAD, the API's 405 (before CSRF), 413 and JSON errors: registry/http_semantics.py.
    "registry.http_semantics.HttpSemanticsMiddleware",
    # 503 with Retry-After when the database, or the cache a count needs, is away.
    "registry.unavailable.UnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, with the signed-in user read in the registry generation's query
    # (registry/accounts/signed_in.py) and their navigation rendered once per process.
    "registry.accounts.signed_in.VisitorAuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_ratelimit.middleware.RatelimitMiddleware",
]
# Django's stock CSRF failure page carries an inline <style> the CSP blocks.
CSRF_FAILURE_VIEW = "registry.protection.csrf_failure"

ROOT_URLCONF = "registry.urls"
WSGI_APPLICATION = "registry.wsgi.application"

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
                "registry.accounts.context_processors.roles",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str(
            "DATABASE_URL",
            f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
            required_in_production=True,
        ),
        # Persistent connections in production: a new PostgreSQL connection per
        # request costs more than most cached pages. Not checked before each request
        # (Django's default; its SELECT 1 would double a cached page's round trips): after
        # a PostgreSQL restart a worker's first query on its old connection fails, that
        # request is a 503 with Retry-After (registry/unavailable.py) and the connection
        # is replaced when it ends (docs/benchmarks.md).
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60 if IS_PRODUCTION else 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Wait for a lock instead of failing at once when two requests write.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
IS_POSTGRES = DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
if IS_POSTGRES:
    # An unreachable server is a 503 within seconds, not a request hung until gunicorn's
    # timeout (registry/unavailable.py); ?connect_timeout= in DATABASE_URL overrides it.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 3)
    # Prepared on its first run in a kept connection: only the statements of a cursor
    # that binds its parameters on the server, which is the visitor query's alone
    # (registry/accounts/signed_in.py); Django's cursors bind on the client, never
    # prepared. A connection closed after each request would pay a round trip for it.
    if DATABASES["default"].get("CONN_MAX_AGE"):
        DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 0)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

# django-allauth: email is the identity; it must be verified before log-in.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_SIGNUP_FORM_CLASS = "registry.accounts.signup.SignupDetailsForm"  # name, organisation
ACCOUNT_ADAPTER = "registry.accounts.adapter.RegistryAccountAdapter"
ACCOUNT_USER_DISPLAY = "registry.accounts.adapter.user_display"
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
# Confirming the address in the browser that signed up signs the person in (allauth ties it
# to the sign-up's session, so a link opened elsewhere confirms without signing anyone in).
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_USER_MODEL_USERNAME_FIELD = "username"  # generated; people sign in by email
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
# One address per account, the one verified at sign-up: nobody can attach an address they
# have not verified to their account (account pre-hijacking through a pending secondary
# address that sign-up, log-in and password reset would then find). Enumeration stays hidden.
ACCOUNT_MAX_EMAIL_ADDRESSES = 1
ACCOUNT_CHANGE_EMAIL = False
ACCOUNT_PREVENT_ENUMERATION = True
# The registry's text policy (registry/text_policy.py) on every text field of the account forms.
ACCOUNT_FORMS = {
    "login": "registry.accounts.forms.LoginForm",
    "signup": "registry.accounts.forms.SignupForm",
    "add_email": "registry.accounts.forms.AddEmailForm",
    "reset_password": "registry.accounts.forms.ResetPasswordForm",
}
# Brute force: allauth counts failed log-ins in the cache, per address and per account
# and address together ("key": the adapter makes it both), and, from addresses that never
# signed in to the account, per account (registry/accounts/throttle.py).
ACCOUNT_RATE_LIMITS = {
    "login_failed": env_str("LOGIN_FAILED_RATE_LIMIT", "10/m/ip,5/5m/key"),
    "login_failed_account": env_str("LOGIN_ACCOUNT_CEILING", "50/h/key"),
}
LOGIN_REDIRECT_URL = "review:my-requests"  # the adapter sends experts and staff to their queue
ACCOUNT_LOGOUT_REDIRECT_URL = "namespaces:registry"

# Required in production: log-in throttling and the rate limits count in this cache, and
# counts kept per process would let each worker grant the whole allowance again.
REDIS_URL = env_str("REDIS_URL", "", required_in_production=True)
# The public cache (pages and API answers, registry/namespaces/public_cache.py) in a Redis
# of its own: one with maxmemory and allkeys-lru, so that it evicts, while the Redis of
# REDIS_URL (broker, rate limits, log-in throttling) never evicts. Required in production,
# on another server than those (checked below); in development REDIS_URL's.
CACHE_URL = env_str("CACHE_URL", REDIS_URL, required_in_production=True)
_CACHE_KEY_PREFIX = env_str("CACHE_KEY_PREFIX", "urnreg")


def _cache(url: str, name: str) -> dict:
    if url:
        # Never an error (registry/cache.py): a Redis away is a miss within these
        # timeouts, not a hung or failed request.
        return {"BACKEND": "registry.cache.RegistryRedisCache", "LOCATION": url,
                "KEY_PREFIX": _CACHE_KEY_PREFIX,
                "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}}
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": name}


# The counts (rate limits, log-in throttling) and the public pages, each its own Redis.
CACHES = {"default": _cache(REDIS_URL, "default"), "public": _cache(CACHE_URL, "public")}

# Celery: a real broker when one is configured, otherwise tasks run in-process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
if IS_PRODUCTION and CELERY_TASK_ALWAYS_EAGER:
    raise ImproperlyConfigured("Set CELERY_BROKER_URL (or REDIS_URL) in production.")


def _redis_server(url: str) -> str:
    """The Redis server a URL names (its database number aside: maxmemory and the
    eviction policy are the server's, for every database in it)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return f"unix:{parts.path}"
    try:
        port = parts.port or 6379
    except ValueError:
        port = 0  # not a port: the Redis client says so when it connects
    return f"{(parts.hostname or 'localhost').lower()}:{port}"


if IS_PRODUCTION and _redis_server(CACHE_URL) in {_redis_server(REDIS_URL),
                                                  _redis_server(CELERY_BROKER_URL)}:
    raise ImproperlyConfigured(
        "CACHE_URL must be a Redis server of its own (maxmemory, maxmemory-policy "
        "allkeys-lru), not the one of REDIS_URL or CELERY_BROKER_URL, which must never evict "
        "(docs/operations.md).")
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# With the broker down, sending a task gives up within about a second (the outbox
# row is already committed; the requeue task sends it later), instead of hanging.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_BEAT_SCHEDULE = {
    "remind-idle-requests": {
        "task": "registry.review.tasks.remind_idle_requests_task",
        "schedule": 6 * 60 * 60.0,
    },
    "requeue-undelivered-mail": {
        "task": "registry.review.tasks.requeue_undelivered_mail_task",
        "schedule": 60.0,
    },
    "clear-expired-sessions": {
        "task": "registry.accounts.tasks.clear_expired_sessions_task",
        "schedule": 24 * 60 * 60.0,
    },
}
# Where sync_iana reads IANA's registry; empty (the default) turns the daily sync off.
IANA_SYNC_URL = env_str("IANA_SYNC_URL", "")
if IANA_SYNC_URL:
    CELERY_BEAT_SCHEDULE["sync-iana"] = {
        "task": "registry.namespaces.tasks.sync_iana_task",
        "schedule": 24 * 60 * 60.0,
    }

# Mail
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "URN registry <urn-registry@iana.example>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# The right-hand side of every Message-ID the registry writes (how it knows its own
# messages when they come back): by default the domain of DEFAULT_FROM_EMAIL.
MAIL_DOMAIN = env_str("MAIL_DOMAIN", parseaddr(DEFAULT_FROM_EMAIL)[1].rpartition("@")[2]
                      or "localhost")
MAIL_MAX_ATTEMPTS = env_int("MAIL_MAX_ATTEMPTS", 12)
# Seconds each step of an SMTP conversation may wait for the server (Django's default,
# none, lets a stalled relay hold a worker for ever). A copy whose sender has not moved
# on within MAIL_SENDING_LEASE counts as abandoned: its worker died (outbox.py).
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
MAIL_SENDING_LEASE = env_int("MAIL_SENDING_LEASE", 4 * EMAIL_TIMEOUT)
# The domain of the addresses mail comes back to, each with an HMAC: per-person reply
# addresses (reply+...@) and per-message return paths (VERP, bounce+...@). The MTA
# delivers both to receive_mail (registry/review/mailaddress.py).
MAIL_REPLY_DOMAIN = env_str("MAIL_REPLY_DOMAIN", MAIL_DOMAIN)
# When set, only an Authentication-Results field from this server (the receiving
# MTA's authserv-id) is read for the DKIM/DMARC verdict shown to staff.
MAIL_AUTHSERV_ID = env_str("MAIL_AUTHSERV_ID", "")
# Inbound mail by IMAP, for sites with no MTA pipe to `manage.py receive_mail`: off
# unless MAIL_IMAP_HOST is set.
MAIL_IMAP_HOST = env_str("MAIL_IMAP_HOST", "")
MAIL_IMAP_PORT = env_int("MAIL_IMAP_PORT", 993)
MAIL_IMAP_SSL = env_bool("MAIL_IMAP_SSL", True)
MAIL_IMAP_USER = env_str("MAIL_IMAP_USER", "")
MAIL_IMAP_PASSWORD = env_str("MAIL_IMAP_PASSWORD", "")
MAIL_IMAP_FOLDER = env_str("MAIL_IMAP_FOLDER", "INBOX")
MAIL_IMAP_POLL_SECONDS = env_int("MAIL_IMAP_POLL_SECONDS", 300)
if MAIL_IMAP_HOST:
    if not (MAIL_IMAP_USER and MAIL_IMAP_PASSWORD):
        raise ImproperlyConfigured("MAIL_IMAP_HOST is set: set MAIL_IMAP_USER and "
                                   "MAIL_IMAP_PASSWORD too.")
    CELERY_BEAT_SCHEDULE["poll-imap-mailbox"] = {
        "task": "registry.review.tasks.poll_imap_mailbox_task",
        "schedule": float(MAIL_IMAP_POLL_SECONDS),
    }

# The registry's own policy knobs (RFC 8141 section 6.2).
REVIEW_LIST_ADDRESS = env_str("REVIEW_LIST_ADDRESS", "urn@ietf.org")
IESG_ADDRESS = env_str("IESG_ADDRESS", "iesg@ietf.org")
# The List-Id (RFC 2919) of the review list: mail carrying it came through the list
# and is public. By default the list address with its @ made a dot (urn.ietf.org).
REVIEW_LIST_ID = env_str("REVIEW_LIST_ID", REVIEW_LIST_ADDRESS.replace("@", "."))
REVIEW_MIN_DAYS = env_int("REVIEW_MIN_DAYS", 14)
REVIEW_IDLE_REMINDER_DAYS = env_int("REVIEW_IDLE_REMINDER_DAYS", 7)
# The registry's public address: every absolute link (mail, allauth's verification and
# password-reset links, feeds, exports) is built from it, never from a request's Host.
SITE_URL = env_str("SITE_URL", development_site_url(BASE_DIR / DEV_SITE_URL_FILE,
                                                     "http://127.0.0.1:8000"),
                   required_in_production=True)
_site = urlsplit(SITE_URL)
if _site.scheme not in ("http", "https") or not _site.hostname or _site.path not in ("", "/"):
    raise ImproperlyConfigured(f"SITE_URL must be like https://registry.example.org, "
                               f"not {SITE_URL!r}.")
if IS_PRODUCTION and _site.scheme != "https":
    raise ImproperlyConfigured("SITE_URL must start with https:// in production.")
SITE_NAME = env_str("SITE_NAME", "URN Namespace Registry")
ACCOUNT_EMAIL_SUBJECT_PREFIX = f"[{SITE_NAME}] "

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

FIXTURE_DIRS = [BASE_DIR / "fixtures"]

# The exports (registry.xml, the CSVs) are built by a worker and stored in the database
# (registry/namespaces/export_build.py); this directory is only this machine's cache of
# them (export_cache.py), one directory per generation, never shared between machines.
EXPORT_ROOT = Path(env_str("EXPORT_ROOT", str(BASE_DIR / "var" / "exports")))
# Behind nginx (deploy/nginx-registry.conf), an export is answered with X-Accel-Redirect
# to this internal location, which serves EXPORT_ROOT; empty (the default): gunicorn sends
# the file itself (sendfile).
EXPORT_ACCEL_REDIRECT = env_str("EXPORT_ACCEL_REDIRECT", "")
if EXPORT_ACCEL_REDIRECT and not re.fullmatch(r"(?:/(?!\.+/)[A-Za-z0-9_.-]+)+/",
                                               EXPORT_ACCEL_REDIRECT):
    raise ImproperlyConfigured(
        f"EXPORT_ACCEL_REDIRECT is a path such as /_exports/ (with both slashes), not "
        f"{EXPORT_ACCEL_REDIRECT!r}")

# Sessions in the database, each with its account's id: a signed-in request reads its
# session and account in the registry generation's query (registry/accounts/signed_in.py),
# and a session stays revocable (logout, password change), which a signed-cookie
# session would not be.
SESSION_ENGINE = "registry.accounts.sessions"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Production serves what `collectstatic` wrote: names carrying a content hash (cached
# for a year, immutable) and gzip copies, from the app process (whitenoise).
# Development serves the source folders as they are.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage" if IS_PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage",
    },
}
if IS_PRODUCTION:  # development serves static files with runserver
    MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                      "whitenoise.middleware.WhiteNoiseMiddleware")
    # Refuses to start (or, the database away then, to serve) while a demo account of
    # seed_demo accepts its published password (registry/review/checks.py).
    MIDDLEWARE.insert(MIDDLEWARE.index("registry.proxies.TrustedProxyMiddleware"),
                      "registry.review.checks.DemoGuardMiddleware")
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# The reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For and
# X-Forwarded-Proto are believed; the client's address for rate limits and log-in
# throttling is read through them (registry/proxies.py). Production runs behind a TLS
# proxy (BEHIND_PROXY, true there by default) and refuses to start without them: else
# every visitor would share the proxy's address, or forge their own.
BEHIND_PROXY = env_bool("BEHIND_PROXY", IS_PRODUCTION)
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
TRUSTED_PROXY_NETWORKS = parse_networks(TRUSTED_PROXIES)
# "unix" among them: gunicorn listens on a Unix socket (BIND=unix:...) and its peer,
# which has no address, is the proxy (only who may write the socket can connect).
TRUSTED_PROXY_UNIX_SOCKET = UNIX_SOCKET in (entry.lower() for entry in TRUSTED_PROXIES)
if IS_PRODUCTION and BEHIND_PROXY and not TRUSTED_PROXIES:
    raise ImproperlyConfigured(
        "Set TRUSTED_PROXIES to the address(es) of the reverse proxy in front of the app "
        "(e.g. 127.0.0.1), or BEHIND_PROXY=false if clients connect to it directly.")

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz(?:/live|/ready)?$"]  # probed over plain HTTP
    if BEHIND_PROXY:  # believed only from a trusted proxy: registry.proxies drops it else
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

# Content-Security-Policy (django-csp): scripts, styles, images and fonts from this site
# only, so no inline script, event handler or style attribute ever runs; Bootstrap's icons
# are data: SVGs. Permissions-Policy and no-store for signed-in pages: registry/protection.py.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Rate limits (django-ratelimit, counted in the cache): "count/period" per client IP, or
# per signed-in user for comments. Over a limit: 429 with Retry-After.
RATE_LIMITS = {
    "comment": env_str("RATE_LIMIT_COMMENTS", "10/10m"),
    "api_check": env_str("RATE_LIMIT_API_CHECK", "60/m"),
    "nid_check": env_str("RATE_LIMIT_NID_CHECK", "120/m"),
    "search": env_str("RATE_LIMIT_SEARCH", "60/m"),
}
RATELIMIT_VIEW = "registry.protection.too_many_requests"
# What a visitor is counted as: the address for IPv4 (an IPv4-mapped IPv6 one too), the
# /64 for IPv6 (registry/proxies.py, the same key allauth's throttles use).
RATELIMIT_IP_META_KEY = "registry.proxies.client_key"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# The NID-order index (namespaces.Namespace.Meta) carries the NID and id for PostgreSQL's
# index-only scans; SQLite, the embedded default, makes it a plain index and says so.
SILENCED_SYSTEM_CHECKS = ["models.W040"]
