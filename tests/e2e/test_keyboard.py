"""The keyboard-only paths (WCAG 2.1.1, 2.4.3, 2.4.7, 2.4.11, 3.3.1, 4.1.3): the request
form from the skip link to a refused submit and back to each field, and an expert's
decision, with no mouse."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from registry.review.models import State
from tests.factories import make_registration

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUS_ID = "() => document.activeElement.id || document.activeElement.name || ''"


@pytest.fixture(autouse=True)
def _eager(settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True


def keyboard_page(browser: Any, live_server: Any, user: Any, *, width: int = 1366,
                  height: int = 768) -> tuple[Any, Any]:
    # Reduced motion: Bootstrap's smooth scrolling would make the measures below race it.
    context = browser.new_context(base_url=live_server.url, reduced_motion="reduce",
                                  viewport={"width": width, "height": height})
    context.set_default_timeout(15_000)
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    return context, context.new_page()


def tab_to(page: Any, selector: str, limit: int = 120) -> None:
    """Press Tab until the element matching ``selector`` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def visible_above_the_bar(page: Any) -> float:
    """How many px of the focused element are visible above the sticky Save/Submit bar
    (measured once the browser has scrolled it into view)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate("""() => {
      const r = document.activeElement.getBoundingClientRect();
      const bar = document.querySelector('.sticky-form-actions').getBoundingClientRect();
      const bottom = Math.min(r.bottom, bar.top, window.innerHeight);
      return Math.max(0, bottom - Math.max(r.top, 0));
    }""")


def test_request_form_by_keyboard_alone(browser: Any, live_server: Any, registrant: Any) -> None:
    context, page = keyboard_page(browser, live_server, registrant)
    page.goto("/requests/new/")

    # The first Tab reaches the skip link, which moves focus past the navigation.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent.trim()") == \
        "Skip to main content"
    assert page.evaluate("() => getComputedStyle(document.activeElement).position") == "absolute"
    page.keyboard.press("Enter")
    assert page.evaluate(FOCUS_ID) == "main"

    # Tab walks the form's fields in the template's order, and no focused field is hidden
    # under the sticky bar (at 1366x768 one field used to show 0 px): at least its top
    # 24 px (or all of it) stay in view.
    order = page.evaluate("""() => [...document.querySelectorAll(
        'main form input:not([type=hidden]), main form textarea, main form button')]
        .filter(e => !(e.type === 'radio' && !e.checked))
        .filter(e => !e.closest('details:not([open])')).map(e => e.id || e.name)""")
    walked = []
    while len(walked) < len(order):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.tagName") == "SUMMARY":
            continue  # the closed "start from a template" box: its summary, then on
        walked.append(page.evaluate(FOCUS_ID))
        if page.evaluate("() => document.activeElement.matches('main form :is(input, textarea)')"):
            height = page.evaluate("() => document.activeElement.getBoundingClientRect().height")
            assert visible_above_the_bar(page) >= min(height, 24), f"{walked[-1]} is hidden"
    assert walked == order

    # The live NID check marks the field and ties its message to it.
    page.focus("#id_proposed_nid")
    page.keyboard.type("xn--bad")
    page.wait_for_selector("#nid-status .text-danger")
    nid = page.locator("#id_proposed_nid")
    assert nid.get_attribute("aria-invalid") == "true"
    assert "nid-status" in nid.get_attribute("aria-describedby").split()
    assert page.get_attribute("#nid-status", "aria-live") == "polite"

    # Submit from the keyboard: refused, and focus lands on the error summary.
    tab_to(page, "button[name=submit]")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.evaluate(FOCUS_ID) == "error-summary"
    links = page.locator("#error-summary a")
    targets = [href.removeprefix("#") for href in links.evaluate_all(
        "links => links.map(a => a.getAttribute('href'))")]
    assert "id_proposed_nid" in targets and "id_purpose" in targets
    assert page.input_value("#id_proposed_nid") == "xn--bad"  # nothing typed is lost

    # Each link in the summary moves focus to its field, shown above the bar.
    for target in ("id_purpose", "id_proposed_nid"):
        page.focus("#error-summary")
        tab_to(page, f"#error-summary a[href='#{target}']")
        page.keyboard.press("Enter")
        assert page.evaluate(FOCUS_ID) == target
        assert visible_above_the_bar(page) >= 24
        assert page.get_attribute(f"#{target}", "aria-invalid") == "true"
    context.close()


def test_expert_approves_by_keyboard_alone(browser: Any, live_server: Any, registrant: Any,
                                           expert: Any) -> None:
    registration = make_registration(registrant, nid="keyboardnid")
    context, page = keyboard_page(browser, live_server, expert, width=1280, height=900)
    page.goto("/requests/dashboard/")
    tab_to(page, f"a.btn[href='{registration.get_absolute_url()}']")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    tab_to(page, "#id_approve_comment")
    page.keyboard.type("Clear syntax; no conflicts.")
    tab_to(page, "#id_approve_early_reason")
    page.keyboard.type("The list raised nothing in a week.")
    tab_to(page, "button[value=approve]")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    registration.refresh_from_db()
    assert registration.state == State.APPROVED
    assert registration.events.filter(transition="approve", actor=expert).exists()
    context.close()
