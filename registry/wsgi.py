import os

from django.core.wsgi import get_wsgi_application
from django.db import connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
application = get_wsgi_application()

# The release identifier of the public cache's keys, from the files deployed now
# (registry/release.py): computed at start-up, in gunicorn's master with --preload.
from registry.release import current_release  # noqa: E402

current_release()

# Loading the app reads the database (production's demo guard, registry/review/checks.py).
# With gunicorn's preload_app that happens in the master, and every worker forked from it
# would inherit the same PostgreSQL socket: several workers' queries and answers
# interleaved on one connection, and one worker closing it closes it for all. Closed here,
# before any fork; each worker opens its own on its first request.
connections.close_all()
