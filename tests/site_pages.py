"""Every HTML page of the site, for every persona, in the states a person meets them.

The accessibility test (axe-core in Chromium) and the HTML validity test (the Nu HTML
Checker) both walk this list, so a page added here is checked by both. Plain text, the
exports, the API and the admin are not HTML pages of ours and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allauth.account.forms import default_token_generator
from allauth.account.models import EmailConfirmationHMAC
from allauth.account.utils import user_pk_to_url_str
from django.core.management import call_command

from registry.namespaces.actions import namespace_set_profile, namespace_set_status
from registry.namespaces.models import Namespace
from registry.review import actions, workflow
from registry.review.models import State
from tests.factories import complete_values, make_user
from tests.review.helpers import registration_in

PERSONAS = ("anonymous", "registrant", "other_registrant", "expert", "staff", "standards_body")
EARLY = "Tested before the period ends."


@dataclass(frozen=True)
class Page:
    """A page to check: a GET of ``url`` or, with ``form``, that page after posting
    ``form`` through its ``<form>`` (a refused form, as a person sees it)."""

    url: str
    form: dict[str, str] = field(default_factory=dict)
    submit: str = ""  # the name of the submit button pressed, when it matters

    @property
    def label(self) -> str:
        return f"{self.url} (posted)" if self.form else self.url


@dataclass
class Site:
    people: dict[str, object]
    pages: dict[str, list[Page]]
    requests: dict[str, object]


def people() -> dict[str, object]:
    """The personas of tests/conftest.py, made directly (one site, many personas)."""
    return {
        "anonymous": None,
        "registrant": make_user("registrant@example.org",
                                organisation="Example Archive Foundation"),
        "other_registrant": make_user("other@example.org", organisation="Other Registrant Ltd"),
        "expert": make_user("expert@example.org", roles=["designated expert"]),
        "staff": make_user("staff@example.org", roles=["IANA staff"]),
        "standards_body": make_user("sdo@example.org", organisation="Example SDO",
                                    recognized=True),
    }


def _registered_with_two_versions(who: dict) -> tuple[Namespace, object]:
    rita, erin, sam = who["registrant"], who["expert"], who["staff"]
    first = registration_in("registered", path="community", people=who, nid="exarchive")
    namespace = Namespace.objects.by_nid("exarchive").get()
    # A machine-readable profile, so its section (a scrollable grammar) is walked too.
    namespace_set_profile(namespace=namespace, reason="The site walk's profile.", actor=sam,
                          profile={"syntax": {"abnf": "nss = 1*DIGIT \"-\" 1*DIGIT\n",
                                              "cite": "the test template"},
                                   "equivalence": [], "examples": ["urn:exarchive:1-2"],
                                   "counter_examples": ["urn:exarchive:x"],
                                   "resolvers": [{"url": "https://archive.example/urn/{nss}",
                                                  "name": "The archive",
                                                  "cite": "the test template"}]})
    namespace.refresh_from_db()
    revision = actions.registration_create(actor=rita, revises=namespace)
    actions.registration_update(
        registration=revision, actor=rita, edit_version=revision.edit_version, kind="formal",
        proposed_nid="", fast_track=False,
        values=complete_values(rita, resolution="Resolvers at https://archive.example/urn/ "
                               "and https://mirror.example/urn/.",
                               revision_information="Version 2 adds a mirror."),
    )
    for name, actor in (("submit", rita), ("approve", erin), ("register", sam)):
        actions.registration_transition(registration=revision, transition=name, actor=actor,
                                        comment="Fine.", early_reason=EARLY)
    return namespace, first


def build_site() -> Site:
    """The real registry, one namespace with two versions and an open revision, one
    deprecated namespace, and requests in every state, with comments of every audience."""
    call_command("loaddata", "iana_registry", verbosity=0)
    who = people()
    rita, otto, erin = who["registrant"], who["other_registrant"], who["expert"]
    sofia = who["standards_body"]
    archive, registered = _registered_with_two_versions(who)
    open_revision = actions.registration_create(actor=rita, revises=archive)
    namespace_set_status(namespace=Namespace.objects.by_nid("isbn").get(), status="deprecated",
                         comment="A test deprecation: use exarchive instead.", actor=who["staff"])

    # A request in every state of the workflow's table (registered: the one with versions).
    r = {state: registration_in(state, path="community", people=who,
                                nid=f"ex{state.replace('_', '')}")
         for state in workflow.STATES if state != State.REGISTERED}
    r["registered"] = registered
    r["revision"] = open_revision
    r["rival"] = actions.registration_create(actor=otto, kind="formal", proposed_nid="ExInReview",
                                             values=complete_values(otto))
    actions.registration_transition(registration=r["rival"], transition="submit", actor=otto)
    r["informal"] = actions.registration_create(actor=otto, kind="informal",
                                                values=complete_values(otto))
    actions.registration_transition(registration=r["informal"], transition="submit", actor=otto)
    actions.registration_transition(registration=r["informal"], transition="approve", actor=erin,
                                    comment="Fine as informal.", early_reason=EARLY)
    r["fast_track"] = registration_in("in_review", path="fast_track",
                                      people={**who, "registrant": sofia}, nid="exsdo")
    for audience, author in (("public", otto), ("registrant", erin), ("experts", erin)):
        actions.registration_comment(registration=r["in_review"], actor=author, audience=audience,
                                     body=f"A {audience} comment.")
    actions.registration_assign(registration=r["in_review"], expert=erin, actor=erin)

    newcomer = make_user("newcomer@example.org")
    address = newcomer.emailaddress_set.get()
    address.verified = False
    address.save()
    confirm_key = EmailConfirmationHMAC(address).key
    reset_key = (f"{user_pk_to_url_str(newcomer)}-"
                 f"{default_token_generator.make_token(newcomer)}")

    def page(key: str, suffix: str = "") -> Page:
        return Page(f"/requests/{r[key].pk}/{suffix}")

    # Every public page in each of its states, as anonymous sees it; the signed-in personas
    # see one page of each kind (their navigation differs) and the request pages whose
    # actions and comments differ for them.
    core = [Page("/"), Page("/search/?q=isbn"), Page("/check/?urn=urn:exarchive:1-2"),
            Page("/namespaces/exarchive/"), Page("/namespaces/exarchive/v/1/"),
            Page("/namespaces/exarchive/diff/?a=1&b=2"), Page("/requests/review/")]
    # Every request anyone may see: each state's that was submitted (a draft, and a draft
    # withdrawn before submission, stay private), and the rival, fast-track and informal ones.
    states = list(workflow.STATES)
    submitted = [state for state in states if workflow.was_submitted(r[state])]
    every_state = [page(key) for key in (*submitted, "rival", "fast_track", "informal")]
    public = [
        *core, Page("/stats/"), Page("/?status=deprecated&sort=-date"), Page("/?letter=i&sort=nid"),
        Page("/search/"), Page("/search/?q=archive+records"),
        Page("/search/?q=urn:nosuch:thing"), Page("/search/?q=isbm"),
        Page("/check/"), Page("/check/?urn=urn:x-bad:a%20b"),
        Page("/namespaces/isbn/"), Page("/namespaces/uuid/"), Page("/namespaces/urn-1/"),
        Page("/namespaces/exarchiv/"), *every_state,
    ]
    pages: dict[str, list[Page]] = {
        "anonymous": [*public,
                      Page("/accounts/login/"), Page("/accounts/signup/"),
                      Page("/accounts/password/reset/"), Page("/accounts/password/reset/done/"),
                      Page("/accounts/confirm-email/"),
                      Page(f"/accounts/confirm-email/{confirm_key}/"),
                      Page(f"/accounts/password/reset/key/{reset_key}/"),
                      Page("/accounts/password/reset/key/done/"),
                      Page("/accounts/login/", form={"login": "nobody@example.org",
                                                     "password": "wrong password"}),
                      Page("/accounts/signup/", form={"first_name": "Fresh",
                                                      "email": "fresh@example.org",
                                                      "password1": "short",
                                                      "password2": "other"})],
        "registrant": [*core,
                       *(page(key) for key in (*states, "revision")),
                       Page("/requests/"), Page("/requests/new/"),
                       page("draft", "edit/"), page("changes_requested", "edit/"),
                       page("revision", "edit/"),
                       Page(f"/requests/{r['draft'].pk}/edit/",
                            form={"proposed_nid": "xn--bad", "purpose": "", "syntax": ""},
                            submit="submit"),
                       Page("/requests/new/", form={"proposed_nid": "ab"}, submit="submit"),
                       Page("/requests/dashboard/"),
                       Page("/accounts/email/"), Page("/accounts/password/change/"),
                       Page("/accounts/logout/")],
        "other_registrant": [*core, Page("/requests/"), page("rival"), page("in_review"),
                             page("draft")],
        "expert": [*core, *every_state, Page("/requests/dashboard/"),
                   Page("/requests/dashboard/?mine=1"), Page("/requests/"),
                   Page("/requests/availability/"),
                   Page("/requests/availability/",
                        form={"unavailable_until": "2001-01-01", "max_open_assignments": "0"}),
                   Page("/stats/")],
        "staff": [*core, page("approved"), page("informal"), page("awaiting_iesg"),
                  page("in_review"), Page("/requests/iana/"), Page("/requests/iana/mail/"),
                  Page("/requests/"), Page("/requests/dashboard/"), Page("/stats/")],
        "standards_body": [*core, page("fast_track"), page("in_review"), Page("/requests/")],
    }
    return Site(people=who, pages=pages, requests=r)
