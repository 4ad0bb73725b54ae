"""The public pages: registry tables, namespace pages, history, diff, search, 404."""

import datetime as dt

import pytest
from django.urls import reverse
from lxml import etree

from registry.namespaces.actions import (
    namespace_register,
    namespace_set_status,
    registry_metadata_set,
    version_publish,
)
from registry.namespaces.models import Namespace
from tests.factories import complete_values
from tests.html import find, links, one, page, terms, text, texts

FORMAL_NIDS = "//table[@id='formal-table']/tbody/tr/td[1]/a[@class='nid']"
INFORMAL_NIDS = "//table[@id='informal-table']/tbody/tr/td[1]/a[@class='nid']"
REGISTRY_NOTE = "//*[@id='last-change']"
RESULT_NIDS = "//ol[@id='results']/li/a[contains(@class, 'nid')]"
TEMPLATE = "//main//dl[@class='template']"


def formal_row(nid: str) -> str:
    """The XPath of the formal table's row of ``nid``."""
    return f"//table[@id='formal-table']/tbody/tr[td[1]/a[@class='nid'] = '{nid}']"


@pytest.fixture
def revised(staff, registrant):
    """A namespace with two versions: resolution changed, revision described."""
    namespace = namespace_register(kind="formal", nid="ExArchive", holder=registrant,
                                   values=complete_values(registrant),
                                   date=dt.date(2026, 1, 5), actor=staff)
    version_publish(namespace=namespace, date=dt.date(2026, 6, 1), actor=staff,
                    values=complete_values(registrant, resolution="Two mirrored resolvers.",
                                           revision_information="Adds a mirror."))
    return namespace


def test_registry_page_lists_81_formal_and_7_informal(client, registry):
    response = client.get("/")
    doc = page(response)
    assert response.status_code == 200
    assert text(one(doc, "//main//h1/following-sibling::div[1]")) == "81 formal · 7 informal"
    assert len(find(doc, FORMAL_NIDS)) == 81
    assert len(find(doc, INFORMAL_NIDS)) == 7
    assert "/namespaces/isbn/" in links(doc, FORMAL_NIDS)
    assert links(doc, f"{formal_row('nbn')}/td[3]/a[. = 'RFC8458']") == [
        "https://www.rfc-editor.org/rfc/rfc8458"]
    assert links(doc, f"{formal_row('isbn')}/td[3]/a[. = 'International ISBN Agency']") == [
        "https://www.isbn-international.org"]


def test_registry_page_sorts_filters_and_indexes(client, registry, staff):
    namespace_set_status(namespace=Namespace.objects.by_nid("xmlorg").get(), status="deprecated",
                         comment="Use the successor.", actor=staff)
    assert texts(page(client.get("/?status=deprecated")), FORMAL_NIDS) == ["xmlorg"]
    by_date = texts(page(client.get("/?sort=-date")), FORMAL_NIDS)
    assert by_date[0] == "c2pa"  # 2025-02-04 is the latest registration date in the data
    letter = page(client.get("/?letter=i"))
    assert "isbn" in texts(letter, FORMAL_NIDS)
    assert all(nid.startswith("i") for nid in texts(letter, FORMAL_NIDS))
    assert "3gpp" not in text(one(letter, "//table[@id='formal-table']"))


def test_namespace_page_matches_the_nid_case_insensitively(client, registry):
    response = client.get("/namespaces/ISBN/")
    assert response.status_code == 200
    doc = page(response)
    assert texts(doc, "//h1/span[@class='nid']") == ["isbn"]
    assert text(terms(one(doc, "(//main//dl)[1]"))["Reference"]) == "International ISBN Agency"
    absent = one(doc, "//main//div[contains(@class, 'alert-secondary')]")
    assert "not held in this registry" in text(absent)
    assert links(absent) == ["https://www.iana.org/assignments/urn-formal/isbn"]


def test_unknown_nid_is_a_helpful_404(client, registry):
    response = client.get("/namespaces/isbnn/")
    assert response.status_code == 404
    suggestion = one(page(response), "//main//p[starts-with(normalize-space(), 'Did you mean')]")
    assert "/namespaces/isbn/" in links(suggestion)


