"""How the registry is doing, in figures: registrations per year, time from
submission to decision, requests by state, versions per namespace (public), and each
designated expert's load (experts and IANA staff only).

Each figure is one aggregate query (no query per row); the public figures change
only with the registry generation (transitions and registrations move it), so the
page and the JSON are cached per generation like the other public pages. The same
dictionaries feed the page, its charts and ``/stats.json``."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Min
from django.db.models.functions import ExtractYear

from registry.namespaces.models import Namespace, TemplateVersion
from registry.review import charts, workflow
from registry.review.models import RegistrationRequest, RequestEvent

# The moves that end a public review with the experts' (or, on the fast track, the
# standards body's) decision, read from the workflow's tables, not listed here: a
# decision (held to the review period), or a move from public review into IANA staff's
# queue.
DECIDING_TRANSITIONS = tuple(sorted(
    t.name for t in workflow.TRANSITIONS.values()
    if t.decision or (t.sources & set(workflow.states_where(public_review=True))
                      and workflow.meaning_of(t.target).staff_queue)))


def registrations_per_year() -> dict[str, Any]:
    rows = (Namespace.objects.filter(registered_on__isnull=False)
            .annotate(year=ExtractYear("registered_on")).values("year")
            .annotate(count=Count("pk")).order_by("year"))
    counts = {row["year"]: row["count"] for row in rows}
    # Every year from the first registration to the last, a year without one as 0: the
    # time axis keeps its gaps.
    years = [{"year": year, "count": counts.get(year, 0)}
             for year in range(min(counts, default=0), max(counts, default=-1) + 1)]
    return {"years": years, "undated": Namespace.objects.filter(registered_on__isnull=True)
            .count()}


def _spread(days: Sequence[float]) -> dict[str, Any]:
    """Median and spread (quartiles, extremes) of durations in days."""
    if not days:
        return {"count": 0, "median_days": None, "quartile_1_days": None,
                "quartile_3_days": None, "min_days": None, "max_days": None}
    ordered = sorted(days)
    if len(ordered) > 1:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {"count": len(ordered), "median_days": round(statistics.median(ordered), 1),
            "quartile_1_days": round(q1, 1), "quartile_3_days": round(q3, 1),
            "min_days": round(ordered[0], 1), "max_days": round(ordered[-1], 1)}


def time_to_decision() -> dict[str, Any]:
    """From a request's submission to its first decision (approved, reported to the
    IESG, rejected, or the standards body asking IANA to register), in days: overall
    and by the year of the decision."""
    rows = (RequestEvent.objects.filter(transition__in=DECIDING_TRANSITIONS,
                                        registration__review_started_at__isnull=False)
            .values("registration", "registration__review_started_at")
            .annotate(decided_at=Min("created_at")).order_by())
    by_year: dict[int, list[float]] = {}
    every: list[float] = []
    for row in rows:
        days = max((row["decided_at"] - row["registration__review_started_at"]).total_seconds(),
                   0) / 86400
        every.append(days)
        by_year.setdefault(row["decided_at"].year, []).append(days)
    return {"overall": _spread(every),
            "years": [{"year": year, **_spread(days)} for year, days in sorted(by_year.items())]}


def requests_by_state() -> list[dict[str, Any]]:
    """Submitted requests by state (a draft never submitted is private: not counted)."""
    counts = dict(RegistrationRequest.objects.filter(review_started_at__isnull=False)
                  .values_list("state").annotate(n=Count("pk")).order_by())
    return [{"state": name, "label": row.label, "count": counts.get(name, 0)}
            for name, row in workflow.STATES.items() if not row.initial]


def versions_per_namespace() -> list[dict[str, Any]]:
    """How many namespaces have 1, 2, 3 ... published versions of their template."""
    per_namespace = (TemplateVersion.objects.values("namespace")
                     .annotate(n=Count("pk")).order_by())
    histogram: dict[int, int] = {}
    for row in per_namespace:
        histogram[row["n"]] = histogram.get(row["n"], 0) + 1
    return [{"versions": versions, "namespaces": count}
            for versions, count in sorted(histogram.items())]


def public_figures() -> dict[str, Any]:
    return {
        "registrations_per_year": registrations_per_year(),
        "time_to_decision": time_to_decision(),
        "requests_by_state": requests_by_state(),
        "versions_per_namespace": versions_per_namespace(),
    }


def expert_load(today: Any) -> list[dict[str, Any]]:
    """Each active designated expert's open assignments, maximum and absence (one query)."""
    experts = get_user_model().objects.designated_experts().with_load()
    return [{"expert": e.display_name, "open_assignments": e.open_assignments,
             "max_open_assignments": e.max_open_assignments,
             "away_until": e.unavailable_until.isoformat() if e.unavailable_until else None,
             "takes_new_requests": not workflow.unavailability(e, today=today)}
            for e in experts]


