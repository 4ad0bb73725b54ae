"""Lists that must repeat their source (a package that imports nothing from Django, a
test's walk of the site) are held equal to it here; the others are derived from it.
Adding a state, a template field or a persona fails here until every copy follows."""

import dataclasses

import pytest
from django import forms
from django.db import models

from registry.namespaces.template import (
    SINGLE_LINE_FIELDS,
    STORED_FIELDS,
    TEXT_FIELDS,
    TemplateFields,
)
from registry.review import workflow
from registry.review.forms import RequestForm
from registry.templates_text import TEXT_FIELDS as PARSER_FIELDS
from tests import site_pages
from tests.review.helpers import FAST_ROUTES, ROUTES


def test_the_parser_reads_the_models_fields_in_order():
    """registry.templates_text repeats the field list (it imports nothing from Django)."""
    assert PARSER_FIELDS == TEXT_FIELDS


def test_single_line_fields_are_the_models_one_line_fields():
    # Every stored field: the published ones and IANA's private contact.
    one_line = tuple(name for name in STORED_FIELDS
                     if isinstance(TemplateFields._meta.get_field(name), models.CharField))
    assert one_line == SINGLE_LINE_FIELDS
    fields = RequestForm(revision=True).fields  # a revision's form has every text field
    for name in STORED_FIELDS:
        assert isinstance(fields[name].widget, forms.Textarea) == (
            name not in SINGLE_LINE_FIELDS), name


def test_the_routes_reach_every_state():
    assert set(ROUTES) == set(FAST_ROUTES) == set(workflow.STATES)
    assert all(route is not None for route in ROUTES.values())
    for routes in (ROUTES, FAST_ROUTES):
        for state, route in routes.items():
            if route is None:
                continue
            reached = workflow.INITIAL_STATE
            for name, _ in route:
                move = workflow.TRANSITIONS[name]
                assert reached in move.sources
                reached = move.target
            assert reached == state


@pytest.mark.django_db
def test_the_site_walk_has_a_page_list_per_persona():
    assert set(site_pages.people()) == set(site_pages.PERSONAS)


@pytest.mark.django_db
def test_the_site_walk_shows_a_request_in_every_state():
    site = site_pages.build_site()
    assert set(workflow.STATES) <= set(site.requests)
    assert all(site.requests[state].state == state for state in workflow.STATES)
    assert set(site.pages) == set(site_pages.PERSONAS)
    seen = {page.url for pages in site.pages.values() for page in pages}
    for state in workflow.STATES:
        assert f"/requests/{site.requests[state].pk}/" in seen, state


def test_every_state_row_is_complete():
    for row in workflow.STATES.values():
        assert all(getattr(row, f.name) is not None for f in dataclasses.fields(row))
