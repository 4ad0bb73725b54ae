"""WCAG 2.2 AA in a real browser: axe-core on every page, for every persona, in every state
of tests/site_pages.py, with no violation of serious or critical impact; and every page
usable at 390 CSS px (a phone) without scrolling sideways (WCAG 1.4.10 reflow).

axe-core is vendored in tests/e2e/vendor/axe-core (MPL-2.0, see its README there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.site_pages import PERSONAS, Page, build_site

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
AXE_RUN = """() => axe.run(document, {
  runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
  resultTypes: ["violations"],
}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + n.failureSummary),
})))"""
BLOCKING = ("serious", "critical")
PHONE = {"width": 390, "height": 844}
# The innermost elements that reach past the viewport's right edge: what to mend.
# (What scrolls inside a box of its own is left out: it does not widen the page, unless
# it is positioned and so may escape the box.)
TOO_WIDE = """() => {
  const out = e => e.getBoundingClientRect().right > innerWidth + 1;
  const boxed = e => { if (getComputedStyle(e).position === 'absolute') return false;
    for (let p = e.parentElement; p; p = p.parentElement)
      if (p !== document.body && p !== document.documentElement
          && ['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
    return false; };
  return [...document.querySelectorAll('body *')]
    .filter(e => out(e) && !boxed(e) && ![...e.children].some(c => out(c) && !boxed(c)))
    .slice(0, 5).map(e => e.outerHTML.slice(0, 160)); }"""
DESKTOP = {"width": 1280, "height": 900}


def signed_in(browser: Any, live_server: Any, user: Any) -> Any:
    """A browser context with ``user``'s session (no log-in form per persona)."""
    context = browser.new_context(base_url=live_server.url, viewport=DESKTOP)
    context.set_default_timeout(15_000)
    context.add_init_script(path=str(AXE))  # in every page before its own scripts
    if user is not None:
        client = Client()
        client.force_login(user)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                              "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    return context


def open_page(tab: Any, page: Page) -> None:
    """Show ``page`` as a person would: load it, and for a posted page fill its form and
    press its button."""
    tab.goto(page.url)
    if not page.form:
        return
    for name, value in page.form.items():
        tab.fill(f"main form [name={name}]", value)
    button = (f"main form button[name={page.submit}]" if page.submit
              else f"main form:has([name={next(iter(page.form))}]) button[type=submit]")
    with tab.expect_navigation():
        tab.click(button)


def test_every_page_for_every_persona_passes_axe_and_reflows_at_390px(
        browser: Any, live_server: Any, subtests: Any) -> None:
    site = build_site()
    checked = 0
    for persona in PERSONAS:
        context = signed_in(browser, live_server, site.people[persona])
        tab = context.new_page()
        for page in site.pages[persona]:
            with subtests.test(persona=persona, page=page.label):
                tab.set_viewport_size(DESKTOP)
                open_page(tab, page)
                violations = tab.evaluate(AXE_RUN)
                blocking = [v for v in violations if v["impact"] in BLOCKING]
                assert not blocking, "\n".join(
                    f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"])
                    for v in blocking)
                tab.set_viewport_size(PHONE)
                width = tab.evaluate("document.documentElement.scrollWidth")
                assert width <= PHONE["width"], (
                    f"{width}px wide at {PHONE['width']}px; too wide: {tab.evaluate(TOO_WIDE)}")
                checked += 1
        context.close()
    assert checked == sum(len(pages) for pages in site.pages.values())
