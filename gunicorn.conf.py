"""gunicorn's configuration for production: ``gunicorn -c gunicorn.conf.py``.

Sync workers (each request is short: pages come from the cache), the count from
WEB_CONCURRENCY (gunicorn's own variable) or 2 x cores + 1. It listens on
127.0.0.1:$PORT by default; BIND or --bind says otherwise (comma-separated for several):
"unix:/run/urn-registry/gunicorn.sock" for nginx on the same machine (with
TRUSTED_PROXIES=unix: only who may write the socket can connect, where on loopback any
local process could speak for any client), "10.0.0.5:8000" for a proxy on another
machine (list it in TRUSTED_PROXIES). Scale out by running this on more machines behind
a load balancer that probes /healthz/ready; they share PostgreSQL and Redis."""

import ctypes
import multiprocessing
import os
import signal
import sys

wsgi_app = "registry.wsgi:application"
bind = [address.strip() for address in
        (os.environ.get("BIND") or f"127.0.0.1:{os.environ.get('PORT', '8000')}").split(",")
        if address.strip()]
# A Unix socket is created with mode 0660: the app's user and its group (nginx's) only.
umask = 0o117
_trusted = [entry.strip() for entry in os.environ.get("TRUSTED_PROXIES", "").split(",")
            if entry.strip()]
if any(address.startswith("unix:") for address in bind) and "unix" not in (
        entry.lower() for entry in _trusted):
    # A peer on the socket has no address: unless it is the trusted proxy, every client
    # would have none, and no rate limit could tell one from another.
    raise SystemExit("BIND names a Unix socket: add unix to TRUSTED_PROXIES "
                     "(docs/operations.md, 'nginx in front').")
workers = int(os.environ.get("WEB_CONCURRENCY") or multiprocessing.cpu_count() * 2 + 1)
worker_class = "sync"
timeout = 30
graceful_timeout = 30
keepalive = 5
# The longest request line gunicorn reads (its largest setting; 414 past it): above the
# API's own bound on a query string (registry/http_semantics.py, MAX_QUERY_BYTES) by more
# than the longest API path, so a request past that bound is told why in JSON.
limit_request_line = 8190
# Django is imported once, in the master, and each worker is a fork of it: a worker
# that is recycled or replaced starts in milliseconds, with the code already loaded,
# instead of spending a second importing while its share of requests waits (the
# spikes in p99 under load). Connections (PostgreSQL, Redis) open lazily, per worker:
# registry/wsgi.py closes the one the app's loading opened before any fork.
preload_app = True
# Recycle workers now and then, staggered, so no slow leak accumulates (a worker
# serves up to 1,000 requests a second under load: at most every quarter of an hour).
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "1000000"))
max_requests_jitter = max_requests // 10
accesslog = "-"
errorlog = "-"
# gunicorn's control socket (gunicornc) defaults to one path per user, so every gunicorn
# on a host would share it. Each instance has its own: GUNICORN_CONTROL_SOCKET, or under
# systemd's RuntimeDirectory (deploy/urn-registry-web.service); elsewhere there is none.
_control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET") or (
    os.path.join(os.environ["RUNTIME_DIRECTORY"].split(":")[0], "gunicorn.ctl")
    if os.environ.get("RUNTIME_DIRECTORY") else "")
if _control_socket:
    control_socket = _control_socket
else:
    control_socket_disable = True
# The proxies whose X-Forwarded-* gunicorn believes: the addresses of the app's own
# TRUSTED_PROXIES ("unix" is not one: gunicorn believes a peer on a Unix socket anyway).
forwarded_allow_ips = (os.environ.get("FORWARDED_ALLOW_IPS") or ",".join(
    entry for entry in _trusted if entry.lower() != "unix") or "127.0.0.1")


# Workers die with their master. A sync worker under load goes from one request to the
# next without looking at its parent, so after the master is killed (kill -9, an OOM)
# orphaned workers would keep serving and keep the port, and a new master could not
# bind it ("Connection in use"). The kernel sends each worker SIGTERM when its master
# dies (Linux's PR_SET_PDEATHSIG): the worker finishes the request in hand and exits.
# Under systemd the unit's control-group kill does the same (deploy/).
_PR_SET_PDEATHSIG = 1


def post_fork(server, worker):
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            server.log.warning("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
    if os.getppid() != server.pid:  # the master died before the line above
        os._exit(0)


def post_worker_init(worker):
    """Without a master nothing ends a request that hangs (gunicorn's timeout is the
    master's): a worker told to stop after its master died exits within graceful_timeout
    whatever it is doing (SIGALRM's default action)."""
    stop = signal.getsignal(signal.SIGTERM)

    def stop_without_master(signum, frame):
        if os.getppid() != worker.ppid:
            signal.alarm(int(graceful_timeout))
        if callable(stop):
            stop(signum, frame)

    signal.signal(signal.SIGTERM, stop_without_master)
