"""Bring up the open requests idle past the reminder period now, as celery beat does
once a day: each one to its expert, then the other experts, then IANA staff, one step
per idle period (registry.review.workflow.next_reminder decides who).

    manage.py remind_idle_requests                 # REVIEW_IDLE_REMINDER_DAYS
    manage.py remind_idle_requests --idle-days 0   # every open request, one step now

For a site run without celery beat (a cron line instead), or to see the escalation
happen on a demo site without waiting a week.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

MAX_IDLE_DAYS = 3650


class Command(BaseCommand):
    help = ("Remind the experts of requests idle past the reminder period, escalating to the "
            "other experts and then IANA staff, one step per idle period.")

    def add_arguments(self, parser):
        parser.add_argument("--idle-days", type=int, default=None,
                            help="Idle for more than this many days (default: the "
                                 "REVIEW_IDLE_REMINDER_DAYS setting).")

    def handle(self, *args, idle_days=None, **options):
        from registry.review.tasks import remind_idle_requests_task

        if idle_days is not None and not 0 <= idle_days <= MAX_IDLE_DAYS:
            raise CommandError(f"--idle-days must be 0 to {MAX_IDLE_DAYS}.")
        taken = remind_idle_requests_task(idle_days)
        self.stdout.write(f"{taken} request{'s' if taken != 1 else ''} brought up.")
