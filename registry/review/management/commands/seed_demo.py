"""Demo accounts and requests for a local instance. It refuses to run in production,
and wherever the mail its actions queue could leave the machine: a mail backend that
delivers, or a Celery broker (a worker would send what the demo queued, nine messages
to the real review list). ``check --deploy`` fails while its accounts exist
(registry/review/checks.py).

    python manage.py seed_demo

Accounts (password for all: the DEMO_PASSWORD below, printed at the end):
registrant@example.org, other@example.org, expert@example.org, staff@example.org
(IANA staff: the staff pages and the admin through the group's permissions, not a
superuser), and sdo@example.org (a standards body that staff recognized). One reply on
the review list comes in as receive_mail would take it in.

Everything is written through the actions the web pages use (accounts, roles,
recognition, requests, decisions, registration), each at a plausible moment in the
past (time-machine moves the clock while seeding), so ages, review periods and
histories read like a registry in use. The mail those actions would send is not
sent: nobody is there to read it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage

import time_machine
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from registry.accounts import actions as accounts
from registry.accounts.models import User
from registry.accounts.roles import EXPERT_GROUP, STAFF_GROUP, roles_of
from registry.env import IS_PRODUCTION
from registry.namespaces.models import Namespace
from registry.review import actions
from registry.review.models import OutboundMessage, RegistrationRequest

DEMO_PASSWORD = "demo-registry-8141"  # noqa: S105 - local demo accounts only

PEOPLE = [
    ("registrant@example.org", "Rita", "Registrant", "Example Archive Foundation", []),
    ("other@example.org", "Otto", "Other", "Other Registrant Ltd", []),
    ("expert@example.org", "Erin", "Expert", "", [EXPERT_GROUP]),
    ("staff@example.org", "Sam", "Staff", "IANA", [STAFF_GROUP]),
    ("sdo@example.org", "Sofia", "Standards", "Example Standards Organization", []),
]
DEMO_EMAILS = tuple(email for email, *_ in PEOPLE)

# Mail backends that never deliver: seeding is refused with any other.
LOCAL_MAIL_BACKENDS = frozenset({
    "django.core.mail.backends.console.EmailBackend",
    "django.core.mail.backends.locmem.EmailBackend",
    "django.core.mail.backends.dummy.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend",
})


def refusal() -> str | None:
    """Why seeding must not run here, or None."""
    if IS_PRODUCTION:
        return "seed_demo creates accounts with a known password; it does not run in production."
    if settings.EMAIL_BACKEND not in LOCAL_MAIL_BACKENDS:
        return (f"seed_demo does not run with the mail backend {settings.EMAIL_BACKEND}: the "
                "demo's mail (to the review list too) could be delivered. Run it with the "
                "console backend (the default).")
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return ("seed_demo does not run with a Celery broker configured (CELERY_BROKER_URL or "
                "REDIS_URL): a worker would send the mail the demo queued, to the review list "
                "too. Unset them (tasks then run in-process) to seed a demo.")
    return None


TEMPLATE = {
    "registrant_address": "1 Example Street, Example City",
    "contact_phone": "+1 555 0100",
    "purpose": "Identifies the records of a long-term digital archive, persistently, for "
               "libraries and researchers on the public Internet.",
    "syntax": 'NSS = 1*DIGIT "-" 1*DIGIT ; collection number, hyphen, record number\n'
              "URN-equivalence: section 3 of RFC 8141, nothing more.",
    "assignment": "Assigned sequentially by the archive; a number is never reused.",
    "security": "No personal data is carried in the NSS; records are public.",
    "interoperability": "No known issues; the NSS uses only digits and a hyphen.",
    "resolution": "The archive runs an HTTPS resolver at https://archive.example/urn/.",
    "documentation": "https://archive.example/urn-spec",
}


class Command(BaseCommand):
    help = "Create demo accounts and requests (local instances only)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--with-history", action="store_true",
            help="Also register a demo namespace 'exarchive' with two versions (for tours and "
                 "screenshots). Without it the published registry stays exactly IANA's.",
        )

    def handle(self, *args, with_history=False, **options):
        problem = refusal()
        if problem is not None:
            raise CommandError(problem)
        self.now = timezone.now()
        quiet = override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend")
        with quiet, transaction.atomic():
            people = {email: self._person(email, first, last, org, roles)
                      for email, first, last, org, roles in PEOPLE}
            sofia = people["sdo@example.org"]
            if not sofia.recognized_standards_body:
                with self.at(days=60):
                    accounts.user_recognize(
                        user=sofia, actor=people["staff@example.org"],
                        reason="The IESG recognizes Example Standards Organization as a "
                               "standards body (demo).")
            if not RegistrationRequest.objects.exists():
                self._requests(people)
            if with_history and not Namespace.objects.by_nid("exarchive").exists():
                self._history(people)
        self.stdout.write(self.style.SUCCESS(
            "Demo accounts: " + ", ".join(p[0] for p in PEOPLE)
            + f" (password: {DEMO_PASSWORD})"
        ))

    @contextmanager
    def at(self, *, days: float) -> Iterator[None]:
        """Run the actions inside as if ``days`` days ago (the clock keeps ticking)."""
        with time_machine.travel(self.now - dt.timedelta(days=days), tick=True):
            yield

    def _person(self, email, first, last, organisation, roles) -> User:
        user = User.objects.filter(email=email).first()
        if user is None:
            with self.at(days=120):
                user = accounts.user_create(
                    email=email, password=DEMO_PASSWORD, first_name=first, last_name=last,
                    organisation=organisation, verified=True, reason="Demo account.",
                    actor=None)
        for role in roles:
            if role not in roles_of(user):
                with self.at(days=119):
                    user = accounts.role_grant(user=user, role=role, actor=None,
                                               reason="Demo persona.")
        return user

    def _values(self, user: User, **extra) -> dict[str, str]:
        return {**TEMPLATE, "registrant_organisation": user.organisation,
                "contact_name": user.get_full_name(), "contact_email": user.email, **extra}

    def _history(self, people):
        rita, erin = people["registrant@example.org"], people["expert@example.org"]
        sam = people["staff@example.org"]
        period = settings.REVIEW_MIN_DAYS
        # A namespace registered through the community path, then revised: two versions.
        with self.at(days=2 * period + 80):
            first = actions.registration_create(actor=rita, kind="formal", proposed_nid="exarchive",
                                                values=self._values(rita))
            actions.registration_transition(registration=first, transition="submit", actor=rita)
        with self.at(days=period + 70):
            actions.registration_transition(registration=first, transition="approve", actor=erin,
                                            comment="Clear syntax and assignment; no conflicts.")
        with self.at(days=period + 69):
            actions.registration_transition(registration=first, transition="register", actor=sam)
        namespace = Namespace.objects.by_nid("exarchive").get()
        with self.at(days=period + 20):
            revision = actions.registration_create(actor=rita, revises=namespace)
            actions.registration_update(
                registration=revision, actor=rita, edit_version=revision.edit_version,
                kind="formal", proposed_nid="", fast_track=False,
                values=self._values(rita, resolution="The archive runs HTTPS resolvers at "
                                    "https://archive.example/urn/ and "
                                    "https://mirror.example/urn/.",
                                    revision_information="Version 2 adds a mirror resolver."),
            )
            actions.registration_transition(registration=revision, transition="submit", actor=rita)
        with self.at(days=5):
            actions.registration_transition(registration=revision, transition="approve", actor=erin,
                                            comment="A mirror is welcome.")
            actions.registration_transition(registration=revision, transition="register", actor=sam)

    def _list_reply(self, registration: RegistrationRequest) -> None:
        """A reply on the review list, taken in as receive_mail takes in mail."""
        root = OutboundMessage.objects.about(registration).first()
        message = EmailMessage()
        message["From"] = "Alice Reviewer <alice.reviewer@example.net>"
        message["To"] = settings.REVIEW_LIST_ADDRESS
        message["Subject"] = f"Re: {root.subject}" if root else "Re: exlib"
        message["Message-ID"] = "<demo-list-reply.1@example.net>"
        message["List-Id"] = f"Review list <{settings.REVIEW_LIST_ID}>"
        if root:
            message["In-Reply-To"] = message["References"] = root.message_id
        message.set_content(
            "The syntax says the NSS is case-insensitive; could the examples show one\n"
            "in lower case? Otherwise this looks ready to me.\n\nAlice\n\n"
            "On Monday, the URN registry wrote:\n"
            "> Please review the template below and comment on the list.\n")
        actions.inbound_mail_receive(raw=message.as_bytes(), source="demo")

    def _requests(self, people):
        rita, otto = people["registrant@example.org"], people["other@example.org"]
        erin = people["expert@example.org"]
        sofia = people["sdo@example.org"]
        period = settings.REVIEW_MIN_DAYS

        # In public review, with a comment and a conflicting proposal for the same NID.
        with self.at(days=12):
            pending = actions.registration_create(actor=rita, kind="formal", proposed_nid="exlib",
                                                  values=self._values(rita))
        with self.at(days=11):
            actions.registration_transition(registration=pending, transition="submit", actor=rita)
        with self.at(days=5):
            actions.registration_comment(registration=pending, actor=otto, audience="public",
                                         body="Will the records include personal data of donors?")
            self._list_reply(pending)
        with self.at(days=4):
            rival = actions.registration_create(actor=otto, kind="formal", proposed_nid="ExLib",
                                                values=self._values(otto))
            actions.registration_transition(registration=rival, transition="submit", actor=otto)

        # A fast-track request from a recognized standards body, in review.
        with self.at(days=3):
            fast = actions.registration_create(actor=sofia, kind="formal", proposed_nid="exsdo",
                                               fast_track=True, values=self._values(sofia))
            actions.registration_transition(registration=fast, transition="submit", actor=sofia)

        # An informal request approved after the full review period and waiting for
        # IANA, and a private draft.
        with self.at(days=period + 6):
            informal = actions.registration_create(actor=otto, kind="informal",
                                                   values=self._values(otto))
            actions.registration_transition(registration=informal, transition="submit", actor=otto)
        with self.at(days=2):
            actions.registration_transition(registration=informal, transition="approve", actor=erin,
                                            comment="Fine as an informal namespace.")
        with self.at(days=1):
            actions.registration_create(actor=rita, kind="formal", proposed_nid="exdraft",
                                        values={"purpose": "Half-written draft."})