def test_namespace_page_shows_current_template_and_versions(client, revised):
    doc = page(client.get("/namespaces/exarchive/"))
    assert texts(doc, "//main//h2[starts-with(., 'Registration template')]/small") == [
        "version 2, 2026-06-01"]
    assert text(terms(one(doc, TEMPLATE))["Resolution"]) == "Two mirrored resolvers."
    versions = "//main//h2[. = 'Versions']/following-sibling::ul[1]/li/a"
    assert "/namespaces/ExArchive/v/1/" in links(doc, versions)
    assert links(doc, "//main//a[. = 'Compare versions']") == ["/namespaces/ExArchive/diff/"]


def test_old_version_urls_stay_valid(client, revised):
    doc = page(client.get("/namespaces/exarchive/v/1/"))
    assert text(one(doc, "//main//div[contains(@class, 'alert-info')]")).startswith(
        "You are reading version 1,")
    resolution = text(terms(one(doc, TEMPLATE))["Resolution"])
    assert resolution == "An HTTPS resolver is run by the archive."
    assert "Two mirrored resolvers." not in text(doc)
    assert client.get("/namespaces/exarchive/v/3/").status_code == 404


def test_diff_between_versions_is_per_field_and_side_by_side(client, revised):
    doc = page(client.get("/namespaces/exarchive/diff/?a=1&b=2"))
    resolution = ("//table[contains(@class, 'diff')]/tbody"
                  "/tr[starts-with(normalize-space(th), 'Resolution')]")
    assert texts(doc, f"{resolution}/td[2]//ins")[0] in ("Two", "Two mirrored resolvers")
    assert texts(doc, f"{resolution}/td[2]") == ["Two mirrored resolvers."]
    assert find(doc, f"{resolution}/td[1]//del")
    changed = doc.xpath("//table[contains(@class, 'diff')]//th[span = 'changed']/text()[1]")
    assert [text(label) for label in changed] == ["Resolution", "Revision information"]


def test_template_txt_is_the_plain_text_template(client, revised):
    response = client.get("/namespaces/EXARCHIVE/template.txt")
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert text.startswith("Namespace Identifier:\n   ExArchive\n")
    assert "Version:\n   2\n" in text and "Resolution:\n   Two mirrored resolvers." in text
    old = client.get("/namespaces/exarchive/v/1/template.txt").content.decode()
    assert "Version:\n   1\n" in old


def test_template_txt_of_an_imported_namespace_points_to_iana(client, registry):
    text = client.get("/namespaces/c2pa/template.txt").content.decode()
    assert "https://www.iana.org/assignments/urn-formal/c2pa" in text


def test_deprecated_namespace_is_marked_with_its_pointer(client, revised, staff):
    namespace_set_status(namespace=revised, status="deprecated", actor=staff,
                         comment="Use urn:newarchive instead.")
    notice = one(page(client.get("/namespaces/exarchive/")),
                 "//main//div[contains(@class, 'alert-warning')]")
    assert texts(notice, "strong") == ["This namespace is deprecated."]
    assert texts(notice, ".//div[contains(@class, 'template-text')]") == [
        "Use urn:newarchive instead."]


def test_search_ranks_the_nid_first_and_highlights(client, registry, revised):
    doc = page(client.get("/search/?q=archive"))
    assert {"Archive", "archive"} & set(texts(doc, "//ol[@id='results']/li//mark"))
    assert texts(doc, RESULT_NIDS)[0] == "ExArchive"


def test_search_for_a_urn_jumps_to_its_namespace(client, registry):
    response = client.get("/search/", {"q": "urn:ISBN:0451450523"})
    assert response.status_code == 302 and response["Location"] == "/namespaces/isbn/"


def test_search_for_an_unregistered_urn_says_so(client, registry):
    doc = page(client.get("/search/", {"q": "urn:nosuchnid:x"}))
    assert texts(doc, "//main//div[contains(@class, 'alert')]") == [
        "That looks like a URN, but its namespace nosuchnid is not registered."]


def test_search_exact_nid_comes_before_prefix_matches(client, registry):
    results = texts(page(client.get("/search/", {"q": "epc"})), RESULT_NIDS)
    assert results.index("epc") < results.index("epcglobal")


@pytest.mark.postgres
def test_search_uses_full_text_stemming_on_postgres(client, revised):
    doc = page(client.get("/search/", {"q": "naming archives"}))  # "Names archive"
    assert "ExArchive" in texts(doc, RESULT_NIDS)


