"""gunicorn's configuration for production: ``gunicorn -c gunicorn.conf.py``.

Sync workers (each request is short: pages come from the cache), the count from
WEB_CONCURRENCY (gunicorn's own variable) or 2 x cores + 1, the address from
PORT or --bind. Scale out by running this on more machines behind a load
balancer that probes /healthz; they share PostgreSQL and Redis."""

import multiprocessing
import os

wsgi_app = "registry.wsgi:application"
bind = [f"0.0.0.0:{os.environ.get('PORT', '8000')}"]
workers = int(os.environ.get("WEB_CONCURRENCY") or multiprocessing.cpu_count() * 2 + 1)
worker_class = "sync"
timeout = 30
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then, staggered, so no slow leak accumulates.
max_requests = 20_000
max_requests_jitter = 2_000
accesslog = "-"
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
