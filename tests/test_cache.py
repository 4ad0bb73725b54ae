"""The Redis cache backend: Django's, sharing one client per connection pool."""

import os

import pytest

from registry.cache import RegistryRedisCache
from tests.conftest import RUN_ID

REDIS = os.environ.get("TEST_REDIS_URL", "")

pytestmark = pytest.mark.skipif(not REDIS, reason="needs Redis: set TEST_REDIS_URL (python3 "
                                "dev.py test does when Redis answers on 127.0.0.1:6379)")


@pytest.fixture
def redis_cache():
    cache = RegistryRedisCache(REDIS, {"KEY_PREFIX": f"test-cache-{RUN_ID}"})
    yield cache
    cache.delete_many(["page", "count", "gone"])


def test_one_client_serves_every_call(redis_cache):
    client = redis_cache._cache.get_client()
    assert redis_cache._cache.get_client(write=True) is client
    assert redis_cache._cache.get_client("another key") is client


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
