"""A generated permission matrix: every URL pattern of the URL conf x every persona x
GET and POST x every state a request can be in, each answer computed from the policy
functions of registry.review.workflow (never written out by hand), and a test that
fails when a URL pattern exists that the matrix does not cover.

The requests are built once; every POST runs in a savepoint that is rolled back, so
each case starts from the same states."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from registry.accounts.roles import (
    EXPERT_GROUP,
    EXPERT_ROLE,
    REGISTRANT_ROLE,
    ROLE_GROUPS,
    STAFF_GROUP,
    STAFF_ROLE,
)
from registry.review import actions, workflow
from registry.review.models import Comment, RegistrationRequest
from tests.factories import complete_values, make_registration, make_user
from tests.html import page, texts
from tests.review.helpers import readable, registration_in

pytestmark = pytest.mark.django_db

# One persona per role of the workflow (workflow.ROLE_NAMES), plus those with none: a
# visitor and a signed-in person who is not the request's registrant.
ROLE_PERSONAS = {REGISTRANT_ROLE: "registrant", EXPERT_ROLE: "expert", STAFF_ROLE: "staff"}
PERSONAS = ("anonymous", "other", *(ROLE_PERSONAS[role] for role in workflow.ROLE_NAMES))
# Every state of the table, and a draft that was withdrawn without ever being submitted
# (the one final request that stays private).
STATES = (*workflow.STATES, "withdrawn_draft")
INTERNAL = "MX-INTERNAL-ONLY-FOR-EXPERTS"
TO_REGISTRANT = "MX-TO-THE-REGISTRANT"
SECRET_NID = "mxsecretdraft"

# Patterns the matrix covers as groups, by where they are mounted.
GROUPS = ("accounts/", "admin/")


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    """The matrix posts many comments as one person; rate limits have tests of their own."""
    settings.RATE_LIMITS = {group: "100000/m" for group in settings.RATE_LIMITS}


@dataclasses.dataclass
class World:
    people: dict
    requests: dict[str, RegistrationRequest]
    namespace_nid: str
    clients: dict[str, Client]


# The role groups of registry.accounts.roles, by the workflow role they give.
GROUP_OF_ROLE = {EXPERT_ROLE: EXPERT_GROUP, STAFF_ROLE: STAFF_GROUP}


def _build() -> World:
    people = {
        "registrant": make_user("registrant@example.org", organisation="Example Archive"),
        "other": make_user("other@example.org", organisation="Other Ltd"),
        **{ROLE_PERSONAS[role]: make_user(f"{ROLE_PERSONAS[role]}@example.org", roles=[group])
           for role, group in GROUP_OF_ROLE.items()},
    }
    requests = {}
    for state in STATES:
        base = state.replace("withdrawn_draft", "draft")
        nid = SECRET_NID if state == "draft" else "mx" + state.replace("_", "")
        registration = registration_in(base, path="community", people=people, nid=nid)
        if state == "withdrawn_draft":
            registration = actions.registration_transition(registration=registration,
                                                           transition="withdraw",
                                                           actor=people["registrant"])
        requests[state] = registration
    review = requests["in_review"]
    actions.registration_comment(registration=review, actor=people["expert"], audience="experts",
                                 body=INTERNAL)
    actions.registration_comment(registration=review, actor=people["expert"], audience="registrant",
                                 body=TO_REGISTRANT)
    # A case-twin of the request in review: close is then on offer.
    make_registration(people["other"], nid="MXINREVIEW")
    for registration in requests.values():
        registration.refresh_from_db()
    clients = {}
    for persona in PERSONAS:
        client = Client()
        if persona != "anonymous":
            client.force_login(people[persona])
        clients[persona] = client
    registered = requests["registered"].published_version.namespace
    return World(people, requests, registered.nid, clients)


def _user(world: World, persona: str):
    return AnonymousUser() if persona == "anonymous" else world.people[persona]


# --- What the policy says each answer is --------------------------------------------------

def _refusal_status(problem: workflow.Refused | None) -> int:
    return 302 if problem is None else problem.status


def _on_registration(world, persona, state, method, decide: Callable) -> int:
    """The common shape of a request's sub-pages: log in first, then the request is
    visible or it does not exist, then the policy decides."""
    if persona == "anonymous":
        return 302
    registration = world.requests[state]
    if method == "GET":
        return 405
    if not workflow.can_view(registration, _user(world, persona)):
        return 404
    return decide(registration, _user(world, persona))


def expect_registration_page(world, persona, state, method):
    if method == "POST":
        return 405
    return 200 if workflow.can_view(world.requests[state], _user(world, persona)) else 404


def expect_round_txt(world, persona, state, method):
    if method == "POST":
        return 405
    registration = world.requests[state]
    if not workflow.can_view(registration, _user(world, persona)):
        return 404
    return 200 if registration.rounds.filter(number=1).exists() else 404


def expect_edit(world, persona, state, method):
    if persona == "anonymous":
        return 302
    registration, user = world.requests[state], _user(world, persona)
    problem = workflow.edit_refusal(registration, user)
    if not workflow.can_view(registration, user) or isinstance(problem, workflow.NotAllowed):
        return 404
    if method == "GET":
        return 200 if problem is None else 302
    return 302 if problem is None else problem.status


def expect_transition(name):
    move = workflow.TRANSITIONS[name]

    def expect(world, persona, state, method):
        return _on_registration(world, persona, state, method, lambda registration,
                                user: _refusal_status(
            workflow.refusal(registration, move, user,
                             inputs=workflow.Inputs(comment="Matrix.", early_reason="Matrix."))))
    return expect


def expect_comment(audience):
    def expect(world, persona, state, method):
        return _on_registration(world, persona, state, method, lambda registration,
                                user: _refusal_status(
            workflow.comment_refusal(registration, user, audience)))
    return expect


def expect_assign(world, persona, state, method):
    return _on_registration(world, persona, state, method, lambda registration,
                            user: _refusal_status(
        workflow.assign_refusal(registration, user, world.people["expert"])))


def expect_standardisation(world, persona, state, method):
    return _on_registration(world, persona, state, method, lambda registration,
                            user: _refusal_status(
        workflow.standardisation_refusal(registration, user)))


def expect_signed_in_page(can: Callable | None = None):
    def expect(world, persona, state, method):
        if persona == "anonymous":
            return 302
        if method == "POST":
            return 405
        return 200 if can is None or can(_user(world, persona)) else 403
    return expect


def expect_availability(world, persona, state, method):
    """An expert's own availability page: log in; only experts; a valid post (the
    matrix sends nothing: available, no limit) saves and goes back to the page."""
    if persona == "anonymous":
        return 302
    if not workflow.can_set_availability(_user(world, persona)):
        return 403
    return 200 if method == "GET" else 302


def expect_public(get: int = 200, post: int = 405):
    def expect(world, persona, state, method):
        return get if method == "GET" else post
    return expect


def expect_staff_page(get: int = 200, post: int = 200):
    """The IANA staff pages: log in first; then only staff (accounts.roles decides)."""
    def expect(world, persona, state, method):
        if persona == "anonymous":
            return 302
        if not workflow.can_use_staff_pages(_user(world, persona)):
            return 403
        return get if method == "GET" else post
    return expect


def expect_resend(world, persona, state, method):
    """Sending a message again: log in, POST only, and a message of the request's own
    (the matrix names none, so whoever may see the request meets a 404)."""
    if persona == "anonymous":
        return 302
    return 405 if method == "GET" else 404


def expect_quarantined(allowed: str):
    """A quarantined message (the matrix names none): log in, the method ``allowed``
    only, IANA staff only (workflow.can_handle_quarantine), then a 404."""
    def expect(world, persona, state, method):
        if persona == "anonymous":
            return 302
        if method != allowed:
            return 405
        return 404 if workflow.can_handle_quarantine(_user(world, persona)) else 403
    return expect


def expect_new(world, persona, state, method):
    if persona == "anonymous":
        return 302
    return 200 if method == "GET" else 400  # an empty form is marked, never saved


# --- The patterns: how to build their arguments, what to send, what to expect ------------

@dataclasses.dataclass(frozen=True)
class Case:
    expect: Callable
    args: Callable = lambda world, state: ()
    data: Callable = lambda world, state: {}
    per_state: bool = False


def _pk(world, state):
    return (world.requests[state].pk,)


def _edit_data(world, state):
    registration = world.requests[state]
    return {"kind": "formal", "proposed_nid": registration.proposed_nid or "mxedit",
            "edit_version": registration.edit_version,
            **complete_values(world.people["registrant"]), "save": "1"}


COVERED: dict[str, list[Case]] = {
    "namespaces:registry": [Case(expect_public())],
    "namespaces:search": [Case(expect_public())],
    "namespaces:check": [Case(expect_public(post=200))],
    "namespaces:detail": [Case(expect_public(), args=lambda w, s: (w.namespace_nid,))],
    "namespaces:template-txt": [Case(expect_public(), args=lambda w, s: (w.namespace_nid,))],
    "namespaces:version": [Case(expect_public(), args=lambda w, s: (w.namespace_nid, 1))],
    "namespaces:version-txt": [Case(expect_public(), args=lambda w, s: (w.namespace_nid, 1))],
    "namespaces:diff": [Case(expect_public(), args=lambda w, s: (w.namespace_nid,))],
    "namespaces:registry-xml": [Case(expect_public())],
    "namespaces:registry-csv": [Case(expect_public())],
    "namespaces:feed": [Case(expect_public())],
    "namespaces:api-list": [Case(expect_public())],
    "namespaces:api-detail": [Case(expect_public(), args=lambda w, s: (w.namespace_nid,))],
    "namespaces:api-check": [Case(expect_public(get=400, post=400))],
    "namespaces:api-schema": [Case(expect_public())],
    "namespaces:api-equivalent": [Case(expect_public(get=400))],  # no ?a=&b=
    "namespaces:profiles-json": [Case(expect_public())],
    "namespaces:resolve-query": [Case(expect_public(get=200))],  # no ?urn=: the form
    # The matrix's namespace declares no resolver: a 404 that says so.
    "namespaces:resolve": [Case(expect_public(get=404),
                                args=lambda w, s: (f"urn:{w.namespace_nid}:1",))],
    "namespaces:history": [Case(expect_public(), args=lambda w, s: (w.namespace_nid,))],
    "namespaces:formal-csv": [Case(expect_public())],
    "namespaces:informal-csv": [Case(expect_public())],
    "namespaces:staff-namespace-find": [Case(expect_staff_page(get=302, post=302))],
    "namespaces:staff-namespace": [Case(expect_staff_page(),
                                        args=lambda w, s: (w.namespace_nid,))],
    "accounts:list": [Case(expect_staff_page())],
    "accounts:account": [Case(expect_staff_page(),
                              args=lambda w, s: (w.people["registrant"].pk,))],
    "review:resend-mail": [Case(expect_resend,
                                args=lambda w, s: (w.requests["in_review"].pk, 0))],
    "healthz": [Case(expect_public())],
    "healthz-live": [Case(expect_public())],
    "healthz-ready": [Case(expect_public())],
    "favicon": [Case(expect_public())],
    "nid-check": [Case(expect_public())],
    "review:my-requests": [Case(expect_signed_in_page())],
    "review:new": [Case(expect_new)],
    "review:public-review": [Case(expect_public())],
    "review:dashboard": [Case(expect_signed_in_page(workflow.can_see_dashboard))],
    "review:staff-queue": [Case(expect_signed_in_page(workflow.can_see_staff_queue))],
    "review:quarantine": [Case(expect_signed_in_page(workflow.can_handle_quarantine))],
    "review:quarantine-attach": [Case(expect_quarantined("POST"), args=lambda w, s: (0,),
                                      data=lambda w, s: {"m0-registration": "1",
                                                         "m0-audience": "public"})],
    "review:quarantine-raw": [Case(expect_quarantined("GET"), args=lambda w, s: (0,))],
    "review:availability": [Case(expect_availability)],
    "stats": [Case(expect_public())],
    "stats-json": [Case(expect_public())],
    "review:request": [Case(expect_registration_page, args=_pk, per_state=True)],
    "review:round-txt": [Case(expect_round_txt, args=lambda w, s: (*_pk(w, s), 1),
                              per_state=True)],
    "review:edit": [Case(expect_edit, args=_pk, data=_edit_data, per_state=True)],
    "review:transition": [
        Case(expect_transition(name), args=lambda w, s, name=name: (*_pk(w, s), name),
             data=lambda w, s: {"comment": "Matrix.", "early_reason": "Matrix."},
             per_state=True)
        for name in workflow.TRANSITIONS
    ],
    "review:comment": [
        Case(expect_comment(audience), args=_pk,
             data=lambda w, s, audience=audience: {"body": "Matrix.", "audience": audience},
             per_state=True)
        for audience in Comment.Audience.values
    ],
    "review:assign": [Case(expect_assign, args=_pk,
                           data=lambda w, s: {"expert": w.people["expert"].pk},
                           per_state=True)],
    "review:standardisation": [Case(expect_standardisation, args=_pk,
                                    data=lambda w, s: {"involved": "1", "comment": ""},
                                    per_state=True)],
}


def _walk(patterns, prefix="", namespace=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            ns = entry.namespace or ""
            yield from _walk(entry.url_patterns, route,
                             f"{namespace}{ns}:" if ns else namespace)
        elif isinstance(entry, URLPattern):
            yield route, f"{namespace}{entry.name}" if entry.name else route


def _app_patterns() -> dict[str, str]:
    return {name: route for route, name in _walk(get_resolver().url_patterns)
            if not route.startswith(GROUPS)}


def test_every_url_pattern_is_covered_by_the_matrix():
    patterns = _app_patterns()
    assert set(patterns) - set(COVERED) == set(), "URL patterns the matrix does not cover"
    assert set(COVERED) - set(patterns) == set(), "the matrix lists patterns that are gone"


def test_the_personas_and_states_are_the_sources():
    """Every role group has its persona, every role of the workflow is held by one
    persona, and every state of the table is in the matrix: a new role or state is
    covered, or this fails."""
    assert set(GROUP_OF_ROLE.values()) == set(ROLE_GROUPS)
    assert set(ROLE_PERSONAS) == set(workflow.ROLE_NAMES)
    assert set(workflow.STATES) <= set(STATES)
    world = _build()
    for role, persona in ROLE_PERSONAS.items():
        held = {p for p in PERSONAS if role in workflow.roles_on(
            _user(world, p), world.requests[workflow.INITIAL_STATE])}
        assert held == {persona}, role
    for state in workflow.STATES:
        assert world.requests[state].state == state


def _visible_secrets(world: World, persona: str) -> set[str]:
    """What the persona may read, of the markers planted in the world."""
    user = _user(world, persona)
    review = world.requests["in_review"]
    seen = set()
    if workflow.can_view(world.requests["draft"], user):
        seen.add(SECRET_NID)
    for comment in review.comments.all():
        if workflow.can_read_comment(comment, user):
            seen.add(comment.body)
    return seen


MARKERS = (SECRET_NID, INTERNAL, TO_REGISTRANT)


def _gives_away(response, marker: str) -> bool:
    """Whether a response shows ``marker``: anywhere in its bytes and, for a page,
    anywhere a reader finds it once the HTML is parsed (the visible text, attribute
    values, comments; in any letter case), so that neither an escape nor markup between
    its letters can hide a leak."""
    if marker in response.getvalue().decode(errors="replace"):
        return True
    if not response.get("Content-Type", "").startswith("text/html"):
        return False
    return marker.casefold() in readable(page(response)).casefold()


def test_the_matrix():
    world = _build()
    mismatches, leaks, checked = [], [], 0
    for name, cases in COVERED.items():
        for case in cases:
            for state in (STATES if case.per_state else (None,)):
                url = reverse(name, args=case.args(world, state))
                for persona in PERSONAS:
                    client = world.clients[persona]
                    for method in ("GET", "POST"):
                        expected = case.expect(world, persona, state, method)
                        if method == "GET":
                            response = client.get(url)
                        else:  # every write is undone: each case starts from the same world
                            with transaction.atomic():
                                response = client.post(url, case.data(world, state))
                                transaction.set_rollback(True)
                        checked += 1
                        where = f"{method} {url} ({name}, {state or '-'}) as {persona}"
                        if response.status_code != expected:
                            mismatches.append(f"{where}: {response.status_code}, "
                                              f"expected {expected}")
                        if method == "GET" and response.status_code == 200:
                            allowed = _visible_secrets(world, persona)
                            leaks += [f"{where} shows {marker}" for marker in MARKERS
                                      if marker not in allowed
                                      and _gives_away(response, marker)]
    assert not mismatches, "\n".join(mismatches[:60])
    assert not leaks, "\n".join(leaks[:60])
    assert checked >= 2000


def test_the_matrix_sees_what_it_must(client):
    """The markers are where their audience looks, so the leak check above is not
    vacuous: the registrant sees their draft and the comment to them, an expert the
    internal comment."""
    world = _build()
    draft, review = world.requests["draft"], world.requests["in_review"]
    responses = {persona: world.clients[persona].get(reverse("review:request",
                                                             args=[review.pk]))
                 for persona in PERSONAS}
    comments = "//*[@id='comments']/following-sibling::article//*[contains(@class, 'comment-body')]"
    assert INTERNAL in texts(page(responses["expert"]), comments)
    assert TO_REGISTRANT in texts(page(responses["registrant"]), comments)
    assert not _gives_away(responses["staff"], INTERNAL)
    assert not _gives_away(responses["registrant"], INTERNAL)
    registrant = world.clients["registrant"]
    draft_page = page(registrant.get(reverse("review:request", args=[draft.pk])))
    assert texts(draft_page, "//h1//*[@class='nid']") == [SECRET_NID]
    mine = page(registrant.get(reverse("review:my-requests")))
    assert SECRET_NID in texts(mine, "//table[@id='my-requests']//td[@data-label='Namespace']"
                                     "//*[@class='nid']")


def test_the_groups_answer_without_error():
    """allauth's and the admin's own patterns, as groups: the admin lets in only staff
    accounts; every allauth page without arguments answers without a server error."""
    world = _build()
    for persona in PERSONAS:
        response = world.clients[persona].get("/admin/")
        user = _user(world, persona)
        assert response.status_code == (200 if getattr(user, "is_staff", False) else 302)
    for route, _name in _walk(get_resolver().url_patterns):
        if route.startswith("accounts/") and "<" not in route and "(?P" not in route:
            for persona in PERSONAS:
                assert world.clients[persona].get("/" + route).status_code < 500, route


def test_the_read_filters_agree_with_the_predicates():
    """visible_to(user) on requests and comments says what can_view and
    can_read_comment say, for every persona."""
    world = _build()
    requests = list(RegistrationRequest.objects.all())
    comments = list(Comment.objects.select_related("registration"))
    for persona in PERSONAS:
        user = _user(world, persona)
        assert {r.pk for r in RegistrationRequest.objects.visible_to(user)} == {
            r.pk for r in requests if workflow.can_view(r, user)}, persona
        assert {c.pk for c in Comment.objects.visible_to(user)} == {
            c.pk for c in comments if workflow.can_read_comment(c, user)}, persona
