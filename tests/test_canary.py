"""The canary crawl: a unique marker in every private place, every URL the URLconf and
the database give (the admin's changelists and change pages included) visited as an
anonymous visitor and as each persona of tests/conftest.py, every message of the
outbox read; a marker that reaches someone the visibility policy does not let read
it fails the test.

Nothing here is a list to keep up to date: the private fields are read from the
template models (TEXT_FIELDS, PRIVATE_FIELDS), the URLs from the URLconf and the
admin's registry, the personas from tests/conftest.py, and each marker's audience
is asked of registry.review.workflow. A new page, field or persona is crawled
without editing this file."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from email.message import EmailMessage as RawMessage
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import AnonymousUser
from django.core import mail
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from registry.accounts.models import User
from registry.namespaces.actions import namespace_update_record
from registry.namespaces.models import Namespace, TemplateVersion
from registry.namespaces.template import PRIVATE_FIELDS, SINGLE_LINE_FIELDS, TEXT_FIELDS
from registry.review import actions, workflow
from registry.review.mailaddress import reply_address
from registry.review.models import Comment, InboundMessage, OutboundMessage, RegistrationRequest
from tests.factories import approve, complete_values, make_registration, make_user

# The personas are the fixtures of tests/conftest.py that make a user.
PERSONAS = re.findall(r"def (\w+)\(db\):\n\s+return make_user\(",
                      (Path(__file__).parent / "conftest.py").read_text())
MARKER = re.compile(r"cnry\d+x")
QUERY_KEYS = ("q", "nid")  # what the search, the NID check and the like read
MAX_COMBINATIONS = 12  # URL parameters filled per pattern (each persona visits them all)


class Canaries:
    """The markers seeded, each with who may read it (a question to the policy)."""

    def __init__(self) -> None:
        self.places: dict[str, tuple[str, Callable[[Any], bool]]] = {}
        self.count = itertools.count(1)

    def new(self, place: str, audience: Callable[[Any], bool]) -> str:
        token = f"cnry{next(self.count)}x"
        self.places[token] = (place, audience)
        return token

    def values(self, place: str, fields: tuple[str, ...],
               audience: Callable[[Any], bool]) -> dict[str, str]:
        """A marker in each of ``fields``, each in the form its field takes."""
        values = {}
        for name in fields:
            token = self.new(f"{place}: {name}", audience)
            values[name] = (f"{token}@home.example" if name.endswith("email") else
                            token if name in SINGLE_LINE_FIELDS else f"Text {token} here.")
        return values


def _seed(people: dict[str, User], canaries: Canaries) -> None:
    registrant, expert, staff = people["registrant"], people["expert"], people["staff"]
    other = people["other_registrant"]

    # An account name kept for IANA: its owner registers, comments, hands over.
    quiet = make_user("quiet@example.org")
    quiet.first_name = canaries.new("account name",
                                    lambda v: workflow.can_see_account_name(quiet, v))
    quiet.save(update_fields=["first_name"])
    holder: dict[str, Any] = {}
    private = canaries.values("private contact", PRIVATE_FIELDS,
                              lambda v: workflow.can_see_private_contact(holder["r"], v))
    registered = make_registration(quiet, nid="canaryns", registrant_organisation="Quiet Org",
                                   contact_name="URN desk", **private)
    holder["r"] = registered
    actions.registration_comment(registration=registered, actor=quiet, body="Glad to help.",
                                 audience=Comment.Audience.PUBLIC)
    approve(registered, expert, staff, register=True)
    namespace = Namespace.objects.by_nid("canaryns").get()
    namespace_update_record(namespace=namespace, changes={"holder": other},
                            reason="Handed to its new keeper.", actor=staff)
    actions.registration_create(actor=other, revises=namespace)  # the new holder's draft

    # An experts-only comment.
    in_review = make_registration(registrant, nid="canaryreview")
    box: dict[str, Comment] = {}
    box["c"] = actions.registration_comment(
        registration=in_review, actor=expert, audience=Comment.Audience.EXPERTS,
        body=canaries.new("internal comment", lambda v: workflow.can_read_comment(box["c"], v)))

    # An expert's internal answer by mail, from their reply address.
    answer = RawMessage()
    answer["From"] = f"Expert <{expert.email}>"
    answer["To"] = reply_address(registration_pk=in_review.pk, user_pk=expert.pk, version=0)
    answer["Subject"] = "Re: the archive"
    answer["Message-ID"] = "<canary-answer@elsewhere.example>"
    placed: dict[str, InboundMessage] = {}
    answer.set_content(canaries.new("internal mail answer",
                                    lambda v: workflow.can_read_message(placed["m"], v)))
    placed["m"] = actions.inbound_mail_receive(raw=bytes(answer))
    assert placed["m"].comment.audience == Comment.Audience.EXPERTS

    # A draft, and a withdrawn draft: every field.
    for nid, withdraw in (("canarydraft", False), ("canarywithdrawn", True)):
        seen: dict[str, RegistrationRequest] = {}
        values = canaries.values(nid, TEXT_FIELDS + PRIVATE_FIELDS,
                                 lambda v, seen=seen: workflow.can_view(seen["r"], v))
        proposed = canaries.new(f"{nid}: proposed NID",
                                lambda v, seen=seen: workflow.can_view(seen["r"], v))
        draft = actions.registration_create(actor=registrant, proposed_nid=proposed,
                                            values=values)
        seen["r"] = draft
        if withdraw:
            actions.registration_transition(registration=draft, transition="withdraw",
                                            actor=registrant)

    # A working copy: edits after a round was submitted and sent back.
    sent_back = make_registration(registrant, nid="canaryedit")
    sent_back = actions.registration_transition(registration=sent_back,
                                                transition="request_changes", actor=expert,
                                                comment="Please say more.")
    edits = canaries.values("working copy", TEXT_FIELDS,
                            lambda v: workflow.can_read_working_copy(sent_back, v))
    edited_nid = canaries.new("working copy: proposed NID",
                              lambda v: workflow.can_read_working_copy(sent_back, v))
    actions.registration_update(registration=sent_back, actor=registrant,
                                edit_version=sent_back.edit_version, kind="formal",
                                proposed_nid=edited_nid, fast_track=False,
                                values={**complete_values(registrant), **edits})

    # A message nobody could be credited with: the quarantine.
    held: dict[str, InboundMessage] = {}
    message = RawMessage()
    message["From"] = "Stranger <stranger@elsewhere.example>"
    message["To"] = "urn-registry@iana.example"
    message["Subject"] = canaries.new("quarantined subject",
                                      lambda v: workflow.can_read_message(held["m"], v))
    message["Message-ID"] = "<canary-1@elsewhere.example>"
    message.set_content(canaries.new("quarantined text",
                                     lambda v: workflow.can_read_message(held["m"], v)))
    held["m"] = actions.inbound_mail_receive(raw=bytes(message))
    assert held["m"].outcome in InboundMessage.QUARANTINE


def _patterns(resolver: URLResolver, prefix: str = "") -> Iterator[tuple[str, list[str]]]:
    """Every route of the URLconf (the admin's come from its registry), its parameters."""
    for entry in resolver.url_patterns:
        route = str(entry.pattern)
        if isinstance(entry, URLResolver):
            if entry.namespace != "admin":
                yield from _patterns(entry, prefix + route)
        elif isinstance(entry, URLPattern) and not route.startswith("^"):
            yield prefix + route, re.findall(r"<(?:\w+:)?(\w+)>", route)


def _fillings() -> dict[str, list[str]]:
    """Values for a route's parameters, from the database."""
    nids = list(Namespace.objects.values_list("nid", flat=True))
    requests = [str(pk) for pk in RegistrationRequest.objects.values_list("pk", flat=True)]
    people = [str(pk) for pk in User.objects.values_list("pk", flat=True)]
    numbers = [str(n) for n in sorted(set(
        TemplateVersion.objects.values_list("number", flat=True)) | {1, 2})]
    messages = [str(pk) for pk in itertools.chain(
        OutboundMessage.objects.values_list("pk", flat=True)[:3],
        InboundMessage.objects.values_list("pk", flat=True))]
    return {"nid": nids, "pk": requests + people, "number": numbers,
            "message_pk": messages, "urn": [f"urn:{nid}:1" for nid in nids],
            "*": requests + people + nids}


def _urls() -> list[str]:
    fillings = _fillings()
    urls = []
    for route, params in _patterns(get_resolver()):
        choices = [fillings.get(name, fillings["*"]) for name in params]
        for values in itertools.islice(itertools.product(*choices), MAX_COMBINATIONS):
            url = route
            for name, value in zip(params, values, strict=True):
                url = re.sub(rf"<(?:\w+:)?{name}>", value, url, count=1)
            urls.append("/" + url.replace("^", "").replace("$", ""))
    return sorted(set(urls))


def _admin_urls() -> list[str]:
    """Every admin changelist, and the change page of every object (every request and
    message, the first rows of other models)."""
    urls = [reverse("admin:index")]
    for model in admin.site._registry:
        opts = model._meta
        urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        rows = model._default_manager.order_by("-pk").values_list("pk", flat=True)
        if model not in (RegistrationRequest, OutboundMessage, InboundMessage):
            rows = rows[:4]
        urls += [reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[pk])
                 for pk in rows]
    return urls


