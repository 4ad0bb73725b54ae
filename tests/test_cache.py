"""The Redis cache backend: Django's, and never an error: a Redis away is a miss, a
write skipped (and, where asked, forgotten later)."""

import logging
import os
import shutil
import signal
import time

import pytest

from registry import cache as registry_cache
from registry.cache import RegistryRedisCache, cache_available
from tests.conftest import RUN_ID
from tests.faults.conftest import RedisServer, free_port

REDIS = os.environ.get("TEST_REDIS_URL", "")


@pytest.fixture
def redis_cache():
    if not REDIS:
        pytest.skip("needs Redis: set TEST_REDIS_URL (python3 dev.py test does when Redis "
                    "answers on 127.0.0.1:6379)")
    cache = RegistryRedisCache(REDIS, {"KEY_PREFIX": f"test-cache-{RUN_ID}"})
    yield cache
    cache.delete_many(["page", "count", "gone"])


def cache_at(url: str, **options) -> RegistryRedisCache:
    """A cache of its own (its own outage record: a prefix of this test's)."""
    return RegistryRedisCache(url, {"KEY_PREFIX": f"test-outage-{RUN_ID}-{time.monotonic_ns()}",
                                    "OPTIONS": {"socket_connect_timeout": 0.5,
                                                "socket_timeout": 0.3, **options}})


@pytest.fixture
def nothing_listening():
    return f"redis://127.0.0.1:{free_port()}/0"


def test_a_redis_away_is_a_miss_and_never_an_error(nothing_listening):
    cache = cache_at(nothing_listening)
    started = time.monotonic()
    assert cache.get("page") is None and cache.get("page", "default") == "default"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.add("lock", 1, 10) is False
    assert cache.has_key("page") is False and "page" not in cache
    assert cache.get_or_set("page", "built", 10) == "built"
    cache.set("page", "body", 10)
    cache.set_many({"a": 1, "b": 2}, 10)
    assert cache.touch("page") is False and cache.delete("page") is False
    cache.delete_many(["a", "b"])
    with pytest.raises(ValueError):  # a missing key, as Django's contract says
        cache.incr("count")
    assert cache.clear() is False
    cache.remember("group", "page", 10)
    assert cache.forget_groups_except("group") == 0
    assert cache_available(cache) is False
    assert time.monotonic() - started < 1  # refused once, then not tried again for a while


def test_an_outage_is_logged_once_per_interval(nothing_listening, caplog, monkeypatch):
    cache = cache_at(nothing_listening)
    monkeypatch.setattr(registry_cache, "RETRY_SECONDS", 0)  # every call tries and fails
    with caplog.at_level(logging.WARNING, logger="registry.cache"):
        for _ in range(50):
            cache.get("page")
    assert len(caplog.records) == 1
    assert "unreachable" in caplog.records[0].getMessage()


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own, which it may stop."""
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = RedisServer(tmp_path)
    server.start()
    yield server.process, server.url
    server.kill()


def test_a_hung_redis_is_a_miss_and_is_used_again_when_it_answers(own_redis, monkeypatch):
    """Calls while Redis hangs are misses, writes skipped (nothing in these caches lets
    anyone in: a lost write costs a rebuild or a count); once it answers it is used again."""
    process, url = own_redis
    monkeypatch.setattr(registry_cache, "RETRY_SECONDS", 0.2)
    cache = cache_at(url)
    cache.set("page", "kept", 60)
    process.send_signal(signal.SIGSTOP)  # hung: a call times out, the data stays
    try:
        assert cache.get("page") is None
        assert cache.outage.away()
        cache.set("page", "changed", 60)  # not even sent while Redis is away
    finally:
        process.send_signal(signal.SIGCONT)
    time.sleep(0.25)
    assert cache.get("page") == "kept"
    cache.set("page", "changed", 60)
    assert cache.get("page") == "changed" and cache_available(cache)


def test_it_is_still_django_redis_cache(redis_cache):
    redis_cache.set("page", {"body": "<p>ünïcode</p>", "size": 14}, 60)
    assert redis_cache.get("page") == {"body": "<p>ünïcode</p>", "size": 14}
    assert redis_cache.add("count", 1, 60) is True
    assert redis_cache.add("count", 5, 60) is False
    assert redis_cache.incr("count") == 2
    assert redis_cache.get("gone", "default") == "default"
    assert redis_cache.incr("count", 10) == 12
    with pytest.raises(ValueError):
        redis_cache.incr("gone")
    assert redis_cache.get("gone") is None  # a refused incr creates nothing


def test_incr_keeps_the_expiry_the_rate_limit_set(redis_cache):
    redis_cache.add("count", 0, 60)
    redis_cache.incr("count")
    client = redis_cache._cache.get_client()
    assert 0 < client.ttl(redis_cache.make_and_validate_key("count")) <= 60
