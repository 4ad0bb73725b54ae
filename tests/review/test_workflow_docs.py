"""docs/workflow.md's states and transitions tables are the code's: written by
``python manage.py docs_tables`` from registry/review/workflow/tables.py, and checked
here, so a row or a column added to either table fails until the manual says it."""

import dataclasses
import shutil

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from registry.accounts.roles import STAFF_ROLE
from registry.review.models import State
from registry.review.workflow import STATES, TRANSITIONS
from registry.review.workflow.tables import _t
from registry.review.workflow_docs import (
    MarkersMissing,
    begin,
    end,
    rewrite,
    stale,
    states_table,
    tables,
    transitions_table,
)


def test_the_manual_says_what_the_code_says():
    call_command("docs_tables", "--check")


def test_every_state_and_transition_is_a_row():
    assert len(states_table()) == 2 + len(STATES)
    assert len(transitions_table()) == 2 + len(TRANSITIONS)
    for name in (*STATES, *TRANSITIONS):
        assert sum(f"(`{name}`)" in line for line in (*states_table(), *transitions_table())
                   ) == 1, name


def test_a_changed_state_row_fails_the_check(monkeypatch):
    monkeypatch.setitem(STATES, State.IN_REVIEW,
                        dataclasses.replace(STATES[State.IN_REVIEW], review_clock=False))
    with pytest.raises(CommandError, match="docs/workflow.md: states table"):
        call_command("docs_tables", "--check")


def test_a_new_transition_fails_the_check(monkeypatch):
    monkeypatch.setitem(TRANSITIONS, "reopen", _t(
        "reopen", "Reopen", [State.CLOSED], State.IN_REVIEW, [STAFF_ROLE], "Reopened."))
    with pytest.raises(CommandError, match="docs/workflow.md: transitions table"):
        call_command("docs_tables", "--check")


def test_the_command_rewrites_only_between_the_markers(monkeypatch, tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(settings.BASE_DIR / "docs" / "workflow.md", tmp_path / "docs" / "workflow.md")
    monkeypatch.setitem(TRANSITIONS, "reopen", _t(
        "reopen", "Reopen", [State.CLOSED], State.IN_REVIEW, [STAFF_ROLE], "Reopened."))
    before = (tmp_path / "docs" / "workflow.md").read_text()
    assert stale(tmp_path, write=True) == ["docs/workflow.md: transitions table"]
    after = (tmp_path / "docs" / "workflow.md").read_text()
    assert "| Reopen (`reopen`) | Closed | In public review | IANA staff |" in after
    assert after.split(begin("transitions table"))[0] == before.split(
        begin("transitions table"))[0]
    assert after.split(end("transitions table"))[1] == before.split(end("transitions table"))[1]
    assert stale(tmp_path, write=False) == []


def test_a_document_without_markers_is_said_so():
    with pytest.raises(MarkersMissing, match="no markers for the states table"):
        rewrite("# Workflow\n\nNo table here.\n", tables()[0])