@pytest.mark.postgres
def test_did_you_mean_uses_trigrams_on_postgres(client, registry):
    doc = page(client.get("/search/", {"q": "isbnx"}))
    suggestion = one(doc, "//main//p[starts-with(normalize-space(), 'Did you mean')]")
    assert "isbn" in texts(suggestion, "a[@class='nid']")


@pytest.mark.parametrize("q", ["", " ", "%", "'; drop table", "\x00", "a\x00b", "a" * 5000,
                               "urn:", "urn:\x00:x", "é"])
def test_search_never_crashes(client, registry, q):
    assert client.get("/search/", {"q": q}).status_code in (200, 302)


@pytest.mark.parametrize("nid", ["\x00", "a%00b", "x" * 300, "%E9"])
def test_namespace_urls_with_junk_are_404s(client, registry, nid):
    assert client.get(f"/namespaces/{nid}/").status_code == 404
    assert client.get(f"/api/namespaces/{nid}/").status_code == 404
    assert client.get("/api/nid-check", {"nid": nid}).status_code == 200


def test_registry_page_pages_through_10000_namespaces(client, db):
    Namespace.objects.bulk_create(
        Namespace(nid=f"bulk{i:05d}", kind="formal") for i in range(10_000)
    )
    pager = "//nav[@aria-label='Formal namespaces pages']//span[@class='page-link']"
    assert texts(page(client.get("/")), pager) == ["Page 1 of 40"]
    assert "bulk09999" in texts(page(client.get("/?fpage=40")), FORMAL_NIDS)
    assert reverse("namespaces:detail", args=["bulk05000"]) in links(
        page(client.get("/?fpage=21")), FORMAL_NIDS)


def test_registry_page_names_the_expert_accounts_until_iana_lists_experts(client, db, expert):
    doc = page(client.get("/"))
    for kind in ("formal", "informal"):
        assert texts(doc, f"//*[@id='{kind}-experts']") == [
            f"Designated experts: {expert.display_name}"]


def test_importing_ianas_rows_is_no_registry_change(client, registry):
    assert texts(page(client.get("/")), REGISTRY_NOTE) == []


def test_registry_page_names_each_sub_registrys_experts_as_iana_lists_them(client, registry,
                                                                           expert):
    registry_metadata_set(key="formal", experts="Peter Saint-Andre, Lars Svensson")
    registry_metadata_set(key="informal", experts="Lars Svensson")
    doc = page(client.get("/"))
    assert texts(doc, "//*[@id='formal-experts']") == [
        "Designated experts: Peter Saint-Andre, Lars Svensson"]
    assert texts(doc, "//*[@id='informal-experts']") == ["Designated experts: Lars Svensson"]
    assert expert.display_name not in text(doc)
    xml = etree.fromstring(client.get(reverse("namespaces:registry-xml")).getvalue())
    assert xml.findtext("{*}registry[@id='urn-namespaces-1']/{*}expert") == \
        "Peter Saint-Andre, Lars Svensson"


def test_registry_page_dates_the_last_real_change(client, revised):
    from django.utils import timezone

    [note] = texts(page(client.get("/")), REGISTRY_NOTE)
    assert note.endswith(f"Last registry change {timezone.now():%Y-%m-%d}.")


def test_namespace_page_shows_ianas_contact_and_updated_date(client, db):
    from django.conf import settings
    from django.core.management import call_command

    call_command("import_registry", str(settings.BASE_DIR / "fixtures" / "iana" /
                                        "urn-namespaces.xml"), verbosity=0)
    record = terms(one(page(client.get("/namespaces/urn-7/")), "//main//dl"))
    assert text(record["Updated in the registry"]) == "2015-03-25"
    link = find(record["Contact"], ".//a")[0]
    assert (link.text, link.get("href")) == ("RFC6050", "https://www.rfc-editor.org/rfc/rfc6050")
    assert "Michael_Mealling" in text(find(page(client.get("/namespaces/urn-1/")), "//dl")[0])


@pytest.mark.parametrize("q", ["isbn\u202e", "is\x07bn", "x" * 201])
def test_the_search_box_refuses_at_the_field_and_keeps_the_text(client, registry, q):
    response = client.get("/search/", {"q": q})
    assert response.status_code == 200
    doc = page(response)
    box = doc.get_element_by_id("id_q")
    assert "is-invalid" in box.get("class")
    assert box.get("value") == q.replace("\x07", "\ufffd") or "\x07" in q
    assert doc.get_element_by_id("q-error").text_content().strip()
    assert not doc.xpath("//ol[@id='results']/li")
