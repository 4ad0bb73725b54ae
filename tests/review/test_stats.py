"""/stats/ and /stats.json: the figures, their charts within the CSP, the experts' load
only for experts and staff, and caching per registry generation."""

import datetime as dt
from pathlib import Path

import pytest
import time_machine
from django.conf import settings
from django.utils import timezone
from lxml import etree

from registry.namespaces.models import Namespace
from registry.review import actions, charts, stats, workflow
from tests.factories import approve, make_registration
from tests.html import find, one, page, text, texts

START = timezone.now()


@pytest.fixture
def history(registrant, expert, second_expert, staff):
    """Three decisions 10, 20 and 40 days after submission; one request still in review;
    one draft (private: counted nowhere)."""
    decided = []
    for nid, days, how in (("tenday", 10, "approve"), ("twentyday", 20, "reject"),
                           ("fortyday", 40, "approve")):
        with time_machine.travel(START, tick=False):
            registration = make_registration(registrant, nid=nid)
        with time_machine.travel(START + dt.timedelta(days=days), tick=False):
            registration = actions.registration_transition(registration=registration,
                                                           transition=how,
                                                           actor=expert, comment="Because.",
                                                           early_reason="Decided early.")
        decided.append(registration)
    approve_registered = actions.registration_transition(registration=decided[0],
                                                         transition="register",
                                                         actor=staff)
    make_registration(registrant, nid="stillopen")
    make_registration(registrant, nid="privatedraft", submit=False)
    actions.registration_assign(registration=make_registration(registrant, nid="assigned"),
                                expert=expert,
                                actor=expert)
    return approve_registered


def test_the_figures_are_what_happened(history):
    figures = stats.public_figures()
    decision = figures["time_to_decision"]["overall"]
    assert decision["count"] == 3
    assert (decision["median_days"], decision["min_days"], decision["max_days"]) == (20, 10, 40)
    assert (decision["quartile_1_days"], decision["quartile_3_days"]) == (15, 30)
    by_state = {row["state"]: row["count"] for row in figures["requests_by_state"]}
    assert set(by_state) == set(workflow.STATES) - {workflow.INITIAL_STATE}
    assert by_state == {**dict.fromkeys(by_state, 0), "registered": 1, "rejected": 1,
                        "approved": 1, "in_review": 2}
    registered = Namespace.objects.get(nid="tenday")
    assert {"year": registered.registered_on.year, "count": 1} in \
        figures["registrations_per_year"]["years"]
    assert figures["versions_per_namespace"] == [{"versions": 1, "namespaces": 1}]


def test_the_deciding_moves_are_read_from_the_workflow_table():
    assert {"approve", "reject", "report_to_iesg", "request_registration"} == \
        set(stats.DECIDING_TRANSITIONS)


def test_the_page_shows_each_chart_with_its_summary_and_table(client, history):
    doc = page(client.get("/stats/"))
    sections = {s.get("data-chart"): s for s in find(doc, "//section[@data-chart]")}
    assert set(sections) == {"registrations", "decision", "states", "versions"}
    for key, section in sections.items():
        chart = one(section, ".//div[@role='img']")
        labels = chart.get("aria-labelledby").split()
        assert labels == [f"{key}-h", f"{key}-summary"]
        assert text(one(doc, f"//*[@id='{key}-summary']"))
        assert one(chart, ".//*[local-name()='svg']") is not None
        assert find(section, ".//table//tbody/tr")
    assert "half were decided within 20.0 days" in text(one(doc, "//*[@id='decision-summary']"))
    states = {row.get("data-state"): texts(row, "./td")[0]
              for row in find(doc, "//table[@data-table='states']/tbody/tr")}
    assert states["in_review"] == "2"
    # Linked from every page's footer.
    assert "/stats/" in [a.get("href") for a in find(doc, "//footer//a")]


