"""Settings of the app under load (bench/load.py): production's, plus the floor
view and a header that counts each response's SQL queries. Never deployed."""

from registry.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
MIDDLEWARE = ["bench.middleware.count_queries", *MIDDLEWARE]  # noqa: F405
