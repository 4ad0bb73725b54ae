"""Production settings: strict environment, and a clean `check --deploy`."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

PRODUCTION = {
    "REGISTRY_ENV": "production",
    "SECRET_KEY": "k" * 20 + "-not-a-real-secret-but-long-and-varied-0123456789-abcdef",
    "ALLOWED_HOSTS": "registry.example.org",
    "DATABASE_URL": "sqlite:////tmp/registry-deploy-check.sqlite3",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "CACHE_URL": "redis://127.0.0.1:6380/0",  # a Redis of its own, which may evict
    "SITE_URL": "https://registry.example.org",
    "TRUSTED_PROXIES": "127.0.0.1",
}


def manage(*args, env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "SECRET_KEY", "REGISTRY_ENV", "DEBUG",
                          "DJANGO_ALLOW_ASYNC_UNSAFE")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR,
                          env={**clean, **env}, capture_output=True, text=True)


def test_check_deploy_has_no_warnings_with_production_env():
    result = manage("check", "--deploy", env=PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "Set the environment variable SECRET_KEY." in result.stderr


def test_production_refuses_eager_celery():
    env = {**{k: v for k, v in PRODUCTION.items() if k != "CELERY_BROKER_URL"},
           "CELERY_TASK_ALWAYS_EAGER": "true"}
    result = manage("check", env=env)
    assert "Set CELERY_BROKER_URL" in result.stderr


def test_production_refuses_a_cache_of_its_own_per_process():
    # Rate limits and log-in throttling count in the cache: per-process counts would let
    # every worker grant the whole allowance again.
    env = {k: v for k, v in PRODUCTION.items() if k != "REDIS_URL"}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "Set the environment variable REDIS_URL." in result.stderr


def test_production_refuses_to_start_without_a_cache_redis_of_its_own():
    """The public cache must evict (maxmemory, allkeys-lru); the broker's and the rate
    limits' Redis must not: without CACHE_URL, or with theirs (another database number
    is the same server, the same policy), production does not start."""
    without = {k: v for k, v in PRODUCTION.items() if k != "CACHE_URL"}
    assert "Set the environment variable CACHE_URL." in manage("check", env=without).stderr
    for shared in ("redis://127.0.0.1:6379/5", "redis://127.0.0.1/3"):
        result = manage("check", env={**PRODUCTION, "CACHE_URL": shared})
        assert result.returncode != 0 and "CACHE_URL must be a Redis server of its own" in (
            result.stderr)
    broker = {**PRODUCTION, "CELERY_BROKER_URL": "redis://10.0.0.7:6379/0",
              "CACHE_URL": "redis://10.0.0.7:6379/1"}
    assert "CACHE_URL must be a Redis server of its own" in manage("check", env=broker).stderr
    assert manage("check", env=PRODUCTION).returncode == 0


def test_a_malformed_boolean_is_an_error_not_a_guess():
    result = manage("check", env={"DEBUG": "maybe"})
    assert "DEBUG must be a boolean" in result.stderr


@pytest.mark.parametrize("value", ["_exports", "/_exports", "//", "/a b/", "http://x/",
                                   "/_exports/../x/", "/./"])
def test_a_malformed_x_accel_redirect_location_is_refused(value):
    result = manage("check", env={"EXPORT_ACCEL_REDIRECT": value})
    assert result.returncode != 0
    assert "EXPORT_ACCEL_REDIRECT is a path such as /_exports/" in result.stderr


def test_no_secret_is_committed():
    tracked = subprocess.run(["git", "ls-files"], cwd=settings.BASE_DIR, capture_output=True,
                             text=True).stdout.split()
    assert ".dev-secret-key" not in tracked


def environment_variables_read() -> set[str]:
    """Every variable the project reads through registry/env.py's helpers, found in the
    code (not a list kept by hand): the first argument of each env_* call."""
    import ast

    names = set()
    for path in (settings.BASE_DIR / "registry").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id.startswith("env_") and node.args
                    and isinstance(node.args[0], ast.Constant)):
                names.add(node.args[0].value)
    return names


def test_every_setting_the_code_reads_is_documented_for_operators():
    operations = (settings.BASE_DIR / "docs" / "operations.md").read_text()
    read = environment_variables_read()
    assert {"SECRET_KEY", "DATABASE_URL", "SITE_URL"} <= read  # the finder finds them
    assert sorted(name for name in read if f"`{name}`" not in operations) == []

def _without(name):
    return {k: v for k, v in PRODUCTION.items() if k != name}


def test_production_refuses_to_start_without_site_url():
    """Every link in mail is built from SITE_URL; production has no sensible default."""
    result = manage("check", env=_without("SITE_URL"))
    assert result.returncode != 0
    assert "Set the environment variable SITE_URL." in result.stderr


@pytest.mark.parametrize("value", ["registry.example.org", "https://registry.example.org/app",
                                   "http://registry.example.org", "javascript:alert(1)"])
def test_production_refuses_a_site_url_that_is_not_an_https_origin(value):
    result = manage("check", env={**PRODUCTION, "SITE_URL": value})
    assert result.returncode != 0
    assert "SITE_URL must" in result.stderr


def test_production_behind_a_proxy_refuses_to_start_without_trusted_proxies():
    result = manage("check", env=_without("TRUSTED_PROXIES"))
    assert result.returncode != 0
    assert "Set TRUSTED_PROXIES" in result.stderr
    direct = manage("check", env={**_without("TRUSTED_PROXIES"), "BEHIND_PROXY": "false"})
    assert direct.returncode == 0, direct.stderr


def test_a_trusted_proxy_that_is_not_an_address_is_refused():
    result = manage("check", env={**PRODUCTION, "TRUSTED_PROXIES": "127.0.0.1,proxy.local"})
    assert result.returncode != 0
    assert "'proxy.local' is not an IP address or network" in result.stderr


def test_the_development_key_is_the_checkouts_and_importing_settings_writes_none(tmp_path):
    from devtools import base
    from registry import env as registry_env

    assert base.DEV_SECRET_KEY_FILE == registry_env.DEV_SECRET_KEY_FILE  # one file, both sides
    absent = tmp_path / registry_env.DEV_SECRET_KEY_FILE
    first, second = (registry_env.development_secret_key(absent) for _ in range(2))
    assert len(first) >= 50 and first != second and not absent.exists()
    absent.write_text("the-checkouts-own-key\n")
    assert registry_env.development_secret_key(absent) == "the-checkouts-own-key"
    # A fresh process importing the settings (as mypy or a command does) writes nothing.
    before = sorted(p.name for p in settings.BASE_DIR.iterdir())
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "REGISTRY_ENV")}
    result = subprocess.run([sys.executable, "-c", "import django; from django.conf import "
                             "settings; django.setup(); print(len(settings.SECRET_KEY))"],
                            cwd=settings.BASE_DIR, env=clean, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in settings.BASE_DIR.iterdir()) == before


def test_a_command_links_where_dev_py_start_serves_not_to_port_8000(tmp_path):
    """``dev.py start 8331`` records its address; a command run beside it (a separate
    process, without SITE_URL in its environment) reads SITE_URL's default from there."""
    import dev
    from registry import env as registry_env

    assert dev.DEV_SITE_URL_FILE == registry_env.DEV_SITE_URL_FILE  # one file, both sides
    recorded = tmp_path / registry_env.DEV_SITE_URL_FILE
    recorded.write_text("http://127.0.0.1:8331\n")
    clean = {k: v for k, v in os.environ.items()
             if k not in ("SITE_URL", "PYTEST_VERSION", "REGISTRY_ENV")}
    code = ("import sys; from pathlib import Path; from registry.env import development_site_url"
            " as read; print(read(Path(sys.argv[1]), 'http://127.0.0.1:8000'),"
            " read(Path(sys.argv[2]), 'http://127.0.0.1:8000'))")
    result = subprocess.run([sys.executable, "-c", code, str(recorded), str(tmp_path / "none")],
                            cwd=settings.BASE_DIR, env=clean, capture_output=True, text=True)
    assert result.stdout.split() == ["http://127.0.0.1:8331", "http://127.0.0.1:8000"], \
        result.stderr
    # A test run's links stay on the documented default whatever server runs beside it.
    assert registry_env.development_site_url(recorded, "http://127.0.0.1:8000") \
        == "http://127.0.0.1:8000"
