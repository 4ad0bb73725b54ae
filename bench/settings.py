"""Settings of the app under load (bench/load.py): production's, plus the floor
view and a header that counts each response's SQL queries. Never deployed.

BENCH_WITHOUT=visitor-query (bench/mechanisms.py) puts Django's AuthenticationMiddleware in
place of the visitor query's (bench/wsgi.py turns the query itself off), to measure what
that buys."""

import os

from registry.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
MIDDLEWARE = ["bench.middleware.count_queries", *MIDDLEWARE]  # noqa: F405

if os.environ.get("BENCH_WITHOUT") == "visitor-query":
    MIDDLEWARE = ["django.contrib.auth.middleware.AuthenticationMiddleware"
                  if entry == "registry.accounts.signed_in.VisitorAuthenticationMiddleware"
                  else entry for entry in MIDDLEWARE]