def test_no_chart_carries_what_the_csp_refuses(history):
    """style-src 'self' and script-src 'self': no <style>, <script>, style attribute or
    event handler may reach the page."""
    assert "'unsafe-inline'" not in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["style-src"]
    rendered = stats.public_charts(stats.public_figures())
    rendered["load"] = stats.load_chart(stats.expert_load(timezone.localdate()))
    for chart in rendered.values():
        assert chart["svg"], chart["summary"]
        root = etree.fromstring(chart["svg"].encode())
        tags = {etree.QName(e).localname for e in root.iter() if isinstance(e.tag, str)}
        assert not tags & {"style", "script", "foreignObject"}
        attributes = {a for e in root.iter() if isinstance(e.tag, str) for a in e.attrib}
        assert "style" not in attributes
        assert not [a for a in attributes if a.lower().startswith("on")]
        assert root.get("class") == charts.CHART_CLASS
        # Valid SVG (the Nu checker): a bar of 0 still has its size.
        for rect in root.iter(f"{{{charts.SVG_NS}}}rect"):
            assert rect.get("width") is not None and rect.get("height") is not None


def test_the_chart_stylesheet_is_the_one_pygal_makes():
    path = Path(settings.BASE_DIR) / "static" / "registry" / "charts.css"
    assert path.read_text() == charts.stylesheet(), (
        "regenerate: python -c 'from registry.review.charts import stylesheet; "
        "print(stylesheet(), end=\"\")' > static/registry/charts.css")
    assert "#chart-" not in path.read_text()


def test_an_empty_registry_says_so_instead_of_drawing(client, db):
    doc = page(client.get("/stats/"))
    assert text(one(doc, "//*[@id='decision-summary']")) == "No request has been decided yet."
    assert not find(doc, "//section[@data-chart='decision']//div[@role='img']")


@pytest.mark.parametrize("persona,sees", [("anonymous", False), ("registrant", False),
                                          ("expert", True), ("staff", True)])
def test_the_experts_load_is_only_for_experts_and_staff(client, history, persona, sees,
                                                        registrant, expert, staff):
    person = {"anonymous": None, "registrant": registrant, "expert": expert,
              "staff": staff}[persona]
    if person is not None:
        client.force_login(person)
    for _ in range(2):  # built, then from the cache: the slot is per visitor either way
        doc = page(client.get("/stats/"))
        sections = find(doc, "//section[@data-chart='load']")
        assert bool(sections) == sees
    data = client.get("/stats.json").json()
    assert ("expert_load" in data) == sees
    if sees:
        rows = {row["expert"]: row["open_assignments"] for row in data["expert_load"]}
        assert rows[expert.display_name] == 1
        load_rows = find(sections[0], ".//table/tbody/tr")
        assert len(load_rows) == len(data["expert_load"])


