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
