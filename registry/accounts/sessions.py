"""The session engine (``SESSION_ENGINE``): Django's database sessions, in a table that
also holds the id of the account signed in (``AccountSession``), so the signed-in
request's one query can join the account to its session (signed_in.py)."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError

# What Django makes (32 of [a-z0-9]), with room to spare: any other cookie value, a NUL
# the database would refuse among them, is no session.
_KEY = re.compile(r"[a-z0-9]{8,40}")


class SessionStore(DatabaseSessionStore):
    def _validate_session_key(self, key: str | None) -> bool:
        return bool(key) and _KEY.fullmatch(key or "") is not None

    @classmethod
    def get_model_class(cls) -> Any:
        from registry.accounts.models import AccountSession

        return AccountSession

    def create_model_instance(self, data: dict[str, Any]) -> Any:
        session: Any = super().create_model_instance(data)
        session.account_id = account_id(data)
        return session

    def preload(self, session_data: str | None) -> None:
        """The session as the visitor's query read it (``None``: no such session, or it
        expired), unless this request loaded it already: no second query for it."""
        if hasattr(self, "_session_cache"):
            return
        if session_data is None:
            self._session_key = None  # as load() does: a new session if one is saved
            self._session_cache = {}
        else:
            self._session_cache = self.decode(session_data)


def account_id(data: dict[str, Any]) -> int | None:
    """The signed-in account's id a session's data names, if a valid one."""
    from registry.accounts.models import User

    try:
        value = User._meta.pk.to_python(data.get(SESSION_KEY))
    except ValidationError:
        return None
    return value if isinstance(value, int) else None
