"""The Django admin as IANA staff use it (the demo's staff persona: staff through the
group's permissions, not a superuser), under axe-core: every page reached from the
admin's index (each change list, each of its filter choices, one change form of each
table), on the data of tests/site_pages.py, with no violation of serious or critical
impact."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from tests.e2e.test_accessibility import AXE_RUN, BLOCKING, signed_in
from tests.site_pages import build_site

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAX_PAGES = 150  # the crawl's bound; the admin has far fewer pages than that
FOLLOWED = ("#content-main a", "#changelist-filter a", "#result_list tbody a")


def _admin_links(tab: Any, base: str) -> list[str]:
    hrefs = tab.evaluate("""(selectors) => selectors.flatMap(
        s => [...document.querySelectorAll(s)].map(a => a.getAttribute('href')))""",
                         list(FOLLOWED))
    links = []
    for href in hrefs:
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        url = urljoin(base, href)
        path = urlsplit(url).path
        if (path.startswith("/admin/") and not path.startswith("/admin/logout")
                and "/delete/" not in path and not path.endswith("/add/")):
            links.append(url.split("#")[0])
    return links


def test_the_admin_passes_axe_for_iana_staff(browser: Any, live_server: Any) -> None:
    site = build_site()
    staff = site.people["staff"]
    assert staff.is_staff and not staff.is_superuser
    context = signed_in(browser, live_server, staff)
    tab = context.new_page()
    start = f"{live_server.url}/admin/"
    queue, seen, findings = [start], {start}, []
    changes_per_model: dict[str, int] = {}
    while queue and len(seen) <= MAX_PAGES:
        url = queue.pop(0)
        response = tab.goto(url)
        assert response is not None and response.status == 200, (url, response and
                                                                  response.status)
        violations = [v for v in tab.evaluate(AXE_RUN) if v["impact"] in BLOCKING]
        findings += [f"{url}\n  {v['id']} ({v['impact']}): {v['help']}\n    "
                     + "\n    ".join(v["nodes"]) for v in violations]
        for link in _admin_links(tab, url):
            parts = urlsplit(link).path.strip("/").split("/")
            if link in seen:
                continue
            if len(parts) >= 4 and parts[3] not in ("",):  # a change form: one per table
                model = "/".join(parts[1:3])
                if changes_per_model.get(model, 0) >= 1 or parts[3] == "change":
                    continue
                changes_per_model[model] = changes_per_model.get(model, 0) + 1
            seen.add(link)
            queue.append(link)
    context.close()
    assert len(seen) > 20 and changes_per_model, sorted(seen)
    assert not findings, "\n".join(findings)


def test_a_change_form_with_a_wide_inline_passes_axe_on_a_phone(browser: Any,
                                                                 live_server: Any) -> None:
    """At 390 px a person's change form scrolls its table of account events sideways, a
    region the keyboard could not reach (axe's scrollable-region-focusable, serious)."""
    from tests.e2e.test_accessibility import PHONE

    site = build_site()
    staff = site.people["staff"]
    context = signed_in(browser, live_server, staff)
    tab = context.new_page()
    tab.set_viewport_size(PHONE)
    tab.goto(f"{live_server.url}/admin/accounts/user/{staff.pk}/change/")
    assert tab.locator(".inline-group").count()
    violations = [f"{v['id']}: " + "; ".join(v["nodes"]) for v in tab.evaluate(AXE_RUN)
                  if v["impact"] in BLOCKING]
    assert violations == []
    context.close()
