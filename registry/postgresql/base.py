"""Django's PostgreSQL backend, whose health check of a persistent connection is skipped
while the connection is busy.

With ``conn_health_checks`` Django sends ``SELECT 1`` before the first query of every
request that reuses a connection: a second round trip to PostgreSQL for a cached page,
whose only query is the registry generation. Here the check is made only when the
connection has been idle for ``CHECK_AFTER_IDLE_SECONDS``, when a server restart or an
idle timeout may have closed it; a connection that served a request less than that
ago without an error (one with an error is closed at the end of its request) is used as
it is. A server that goes away during a busy second fails the queries already in
flight, as it would with the check.
"""

from __future__ import annotations

import time

from django.db.backends.postgresql import base

CHECK_AFTER_IDLE_SECONDS = 1.0


class DatabaseWrapper(base.DatabaseWrapper):
    _last_used = float("-inf")
    health_check_done: bool  # set by Django's BaseDatabaseWrapper

    def close_if_health_check_failed(self) -> None:
        now = time.monotonic()
        if (self.connection is not None and not self.health_check_done
                and now - self._last_used < CHECK_AFTER_IDLE_SECONDS):
            self.health_check_done = True
        else:
            super().close_if_health_check_failed()
        self._last_used = now