def test_the_json_holds_the_same_figures_and_is_cached_per_generation(client, history,
                                                                     registrant, expert,
                                                                     django_assert_num_queries):
    first = client.get("/stats.json")
    assert first.status_code == 200 and first["Content-Type"] == "application/json"
    assert first.json() == stats.public_figures()
    assert "durations" not in first.json()["time_to_decision"]["years"][0]
    assert client.get("/stats.json", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    # A decision moves the generation: the figures follow.
    registration = make_registration(registrant, nid="another")
    approve(registration, expert)
    second = client.get("/stats.json").json()
    assert second["time_to_decision"]["overall"]["count"] == 4
    assert client.head("/stats.json").status_code == 200
    assert client.post("/stats.json").status_code == 405


def test_the_figures_take_a_fixed_number_of_queries(history, registrant,
                                                    django_assert_max_num_queries):
    """Aggregates, not a query per row: more requests cost no more queries."""
    with django_assert_max_num_queries(8) as before:
        stats.public_figures()
    for n in range(5):
        make_registration(registrant, nid=f"more{n}")
    with django_assert_max_num_queries(len(before.captured_queries)):
        stats.public_figures()


def test_one_decision_is_said_as_one_not_as_a_spread():
    from registry.review.stats import _decision_summary

    one_only = {"count": 1, "median_days": 18.0, "quartile_1_days": 18.0,
                "quartile_3_days": 18.0, "min_days": 18.0, "max_days": 18.0}
    assert _decision_summary(one_only) == "1 decided request, decided 18.0 days after submission."
    assert _decision_summary({**one_only, "count": 0}) == "No request has been decided yet."
    assert "half were decided within" in _decision_summary({**one_only, "count": 2})


def _drawn_boxes(svg: str) -> list[tuple[float, ...]]:
    """Each box of a box plot read back from its SVG, in the axis' own units: (lower
    whisker, first quartile, median, third quartile, upper whisker)."""
    root = etree.fromstring(svg.encode())
    ns = {"s": charts.SVG_NS}
    # The value axis: each labelled horizontal guide's y, as a number.
    guides = [(float(t.text), float(t.getparent().find("s:path", ns).get("d").split()[1]))
              for t in root.iterfind(".//s:g[@class='guides']/s:text", ns)
              if t.text.replace(".", "").isdigit() and "h" in
              t.getparent().find("s:path", ns).get("d")]
    (v0, y0), (v1, y1) = guides[0], guides[-1]

    def value(y: float) -> float:
        return round(v0 + (y - y0) * (v1 - v0) / (y1 - y0), 2)

    boxes = []
    for group in root.iterfind(".//s:g[@class='box']", ns):
        lines = [float(p.get("d").split()[1]) for p in group.iterfind("s:path", ns)
                 if p.get("stroke-width") == "3"]  # the whiskers' ends and the median
        rect = group.find("s:rect", ns)
        top, height = float(rect.get("y")), float(rect.get("height"))
        low, median, high = sorted(lines, reverse=True)
        boxes.append((value(low), value(top + height), value(median), value(top),
                      value(high)))
    return boxes


@pytest.mark.django_db
def test_the_box_plot_draws_the_quartiles_its_table_gives(registrant, expert):
    """pygal's own quartiles put the third at 13.5 days where the table said 9.0: the
    boxes are drawn from the table's numbers."""
    for n, days in enumerate((1, 2, 3, 9, 9, 30)):
        with time_machine.travel(START, tick=False):
            registration = make_registration(registrant, nid=f"spread{n}")
        with time_machine.travel(START + dt.timedelta(days=days), tick=False):
            actions.registration_transition(registration=registration, transition="reject",
                                            actor=expert, comment="No.",
                                            early_reason="Decided early.")
    figures = stats.public_figures()
    (year,) = figures["time_to_decision"]["years"]
    table = stats.box_of(year)
    assert _drawn_boxes(stats.public_charts(figures)["decision"]["svg"]) == [table]
    # The numbers pygal would have drawn by its own rule are not those of the table.
    assert pygal_box_of([1, 2, 3, 9, 9, 30]) != table


def pygal_box_of(days):
    import pygal

    points, _ = pygal.Box._box_points(days, "extremes")
    return tuple(float(p) for p in points[1:6])


@pytest.mark.django_db
def test_a_year_without_registration_stays_on_the_time_axis():
    for nid, year in (("early", 2001), ("later", 2004)):
        Namespace.objects.create(nid=nid, kind=Namespace.Kind.FORMAL,
                                 registered_on=dt.date(year, 5, 1))
    years = stats.registrations_per_year()["years"]
    assert years == [{"year": 2001, "count": 1}, {"year": 2002, "count": 0},
                     {"year": 2003, "count": 0}, {"year": 2004, "count": 1}]
    svg = stats.public_charts(stats.public_figures())["registrations"]["svg"]
    root = etree.fromstring(svg.encode())
    labels = [t.text for t in root.iter(f"{{{charts.SVG_NS}}}text")]
    assert {"2002", "2003"} <= set(labels)
