"""Production as a runnable thing: static files from the app, gunicorn."""

import json
import os
import runpy
import subprocess
import sys

from django.conf import settings

from tests.test_settings import PRODUCTION


def test_bench_floor_is_not_a_url_of_the_app(client, db):
    assert client.get("/bench-floor/").status_code == 404


SERVE_STATIC = """
import django, json
django.setup()
from django.core.management import call_command
from django.templatetags.static import static
from django.test import Client
call_command("collectstatic", interactive=False, verbosity=0)
client = Client(HTTP_X_FORWARDED_PROTO="https", HTTP_HOST="registry.example.org")
url = static("vendor/bootstrap/bootstrap.min.css")
plain = client.get(url)
zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
print(json.dumps({"url": url, "status": plain.status_code,
                  "cache": plain.get("Cache-Control", ""),
                  "encoding": zipped.get("Content-Encoding", ""),
                  "plain": len(b"".join(plain.streaming_content)),
                  "zipped": len(b"".join(zipped.streaming_content))}))
"""


def test_production_serves_hashed_compressed_static_files(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "SECRET_KEY", "REGISTRY_ENV", "DEBUG")}
    env.update(PRODUCTION, STATIC_ROOT=str(tmp_path / "static"),
               DJANGO_SETTINGS_MODULE="registry.settings")
    result = subprocess.run([sys.executable, "-c", SERVE_STATIC], cwd=settings.BASE_DIR,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert served["status"] == 200
    assert served["url"].startswith("/static/vendor/bootstrap/bootstrap.min.")  # hashed name
    assert "immutable" in served["cache"] and "max-age=315360000" in served["cache"]
    assert served["encoding"] == "gzip" and served["zipped"] < served["plain"] / 3


LOAD_APP = """
from django.db import connections
from django.db.backends.signals import connection_created
opened = []
connection_created.connect(lambda sender, connection, **kwargs: opened.append(connection.alias),
                          weak=False)
import registry.wsgi
print(len(opened), [c.alias for c in connections.all() if c.connection is not None])
"""


def test_loading_the_app_leaves_no_database_connection_for_the_workers_to_share(tmp_path):
    """gunicorn loads the app in its master (preload_app) and forks the workers from it:
    a connection the loading opened (the demo guard reads the accounts) would be one socket
    shared by every worker. Loading closes what it opened."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "SECRET_KEY", "REGISTRY_ENV", "DEBUG")}
    env.update(PRODUCTION, STATIC_ROOT=str(tmp_path / "static"),
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
               DJANGO_SETTINGS_MODULE="registry.settings")
    result = subprocess.run([sys.executable, "-c", LOAD_APP], cwd=settings.BASE_DIR,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    opened, still_open = result.stdout.split(maxsplit=1)
    assert int(opened) >= 1  # the guard did read the database while loading
    assert still_open.strip() == "[]"
    assert runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))["preload_app"] is True


def test_gunicorn_config_loads():
    result = subprocess.run(
        [sys.executable, "-c", "import runpy; c = runpy.run_path('gunicorn.conf.py');"
                               "print(c['wsgi_app'], c['workers'] >= 1)"],
        cwd=settings.BASE_DIR, capture_output=True, text=True, env={**os.environ,
                                                                    "WEB_CONCURRENCY": "3"})
    assert result.stdout.split() == ["registry.wsgi:application", "True"]


def _gunicorn_config(**env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PORT", "BIND", "TRUSTED_PROXIES", "FORWARDED_ALLOW_IPS")}
    result = subprocess.run(
        [sys.executable, "-c", "import json, runpy; c = runpy.run_path('gunicorn.conf.py');"
                               "print(json.dumps([c['bind'], c['forwarded_allow_ips']]))"],
        cwd=settings.BASE_DIR, capture_output=True, text=True, env={**clean, **env})
    return json.loads(result.stdout)


def test_gunicorn_listens_on_the_loopback_unless_told():
    """Reachable only through the TLS proxy on the same machine by default, so nobody
    goes around it; BIND says otherwise, and the proxies gunicorn believes are the app's."""
    assert _gunicorn_config() == [["127.0.0.1:8000"], "127.0.0.1"]
    assert _gunicorn_config(PORT="9100") == [["127.0.0.1:9100"], "127.0.0.1"]
    assert _gunicorn_config(BIND="10.0.0.5:8000, [::1]:8000", TRUSTED_PROXIES="10.0.0.1") == [
        ["10.0.0.5:8000", "[::1]:8000"], "10.0.0.1"]


def test_gunicorn_offers_a_unix_socket_only_nginx_s_group_may_write():
    """On loopback any local process could send its own X-Forwarded-For; on a socket of
    mode 0660 only the app's user and nginx's group connect. "unix" in TRUSTED_PROXIES is
    the app's word (registry/proxies.py), not an address for gunicorn to validate."""
    bind, allowed = _gunicorn_config(BIND="unix:/run/urn-registry/gunicorn.sock",
                                     TRUSTED_PROXIES="unix")
    assert bind == ["unix:/run/urn-registry/gunicorn.sock"] and allowed == "127.0.0.1"
    assert _gunicorn_config(TRUSTED_PROXIES="unix, 10.0.0.1")[1] == "10.0.0.1"
    result = subprocess.run(
        [sys.executable, "-c", "import runpy; print(oct(runpy.run_path('gunicorn.conf.py')"
                               "['umask']))"], cwd=settings.BASE_DIR, capture_output=True,
        text=True)
    assert result.stdout.strip() == "0o117"  # rw for the user and the group, none for others
    clean = {k: v for k, v in os.environ.items() if k not in ("TRUSTED_PROXIES", "BIND")}
    refused = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('gunicorn.conf.py')"],
        cwd=settings.BASE_DIR, capture_output=True, text=True,
        env={**clean, "BIND": "unix:/run/urn-registry/gunicorn.sock",
             "TRUSTED_PROXIES": "127.0.0.1"})
    assert refused.returncode != 0 and "add unix to TRUSTED_PROXIES" in refused.stderr
    snippet = (settings.BASE_DIR / "deploy" / "nginx-registry.conf").read_text()
    assert "server unix:/run/urn-registry/gunicorn.sock;" in snippet
    assert "proxy_pass http://urn_registry;" in snippet
