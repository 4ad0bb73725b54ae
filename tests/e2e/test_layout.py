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
