"""Django's Redis cache, never an error.

**Degrade, never raise.** The site runs without its cache: slower, still correct. Every
call that meets a Redis error (refused, timed out, a server loading or out of memory)
is a miss (``get`` gives the default, ``add`` and ``has_key`` False, ``incr`` the
ValueError of a missing key) or a write skipped, and never raises. After a failure the
cache is *away* for ``RETRY_SECONDS``: calls are misses at once, without a connection
attempt; then one call tries again. A failure is logged once per ``LOG_SECONDS`` per
process (with how many calls were skipped since), and the return once.

A write or delete that could not be made is lost: what these caches hold is either
named by its content's generation (the public cache) or a count that may come out low
(rate limits, log-in throttling). Nothing that lets a person in lives in a cache
(sessions are the database's: registry/accounts/sessions.py).

``available()`` asks Redis (a PING) unless it is known away: for the decisions that
need the cache to be right, not fast (the rate limits that fail closed, protection.py).

``remember(group, key)`` and ``forget_groups_except(group)`` drop a whole group of
entries at once: the public cache files each entry under its release and registry
generation, and drops a superseded generation's entries as soon as a process sees
the next one, instead of leaving them to expire a day later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RETRY_SECONDS = 1.0  # after a failure, calls are misses this long before one tries again
LOG_SECONDS = 60.0  # at most one warning per cache and process in this time
FAILURES = (RedisError, OSError)
_T = TypeVar("_T")


class Outage:
    """Whether one Redis (per location and process) is away."""

    def __init__(self, location: str):
        self.location = location
        self.lock = threading.Lock()
        self.away_until = 0.0
        self.since: float | None = None  # when this outage began
        self.logged_at = float("-inf")
        self.skipped = 0

    def away(self) -> bool:
        return time.monotonic() < self.away_until

    def failed(self, error: BaseException) -> None:
        now = time.monotonic()
        with self.lock:
            self.away_until = now + RETRY_SECONDS
            if self.since is None:
                self.since = now
            self.skipped += 1
            if now - self.logged_at < LOG_SECONDS:
                return
            self.logged_at, skipped, self.skipped = now, self.skipped, 0
        logger.warning("The cache at %s is unreachable (%s: %s); serving without it "
                       "(%d calls missed or skipped since the last report).",
                       self.location, type(error).__name__, error, skipped)

    def skip(self) -> None:
        with self.lock:
            self.skipped += 1

    def answered(self) -> None:
        """A call succeeded: the outage, if there was one, is over."""
        with self.lock:
            since, self.since = self.since, None
        if since is not None:
            logger.warning("The cache at %s answers again after %.1f s.", self.location,
                           time.monotonic() - since)


_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def outage_of(location: str) -> Outage:
    """One Outage per Redis and process: Django makes a cache object per thread."""
    with _outages_lock:
        found = _outages.get(location)
        if found is None:
            found = _outages[location] = Outage(location)
        return found


class GuardedRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, outage: Outage, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outage = outage

    def guarded(self, call: Callable[[], _T], missed: _T) -> _T:
        """``call()``, or ``missed`` when Redis is away or fails."""
        if self.outage.away():
            self.outage.skip()
            return missed
        try:
            result = call()
        except FAILURES as error:
            self.outage.failed(error)
            return missed
        if self.outage.since is not None:
            self.outage.answered()
        return result

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        return self.guarded(lambda: RedisCacheClient.add(self, key, value, timeout), False)

    def get(self, key: Any, default: Any) -> Any:
        return self.guarded(lambda: RedisCacheClient.get(self, key, default), default)

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        self.guarded(lambda: RedisCacheClient.set(self, key, value, timeout), None)

    def touch(self, key: Any, timeout: Any) -> bool:
        return self.guarded(lambda: RedisCacheClient.touch(self, key, timeout), False)

    def delete(self, key: Any) -> bool:
        return self.guarded(lambda: RedisCacheClient.delete(self, key), False)

    def get_many(self, keys: Any) -> dict:
        return self.guarded(lambda: RedisCacheClient.get_many(self, keys),
                            {})

    def has_key(self, key: Any) -> bool:
        return self.guarded(lambda: RedisCacheClient.has_key(self, key),
                            False)

    def set_many(self, data: Any, timeout: Any) -> None:
        self.guarded(lambda: RedisCacheClient.set_many(self, data, timeout), None)

    def delete_many(self, keys: Any) -> None:
        keys = list(keys)
        self.guarded(lambda: RedisCacheClient.delete_many(self, keys), None)

    def clear(self) -> bool:
        return self.guarded(lambda: RedisCacheClient.clear(self), False)

    def incr(self, key: Any, delta: int) -> int:
        value = self.guarded(lambda: RedisCacheClient.incr(self, key, delta), None)
        if value is None:  # the cache away: a miss, as Django's for a missing key
            raise ValueError(f"Key '{key}' not found.")
        return value


class RegistryRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS") or {})
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = GuardedRedisCacheClient
        location = (server if isinstance(server, str) else ",".join(server)) + (
            f" (prefix {self.key_prefix!r})")
        self._options = {**options, "outage": outage_of(location)}

    @property
    def client(self) -> GuardedRedisCacheClient:
        return cast("GuardedRedisCacheClient", self._cache)

    @property
    def outage(self) -> Outage:
        return self.client.outage

    def available(self) -> bool:
        """Does Redis answer now? A PING unless it is known away (for a decision that must
        not be taken on a guess, such as a rate limit that fails closed)."""
        return self.client.guarded(lambda: bool(self._cache.get_client().ping()), False)

    def _groups_key(self, group: str | None = None) -> str:
        return self.make_and_validate_key("groups" if group is None else f"group:{group}")

    def remember(self, group: str, key: str, timeout: int) -> None:
        """File ``key`` (a key of this cache) under ``group``, for forget_groups_except."""
        def call() -> None:
            client = self._cache.get_client(write=True)
            members = self._groups_key(group)
            pipe = client.pipeline(transaction=False)
            pipe.sadd(self._groups_key(), group)
            pipe.sadd(members, self.make_and_validate_key(key))
            pipe.expire(members, timeout)
            pipe.execute()

        self.client.guarded(call, None)

    def forget_groups_except(self, keep: str) -> int:
        """Delete the entries of every group but ``keep``; the number of groups dropped
        (0 when the cache is away: the entries expire by themselves)."""
        def call() -> int:
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

        return self.client.guarded(call, 0)


def cache_available(cache: Any) -> bool:
    """Whether ``cache`` answers now: a Redis one is asked; any other is in memory."""
    available = getattr(cache, "available", None)
    return True if available is None else bool(available())