def _body(response) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", "replace")


def _leaks(canaries: Canaries, text: str, viewer: Any) -> list[str]:
    return [canaries.places[token][0] for token in set(MARKER.findall(text))
            if token in canaries.places and not canaries.places[token][1](viewer)]


@pytest.mark.django_db
def test_no_marker_reaches_anyone_beyond_its_audience(request, django_capture_on_commit_callbacks,
                                                     settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    people = {name: request.getfixturevalue(name) for name in PERSONAS}
    canaries = Canaries()
    with django_capture_on_commit_callbacks(execute=True):
        _seed(people, canaries)
    assert len(canaries.places) > 2 * len(TEXT_FIELDS)

    found: list[str] = []
    by_address = {u.email.lower(): u for u in User.objects.all()}
    assert mail.outbox, "the seeding sent mail"
    for message in mail.outbox:
        whole = message.message().as_string()
        for address in message.recipients():
            reader = by_address.get(address.lower(), AnonymousUser())
            found += [f"mail {message.subject!r} to {address}: {place}"
                      for place in _leaks(canaries, whole, reader)]

    urls = _urls()
    admin_urls = _admin_urls()
    visitors: list[tuple[str, Any]] = [("anonymous", AnonymousUser()),
                                       *people.items(),
                                       ("quiet", User.objects.get(email="quiet@example.org"))]
    visits = 0
    for name, viewer in visitors:
        client = Client()
        if viewer.is_authenticated:
            client.force_login(viewer)
        for url in urls + (admin_urls if viewer.is_staff else admin_urls[:1]):
            response = client.get(url)
            visits += 1
            body = _body(response)
            found += [f"{url} as {name}: {place}" for place in _leaks(canaries, body, viewer)]
    # Search and every other page that reads a query: asked for one marker of each place,
    # by a visitor who may read none of them.
    probes = {place.split(":")[0]: token for token, (place, _) in canaries.places.items()}
    anonymous = Client()
    plain = ["/" + route for route, params in _patterns(get_resolver()) if not params]
    for url, key in itertools.product(plain, QUERY_KEYS):
        # A page that reads a query answers a marker it holds nothing for the same as
        # one nobody seeded (cnry0x); what it says back of the query is not a leak.
        baseline = _body(anonymous.get(f"{url}?{key}=cnry0x")).replace("cnry0x", "")
        if baseline != _body(anonymous.get(f"{url}?{key}=cnry0x")).replace("cnry0x", ""):
            continue  # a page that differs each time (a form's token) answers no query
        for token in probes.values():
            body = _body(anonymous.get(f"{url}?{key}={token}")).replace(token, "")
            visits += 1
            found += [f"{url}?{key}={token} as anonymous: {place}"
                      for place in _leaks(canaries, body, AnonymousUser())]
            if body != baseline and not canaries.places[token][1](AnonymousUser()):
                found.append(f"{url}?{key}={token} as anonymous finds "
                             f"{canaries.places[token][0]}")
    assert visits > 100 and any(url.startswith("/admin/review/") for url in admin_urls)
    assert not found, "\n".join(sorted(set(found)))
