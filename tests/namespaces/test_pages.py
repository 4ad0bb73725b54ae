"""The public pages: registry tables, namespace pages, history, diff, search, 404."""

import datetime as dt

import pytest
from django.urls import reverse

from registry.namespaces.actions import namespace_register, namespace_set_status, version_publish
from registry.namespaces.models import Namespace
from tests.factories import complete_values


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
    html = response.content.decode()
    assert response.status_code == 200
    assert "81 formal · 7 informal" in html
    formal = html.split('id="formal-table"')[1].split("</table>")[0]
    informal = html.split('id="informal-table"')[1].split("</table>")[0]
    assert formal.count('class="nid"') == 81
    assert informal.count('class="nid"') == 7
    assert 'href="/namespaces/isbn/"' in formal
    assert 'href="https://www.rfc-editor.org/rfc/rfc8458">RFC8458</a>' in formal  # nbn
    assert '<a href="https://www.isbn-international.org">International ISBN Agency</a>' in formal


def test_registry_page_sorts_filters_and_indexes(client, registry, staff):
    namespace_set_status(namespace=Namespace.objects.by_nid("xmlorg").get(), status="deprecated",
                         comment="Use the successor.", actor=staff)
    html = client.get("/?status=deprecated").content.decode()
    formal = html.split('id="formal-table"')[1].split("</table>")[0]
    assert formal.count('class="nid"') == 1 and "xmlorg" in formal
    by_date = client.get("/?sort=-date").content.decode()
    first = by_date.split('id="formal-table"')[1].split('class="nid"', 2)[1]
    assert "c2pa" in first  # 2025-02-04 is the latest registration date in the data
    letter = client.get("/?letter=i").content.decode().split('id="formal-table"')[1]
    assert "isbn" in letter and "3gpp" not in letter.split("</table>")[0]


def test_namespace_page_matches_the_nid_case_insensitively(client, registry):
    response = client.get("/namespaces/ISBN/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<span class="nid">isbn</span>' in html
    assert "International ISBN Agency" in html
    assert "not held in this registry" in html
    assert 'href="https://www.iana.org/assignments/urn-formal/isbn"' in html


def test_unknown_nid_is_a_helpful_404(client, registry):
    response = client.get("/namespaces/isbnn/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Did you mean" in html and 'href="/namespaces/isbn/"' in html


def test_namespace_page_shows_current_template_and_versions(client, revised):
    html = client.get("/namespaces/exarchive/").content.decode()
    assert "version 2" in html and "Two mirrored resolvers." in html
    assert 'href="/namespaces/ExArchive/v/1/"' in html
    assert 'href="/namespaces/ExArchive/diff/"' in html


def test_old_version_urls_stay_valid(client, revised):
    html = client.get("/namespaces/exarchive/v/1/").content.decode()
    assert "You are reading version 1" in html
    assert "Two mirrored resolvers." not in html
    assert client.get("/namespaces/exarchive/v/3/").status_code == 404


def test_diff_between_versions_is_per_field_and_side_by_side(client, revised):
    html = client.get("/namespaces/exarchive/diff/?a=1&b=2").content.decode()
    assert "<ins>Two</ins>" in html or "<ins>Two mirrored resolvers" in html
    assert "<del>" in html
    assert html.count("changed</span>") == 2  # resolution and revision information


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
    html = client.get("/namespaces/exarchive/").content.decode()
    assert "This namespace is deprecated." in html and "Use urn:newarchive instead." in html


def test_search_ranks_the_nid_first_and_highlights(client, registry, revised):
    html = client.get("/search/?q=archive").content.decode()
    assert "<mark>Archive</mark>" in html or "<mark>archive</mark>" in html
    assert html.index("ExArchive") < html.index("</ol>")


def test_search_for_a_urn_jumps_to_its_namespace(client, registry):
    response = client.get("/search/", {"q": "urn:ISBN:0451450523"})
    assert response.status_code == 302 and response["Location"] == "/namespaces/isbn/"


def test_search_for_an_unregistered_urn_says_so(client, registry):
    html = client.get("/search/", {"q": "urn:nosuchnid:x"}).content.decode()
    assert "is not registered" in html


def test_search_exact_nid_comes_before_prefix_matches(client, registry):
    html = client.get("/search/", {"q": "epc"}).content.decode()
    results = html.split('id="results"')[1]
    assert results.index(">epc<") < results.index("epcglobal")


@pytest.mark.postgres
def test_search_uses_full_text_stemming_on_postgres(client, revised):
    html = client.get("/search/", {"q": "naming archives"}).content.decode()  # "Names archive"
    assert "ExArchive" in html


@pytest.mark.postgres
def test_did_you_mean_uses_trigrams_on_postgres(client, registry):
    html = client.get("/search/", {"q": "isbnx"}).content.decode()
    assert "Did you mean" in html and ">isbn<" in html


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
    html = client.get("/").content.decode()
    assert "Page 1 of 40" in html
    last = client.get("/?fpage=40").content.decode()
    assert "bulk09999" in last
    assert reverse("namespaces:detail", args=["bulk05000"]) in client.get(
        "/?fpage=21").content.decode()


def test_registry_page_names_the_designated_experts(client, registry, expert):
    html = client.get("/").content.decode()
    assert f"Designated experts: {expert.display_name}." in html
    assert "Last registry change" not in html  # importing IANA's rows is not a change


def test_registry_page_dates_the_last_real_change(client, revised):
    from django.utils import timezone

    html = client.get("/").content.decode()
    assert f"Last registry change {timezone.now():%Y-%m-%d}." in html


def test_namespace_page_shows_ianas_contact_and_updated_date(client, db):
    from django.conf import settings
    from django.core.management import call_command
    from lxml import html as lxml_html

    call_command("import_registry", str(settings.BASE_DIR / "fixtures" / "iana" /
                                        "urn-namespaces.xml"), verbosity=0)
    page = lxml_html.fromstring(client.get("/namespaces/urn-7/").content)
    terms = {term.text_content().strip(): value for term, value in
             zip(page.xpath("//dl/dt"), page.xpath("//dl/dd"), strict=True)}
    assert terms["Updated in the registry"].text_content().strip() == "2015-03-25"
    link = terms["Contact"].xpath(".//a")[0]
    assert (link.text, link.get("href")) == ("RFC6050", "https://www.rfc-editor.org/rfc/rfc6050")
    page = lxml_html.fromstring(client.get("/namespaces/urn-1/").content)
    assert "Michael_Mealling" in page.xpath("//dl")[0].text_content()


@pytest.mark.parametrize("q", ["isbn\u202e", "is\x07bn", "x" * 201])
def test_the_search_box_refuses_at_the_field_and_keeps_the_text(client, registry, q):
    import lxml.html

    response = client.get("/search/", {"q": q})
    assert response.status_code == 200
    doc = lxml.html.fromstring(response.content)
    box = doc.get_element_by_id("id_q")
    assert "is-invalid" in box.get("class")
    assert box.get("value") == q.replace("\x07", "\ufffd") or "\x07" in q
    assert doc.get_element_by_id("q-error").text_content().strip()
    assert not doc.xpath("//ol[@id='results']/li")
