"""The registry generation: moved by every write the public side shows, and carrying
the registry's last change made here (the registry page's date, IANA XML's <updated>)."""

import ast
import datetime as dt
from pathlib import Path

import pytest

from registry.namespaces.actions import (
    namespace_register,
    namespace_set_status,
    namespace_update_record,
    namespaces_bulk_register,
)
from registry.namespaces.models import NamespaceEvent, RegistryGeneration
from registry.namespaces.public_cache import current_generation
from tests.factories import complete_values

REGISTRY = Path(__file__).resolve().parents[2] / "registry"


def generation() -> RegistryGeneration:
    return RegistryGeneration.objects.get(pk=1)


@pytest.fixture
def namespace(staff):
    return namespace_register(kind="formal", nid="genns", values=complete_values(),
                              date=dt.date(2026, 11, 1), actor=staff)


def newest_event() -> NamespaceEvent:
    return NamespaceEvent.objects.order_by("-created_at", "-id").first()


def test_a_registration_is_the_last_change(namespace):
    assert generation().real_change_at == newest_event().created_at
    assert current_generation().real_change_at == newest_event().created_at


@pytest.mark.parametrize("change", ["record", "deprecate"])
def test_record_edits_and_status_changes_move_it(namespace, staff, change):
    before = generation()
    if change == "record":
        namespace_update_record(namespace=namespace, changes={"registry_note": "See errata."},
                                reason="Ticket 1.", actor=staff)
    else:
        namespace_set_status(namespace=namespace, status="deprecated", comment="Superseded.",
                             actor=staff)
    after = generation()
    assert after.number == before.number + 1
    assert after.real_change_at == newest_event().created_at > before.real_change_at


def test_a_mirrored_import_moves_the_generation_but_is_no_change_made_here(registry):
    # `registry`: IANA's file imported; every row an "imported" event.
    assert NamespaceEvent.objects.filter(kind="imported").exists()
    assert generation().number > 0
    assert generation().real_change_at is None


def test_a_bulk_registration_is_one_move_dated_by_its_newest_event(db):
    before = generation().number
    made = namespaces_bulk_register(registrations=[
        {"nid": f"bulk-gen-{n}", "date": dt.date(2026, 1, 1),
         "versions": [(dt.date(2026, 1, 1), complete_values())]} for n in range(3)])
    assert made == 3
    assert generation().number == before + 1
    assert generation().real_change_at == newest_event().created_at


def test_an_empty_bulk_registration_changes_nothing(db):
    before = generation()
    assert namespaces_bulk_register(registrations=[]) == 0
    assert generation() == before and generation().number == before.number


def test_namespace_events_are_written_in_one_place_only():
    """record_namespace_events() is the one writer of NamespaceEvent rows, so the last
    change cannot be missed by a new action."""
    writers = []
    for path in REGISTRY.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr in {"create", "bulk_create"}
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "objects"
                    and isinstance(node.value.value, ast.Name)
                    and node.value.value.id == "NamespaceEvent"):
                writers.append(f"{path.relative_to(REGISTRY)}:{node.lineno}")
    assert len(writers) == 1 and writers[0].startswith("namespaces/actions.py:"), writers
