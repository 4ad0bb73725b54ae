"""The app as gunicorn loads it, for bench/mechanisms.py: BENCH_WITHOUT=local-store turns the
per-process store in front of the shared public cache off (nothing is kept in it);
BENCH_WITHOUT=visitor-query reads the generation alone, the session, account and roles
then each with a query of their own (Django's way, bench/settings.py);
BENCH_WITHOUT=navigation-store renders each signed-in visitor's navigation on every request
(none is kept in the process)."""

import os

from registry.wsgi import application

if os.environ.get("BENCH_WITHOUT") == "local-store":
    from registry.namespaces import public_cache

    public_cache.local_store.max_bytes = 0  # every entry is refused: each read is Redis's

if os.environ.get("BENCH_WITHOUT") == "visitor-query":
    from registry.namespaces import public_cache

    public_cache.read_visitor = lambda *arguments: None  # no session key read: no join

if os.environ.get("BENCH_WITHOUT") == "navigation-store":
    from registry.accounts import signed_in

    signed_in.NAVIGATIONS_KEPT = 0  # each rendered bar is dropped at once

__all__ = ["application"]
