"""The registry's history machinery, shared by every app that keeps one.

- ``AppendOnlyModel``: rows that are inserted once and never updated or
  deleted through the ORM (``save()`` a second time, ``delete()``, and the
  queryset's ``update()``/``delete()``/``bulk_update()`` raise).
- ``EventGuardedState``: a model whose ``guarded_field`` (a status or a
  workflow state) changes only through ``save_with_event()``, which an action
  calls after writing the event row. A plain ``save()`` that changes it raises,
  so a state change without its event is impossible. The value the row was
  loaded with is taken in ``from_db`` (as Django's docs suggest for tracking
  changes), so loading a row never reads a deferred field.
- ``forwards``/``backwards``: the PostgreSQL triggers (used by migrations) that
  refuse UPDATE and DELETE on history tables, so even raw SQL cannot rewrite it.

This is integrity machinery, not business logic (cf. the IETF datatracker's
``save_with_history``); the rules of who may do what live in the workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from django.db import models

__all__ = [
    "AppendOnlyError",
    "AppendOnlyModel",
    "AppendOnlyQuerySet",
    "EventGuardedQuerySet",
    "EventGuardedState",
    "UnrecordedChange",
    "backwards",
    "forwards",
]


class AppendOnlyError(Exception):
    """An attempt to change or remove a row of the registry's history."""


class UnrecordedChange(Exception):
    """An attempt to change an event-guarded field without writing its event."""


class AppendOnlyQuerySet(models.QuerySet[Any]):
    """Rows are inserted, then never updated or deleted through the ORM."""

    def _refuse(self) -> AppendOnlyError:
        return AppendOnlyError(f"{self.model.__name__} rows are immutable history.")

    def update(self, **kwargs: Any) -> int:
        raise self._refuse()

    def delete(self) -> tuple[int, dict[str, int]]:
        raise self._refuse()

    def bulk_update(self, objs: Iterable[Any], fields: Iterable[str],
                    batch_size: int | None = None) -> int:
        raise self._refuse()

    def update_or_create(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse()


class AppendOnlyModel(models.Model):
    """History rows: ``save()`` inserts once, and there is no way back."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} {self.pk} is immutable history.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{type(self).__name__} {self.pk} is immutable history.")


class EventGuardedQuerySet(models.QuerySet[Any]):
    """Bulk updates may not change a model's event-guarded field either: such a
    change would have no event row."""

    def update(self, **kwargs: Any) -> int:
        self._refuse_guarded(kwargs)
        return super().update(**kwargs)

    def bulk_update(self, objs: Iterable[Any], fields: Iterable[str],
                    batch_size: int | None = None) -> int:
        fields = list(fields)
        self._refuse_guarded(fields)
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def _refuse_guarded(self, fields: Iterable[str]) -> None:
        model: Any = self.model
        if model.guarded_field in fields:
            raise UnrecordedChange(model.guard_message)


_UNLOADED = object()


class EventGuardedState(models.Model):
    """The field named by ``guarded_field`` changes only through ``save_with_event()``."""

    guarded_field = "state"
    guard_message = "Change this state through its action, which records the event."

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        attname = self._guarded_attname()
        current = self.__dict__.get(attname, _UNLOADED)
        if (not self._state.adding and current is not _UNLOADED
                and current != self._stored_value()):
            raise UnrecordedChange(self.guard_message)
        super().save(*args, **kwargs)
        self._recorded = self.__dict__.get(attname, _UNLOADED)

    @classmethod
    def _guarded_attname(cls) -> str:
        # A concrete column, never a relation's reverse side.
        field = cast("models.Field[Any, Any]", cls._meta.get_field(cls.guarded_field))
        return field.attname

    @classmethod
    def from_db(  # type: ignore[override]  # django-stubs 6 adds Django 6.0's fetch_mode; 5.2 has none
            cls, db: str | None, field_names: Any, values: Any) -> Any:
        instance = super().from_db(db, field_names, values)
        instance._recorded = instance.__dict__.get(cls._guarded_attname(), _UNLOADED)
        return instance

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        self._recorded = self.__dict__.get(self._guarded_attname(), _UNLOADED)

    def _stored_value(self) -> Any:
        recorded = getattr(self, "_recorded", _UNLOADED)
        if recorded is _UNLOADED:
            # Loaded without the guarded field (``only()``/``defer()``): ask the row.
            recorded = (type(self)._base_manager.filter(pk=self.pk)
                        .values_list(self._guarded_attname(), flat=True).first())
        return recorded

    def save_with_event(self, **kwargs: Any) -> None:
        """Save a change of the guarded field whose event the caller has just written."""
        self._recorded = self.__dict__.get(self._guarded_attname(), _UNLOADED)
        self.save(**kwargs)


TRIGGER_FUNCTION = """
CREATE OR REPLACE FUNCTION registry_refuse_history_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% rows are immutable history (%)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""

MigrationCode = Callable[[Any, Any], None]


def forwards(tables: Iterable[str]) -> MigrationCode:
    """A RunPython step that puts the append-only trigger on ``tables`` (PostgreSQL)."""
    names = list(tables)

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(TRIGGER_FUNCTION, params=None)
        for table in names:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION registry_refuse_history_change();"
            )

    return run


def backwards(tables: Iterable[str]) -> MigrationCode:
    """The reverse of :func:`forwards`."""
    names = list(tables)

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in names:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};")

    return run
