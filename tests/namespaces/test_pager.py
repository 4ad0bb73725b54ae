"""Pager links: each list's Previous / Next keeps the filters it was reached with."""

import datetime as dt

from registry.namespaces import views
from registry.namespaces.actions import namespace_register, namespace_set_status
from registry.namespaces.models import Namespace
from tests.factories import complete_values
from tests.html import links, one, page, text

FORMAL_NIDS = "//table[@id='formal-table']//a[contains(concat(' ', @class, ' '), ' nid ')]"


def pager(doc, label):
    nav = one(doc, f"//nav[@aria-label='{label} pages']")
    return {text(a): a.get("href") for a in nav.xpath(".//a")}, text(nav)


def test_the_registry_pager_keeps_sort_status_and_letter(client, registry, monkeypatch):
    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    first = page(client.get("/?sort=-nid&letter=i"))
    hrefs, shown = pager(first, "Formal namespaces")
    assert hrefs == {"Next": "?sort=-nid&letter=i&fpage=2"}
    assert shown.startswith("Page 1 of")
    second = page(client.get(hrefs["Next"]))
    assert pager(second, "Formal namespaces")[0]["Previous"] == "?sort=-nid&letter=i&fpage=1"
    nids = [text(a) for a in first.xpath(FORMAL_NIDS) + second.xpath(FORMAL_NIDS)]
    assert len(nids) == 4 and all(nid.lower().startswith("i") for nid in nids)
    assert nids == sorted(nids, key=str.lower, reverse=True)


def test_the_search_pager_keeps_the_query(client, db, staff, monkeypatch):
    monkeypatch.setattr(views, "SEARCH_PAGE_SIZE", 2)
    for n in range(3):
        namespace_register(kind="formal", nid=f"pager{n}", date=dt.date(2026, 1, 5),
                           actor=staff, values=complete_values(purpose="Zebra & okapi."))
    doc = page(client.get("/search/", {"q": "zebra okapi"}))
    hrefs, shown = pager(doc, "Search results")
    assert hrefs == {"Next": "?q=zebra+okapi&page=2"} and shown == "Page 1 of 2 Next"


def test_the_history_pager(client, registry, staff, monkeypatch):
    monkeypatch.setattr(views, "HISTORY_PAGE_SIZE", 1)
    namespace = Namespace.objects.by_nid("isbn").get()
    namespace_set_status(namespace=namespace, status="deprecated", comment="Test.", actor=staff)
    pages = namespace.events.count()  # one event a page
    assert pages >= 2
    hrefs, shown = pager(page(client.get("/namespaces/isbn/history/")), "History")
    assert hrefs == {"Next": "?page=2"} and shown.startswith(f"Page 1 of {pages}")
    assert links(page(client.get(f"/namespaces/isbn/history/?page={pages}")),
                 "//nav[@aria-label='History pages']//a") == [f"?page={pages - 1}"]


def test_no_pager_when_everything_fits(client, registry):
    assert not page(client.get("/")).xpath("//nav[@aria-label='Formal namespaces pages']")
