"""Layout a person meets in a real browser: NIDs read as words on a phone, and the
admin's filter links are targets of at least 24 by 24 CSS px (WCAG 2.2, 2.5.8)."""

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
# Each NID element: how many line boxes it takes and whether it fits its own width.
NID_LINES = """() => [...document.querySelectorAll("main .nid")].map(
    e => [e.textContent, e.getClientRects().length])"""
SMALL_TARGETS = """() => [...document.querySelectorAll(
    "#changelist-filter a, .paginator a")].filter(e => e.offsetParent).map(e => {
      const r = e.getBoundingClientRect(); return [e.textContent.trim(), r.width, r.height];
    }).filter(([, w, h]) => h < 24 || w < 24)"""


def test_nids_never_break_inside_a_word_at_390px(browser, live_server, registry):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    tab = context.new_page()
    for url in (reverse("namespaces:registry"), reverse("namespaces:search") + "?q=iso"):
        tab.goto(url)
        broken = [nid for nid, lines in tab.evaluate(NID_LINES) if lines > 1]
        assert broken == [], (url, broken)
    context.close()


def test_admin_filter_links_are_targets_of_24px(browser, live_server, db):
    staff = make_user("staff@example.org", roles=["IANA staff"])
    client = Client()
    client.force_login(staff)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280,
                                                                       "height": 900})
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    tab = context.new_page()
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if not model_admin.list_filter:
            continue
        meta = model._meta
        response = tab.goto(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        if response.status == 403:  # staff do not read every table
            continue
        assert tab.locator("#changelist-filter a").count(), meta.label
        assert tab.evaluate(SMALL_TARGETS) == [], meta.label
        checked += 1
    assert checked >= 5
    context.close()


# Each table caption of the page: its width and how many lines its first word takes.
CAPTIONS = """() => [...document.querySelectorAll("main table caption")].map(c => {
    const r = c.getBoundingClientRect(); return [c.textContent.trim().slice(0, 30), r.width];
  })"""
# Words broken inside: a cell whose text is wider than the cell (the text wraps mid-word).
BROKEN_WORDS = """(selector) => [...document.querySelectorAll(selector + " th, " + selector
    + " td")].filter(e => e.offsetParent).filter(e => {
      const words = e.textContent.trim().split(/\\s+/).filter(Boolean);
      const range = document.createRange(); range.selectNodeContents(e);
      const lines = [...range.getClientRects()].map(r => Math.round(r.top));
      return new Set(lines).size > words.length;
    }).map(e => e.textContent.trim())"""


def test_the_statistics_read_at_390px_and_the_load_table_whole_at_1280px(
        browser, live_server, registrant, expert):
    from tests.factories import make_registration

    make_registration(registrant, nid="statsone")
    client = Client()
    client.force_login(expert)
    for viewport in ({"width": 1280, "height": 900}, PHONE):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                              "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
        tab = context.new_page()
        tab.goto(reverse("stats"))
        main = tab.evaluate("document.querySelector('main').getBoundingClientRect().width")
        # A caption is as wide as its table's column of text, never a letter wide.
        narrow = [(c, w) for c, w in tab.evaluate(CAPTIONS) if w < min(main, 600) / 3]
        assert narrow == [], (viewport, narrow)
        assert tab.evaluate(BROKEN_WORDS, "table[data-table=load]") == [], viewport
        if viewport is PHONE:
            assert tab.evaluate("document.documentElement.scrollHeight") < 6000
        context.close()


# Words of the row headings of a comparison table that wrap inside themselves (one word
# on two lines), measured word by word with a Range over the text.
BROKEN_LABELS = """() => [...document.querySelectorAll("main table.diff th[scope=row]")].flatMap(
    th => {
      const node = th.firstChild; if (!node || node.nodeType !== 3) return [];
      return [...node.data.matchAll(/\\S+/g)].filter(m => {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = [...range.getClientRects()].filter(r => r.width).map(r => Math.round(r.top));
        return new Set(tops).size > 1;
      }).map(m => m[0]);
    })"""


def test_the_round_comparison_names_each_field_in_whole_words(browser, live_server, registrant,
                                                             expert):
    """The field names of "Compare rounds" ("Interoperability", "Documentation") were cut
    mid-word at 1280 px in the page's left column, and at 390 px: the page lets long text
    break anywhere, which made the heading column as narrow as one letter."""
    from registry.review import actions
    from tests.factories import complete_values, make_registration

    registration = make_registration(registrant, nid="roundtwo")
    actions.registration_transition(registration=registration, transition="request_changes",
                                    actor=expert, comment="Say more about assignment.")
    registration.refresh_from_db()
    actions.registration_update(
        registration=registration, actor=registrant, edit_version=registration.edit_version,
        kind="formal", proposed_nid="roundtwo", fast_track=False,
        values=complete_values(registrant, assignment="Sequential, never reused, audited."))
    actions.registration_transition(registration=registration, transition="resubmit",
                                    actor=registrant)
    for viewport in ({"width": 1280, "height": 900}, PHONE):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        tab = context.new_page()
        tab.goto(registration.get_absolute_url())
        assert tab.locator("main table.diff th[scope=row]").count() >= 10
        assert tab.evaluate(BROKEN_LABELS) == [], viewport
        context.close()


def test_the_review_period_date_stays_on_one_line_at_390px(browser, live_server, registrant):
    """At 390 px the header's "public review until 2026-11-29" broke the date at its
    hyphen, "2026-" on one line and "11-29" on the next."""
    from tests.factories import make_registration

    registration = make_registration(registrant, nid="periodical",
                                     registrant_organisation="Example Archive Foundation")
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    tab = context.new_page()
    tab.goto(registration.get_absolute_url())
    found = False
    for width in range(300, 391, 6):  # wherever the header's line happens to end
        tab.set_viewport_size({"width": width, "height": 844})
        date = tab.locator("[data-period-ends]")
        found = True
        assert date.evaluate("e => e.getClientRects().length") == 1, width
    assert found
    context.close()


# Words inside the cells selected that wrap inside themselves (one word on two lines).
BROKEN_CELL_WORDS = """(selector) => [...document.querySelectorAll(selector)].flatMap(cell => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT); const out = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[A-Za-z]{3,}/g)) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = [...range.getClientRects()].filter(r => r.width).map(r => Math.round(r.top));
        if (new Set(tops).size > 1) out.push(m[0]);
      }
    }
    return out;
  })"""


def test_a_namespace_history_reads_in_whole_words_at_390px(browser, live_server, staff):
    """At 390 px a long note squeezed the other columns of the public history until "What
    happened", "Version" and "version 1" broke mid-word; each event now reads as a card.
    At 1280 px a note of many lines squeezed the Version column the same way."""
    import datetime as dt

    from registry.namespaces.actions import namespace_register, namespace_update_record
    from tests.factories import complete_values

    namespace = namespace_register(kind="formal", nid="chronicle", values=complete_values(),
                                   date=dt.date(2026, 11, 1), actor=staff)
    namespace_update_record(
        namespace=namespace, actor=staff, changes={"registry_note": "See the errata."},
        reason="The registrant wrote to IANA on 2026-11-20 asking for a pointer to the "
               "published errata of the specification, which the template predates.")
    namespace_update_record(namespace=namespace, actor=staff, changes={"registry_note": ""},
                            reason=" ".join(["A note of many words, as IANA's are."] * 30))
    for viewport in (PHONE, {"width": 1280, "height": 900}):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        tab = context.new_page()
        tab.goto(reverse("namespaces:history", args=["chronicle"]))
        cells = "#history tbody td" if viewport is PHONE else "#history th, #history td"
        assert tab.evaluate(BROKEN_CELL_WORDS, cells) == [], viewport
        assert tab.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        context.close()


def test_a_profiles_examples_name_their_columns_in_whole_words_at_390px(browser, live_server,
                                                                        registry):
    """"Namespace normal form", the heading of the examples' last column on a namespace
    page with a profile (isbn), broke inside "Namespace" at 390 px."""
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    tab = context.new_page()
    tab.goto(reverse("namespaces:detail", args=["isbn"]))
    assert tab.locator("table.profile-examples").count() == 1
    assert tab.evaluate(BROKEN_CELL_WORDS, "table.profile-examples th") == []
    context.close()


@pytest.mark.parametrize("width", [1200, 1280, 1399])
def test_the_navigation_never_pushes_the_page_wider_than_the_window(browser, live_server,
                                                                    db, width):
    """Expanded, the navigation of the persona with the most links (IANA staff, also
    admitted to the dashboard) and the longest name its menu shows fits the window: its
    links wrap, the menu with "Log out" stays on screen."""
    staff = make_user("staff-with-a-long-name@example.org", roles=["IANA staff"])
    staff.first_name = "Maximiliana-Theodora"
    staff.save()
    client = Client()
    client.force_login(staff)
    context = browser.new_context(base_url=live_server.url,
                                  viewport={"width": width, "height": 800})
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    tab = context.new_page()
    tab.goto(reverse("review:staff-queue"))
    dashboard = reverse("review:dashboard")
    assert tab.locator(f"nav a[href='{dashboard}']").count() == 1
    assert tab.evaluate("document.documentElement.scrollWidth") <= width
    menu = tab.locator("#who").bounding_box()
    assert menu is not None and menu["x"] + menu["width"] <= width
    context.close()
