"""Django's Redis cache, with one client per connection pool instead of one per call.

Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` for every cache
operation, and redis-py fills a dictionary of some 170 response callbacks each time:
about 0.3 ms of CPU per ``get``/``add``/``incr``. The rate limits make two such calls
on every search and API request, and every cached page one on a worker's first visit.
A ``redis.Redis`` is safe to share between threads (its pool hands out connections)
and forks (the pool notices a new pid), so one per pool is enough.

``incr`` is one round trip (a script: increment if the key exists) instead of
Django's two (EXISTS, then INCRBY): the rate limits call it on every request past
a window's first.

``remember(group, key)`` and ``forget_groups_except(group)`` drop a whole group of
entries at once: the public cache files each entry under its release and registry
generation, and drops a superseded generation's entries as soon as a process sees
the next one, instead of leaving them to expire a day later.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

# Django's contract: incr of a missing key raises ValueError (and creates nothing).
_INCR_IF_EXISTS = """
if redis.call('exists', KEYS[1]) == 1 then
  return redis.call('incrby', KEYS[1], ARGV[1])
end
return false
"""


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}
        self._incr_scripts: dict[int, Any] = {}

    def incr(self, key: Any, delta: int) -> int:
        client = self.get_client(key, write=True)
        script = self._incr_scripts.get(id(client))
        if script is None:
            script = self._incr_scripts[id(client)] = client.register_script(_INCR_IF_EXISTS)
        value = script(keys=[key], args=[delta])
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return int(value)

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        django_client: Any = self  # Django's private helpers, which django-stubs omits
        pool = django_client._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = django_client._client(connection_pool=pool)
        return client


class RegistryRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient

    def _groups_key(self, group: str | None = None) -> str:
        return self.make_and_validate_key("groups" if group is None else f"group:{group}")

    def remember(self, group: str, key: str, timeout: int) -> None:
        """File ``key`` (a key of this cache) under ``group``, for forget_groups_except."""
        client = self._cache.get_client(write=True)
        members = self._groups_key(group)
        pipe = client.pipeline(transaction=False)
        pipe.sadd(self._groups_key(), group)
        pipe.sadd(members, self.make_and_validate_key(key))
        pipe.expire(members, timeout)
        pipe.execute()

    def forget_groups_except(self, keep: str) -> int:
        """Delete the entries of every group but ``keep``; the number of groups dropped."""
        client = self._cache.get_client(write=True)
        groups = [g.decode() if isinstance(g, bytes) else g
                  for g in client.smembers(self._groups_key())]
        dropped = [group for group in groups if group != keep]
        for group in dropped:
            members = self._groups_key(group)
            keys = list(client.smembers(members))
            pipe = client.pipeline(transaction=False)
            for start in range(0, len(keys), 500):
                pipe.delete(*keys[start:start + 500])
            pipe.delete(members)
            pipe.srem(self._groups_key(), group)
            pipe.execute()
        return len(dropped)
