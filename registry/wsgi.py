import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
application = get_wsgi_application()

# The release identifier of the public cache's keys, from the files deployed now
# (registry/release.py): computed at start-up, in gunicorn's master with --preload.
from registry.release import current_release  # noqa: E402

current_release()