# --- Charts and their words ------------------------------------------------------------

def _decision_summary(overall: dict) -> str:
    """The time to decision in words: a median and its spread, or the one decision."""
    if not overall["count"]:
        return "No request has been decided yet."
    if overall["count"] == 1:
        return f"1 decided request, decided {overall['median_days']} days after submission."
    return (f"{_plural(overall['count'], 'decided request')}: half were decided within "
            f"{overall['median_days']} days of submission; the middle half took "
            f"{overall['quartile_1_days']} to {overall['quartile_3_days']} days, the "
            f"fastest {overall['min_days']} and the slowest {overall['max_days']}.")


BOX = ("min_days", "quartile_1_days", "median_days", "quartile_3_days", "max_days")


def box_of(spread: dict[str, Any]) -> tuple[float, ...]:
    """The five numbers of a box plot, as the table says them."""
    return tuple(spread[key] for key in BOX)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def public_charts(figures: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each public chart's SVG and text summary (empty SVG: no data to draw)."""
    registrations = figures["registrations_per_year"]["years"]
    decision = figures["time_to_decision"]
    states = figures["requests_by_state"]
    versions = figures["versions_per_namespace"]
    out: dict[str, dict[str, str]] = {}

    total = sum(row["count"] for row in registrations)
    busiest = max(registrations, key=lambda row: row["count"], default=None)
    out["registrations"] = {
        "svg": charts.bar([str(row["year"]) for row in registrations],
                          [row["count"] for row in registrations],
                          y_title="Namespaces registered") if registrations else "",
        "summary": (f"{_plural(total, 'namespace')} registered with a known date, from "
                    f"{registrations[0]['year']} to {registrations[-1]['year']}; the most in "
                    f"{busiest['year']} ({busiest['count']})." if busiest
                    else "No namespace has a registration date yet."),
    }
    overall = decision["overall"]
    out["decision"] = {
        # The boxes are drawn from the table's numbers, not from pygal's own quartiles.
        "svg": charts.box([(str(year["year"]), box_of(year)) for year in decision["years"]],
                          y_title="Days from submission to decision")
        if decision["years"] else "",
        "summary": _decision_summary(overall),
    }
    submitted = sum(row["count"] for row in states)
    largest = max(states, key=lambda row: row["count"])
    out["states"] = {
        "svg": charts.bar([row["label"] for row in states], [row["count"] for row in states],
                          horizontal=True, x_title="Requests") if submitted else "",
        "summary": (f"{_plural(submitted, 'request')} submitted for review; the most are "
                    f"“{largest['label'].lower()}” ({largest['count']})." if submitted
                    else "No request has been submitted yet."),
    }
    namespaces = sum(row["namespaces"] for row in versions)
    revised = sum(row["namespaces"] for row in versions if row["versions"] > 1)
    out["versions"] = {
        "svg": charts.bar([str(row["versions"]) for row in versions],
                          [row["namespaces"] for row in versions],
                          x_title="Versions of the template", y_title="Namespaces")
        if versions else "",
        "summary": (f"{_plural(namespaces, 'namespace')} with a published template; "
                    f"{revised} of them revised at least once, the most-revised has "
                    f"{versions[-1]['versions']} versions." if versions
                    else "No template has been published yet."),
    }
    return out


def load_chart(load: list[dict[str, Any]]) -> dict[str, str]:
    busiest = max(load, key=lambda row: row["open_assignments"], default=None)
    available = sum(1 for row in load if row["takes_new_requests"])
    return {
        "svg": charts.bar([row["expert"] for row in load],
                          [row["open_assignments"] for row in load], horizontal=True,
                          x_title="Open requests assigned") if load else "",
        "summary": (f"{_plural(len(load), 'designated expert')}, {available} taking new "
                    f"requests; the most loaded is {busiest['expert']} with "
                    f"{_plural(busiest['open_assignments'], 'open request')}." if busiest
                    else "There are no designated experts."),
    }


def workload_slot(user: Any, today: Any) -> dict[str, Any] | None:
    """The stats page's per-visitor part: each expert's load, for the designated
    experts and IANA staff (None for everyone else: the slot stays empty)."""
    if not workflow.can_see_workload(user):
        return None
    load = expert_load(today)
    return {"load": load, "load_chart": load_chart(load)}
