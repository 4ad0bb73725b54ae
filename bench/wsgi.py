"""The app as gunicorn loads it, for bench/mechanisms.py: BENCH_WITHOUT=local-store turns the
per-process store in front of the shared public cache off (nothing is kept in it)."""

import os

from registry.wsgi import application

if os.environ.get("BENCH_WITHOUT") == "local-store":
    from registry.namespaces import public_cache

    public_cache.local_store.max_bytes = 0  # every entry is refused: each read is Redis's

__all__ = ["application"]
