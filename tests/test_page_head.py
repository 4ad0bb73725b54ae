"""What every page says of itself in its <head>: a description, an absolute canonical
address (from SITE_URL, never from the Host asked for), the site's icon."""

import pytest
from django.urls import reverse

from tests.html import find, one, page


@pytest.fixture
def site_url(settings):
    settings.SITE_URL = "https://urn.example.net/"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "evil.example"]
    return "https://urn.example.net"


def canonical(doc) -> str:
    return one(doc, "//head/link[@rel='canonical']").get("href")


def test_every_page_has_a_description_and_an_absolute_canonical(client, registry, site_url):
    for url in (reverse("namespaces:registry"), reverse("namespaces:search"),
                reverse("review:public-review"), reverse("namespaces:history", args=["isbn"]),
                reverse("namespaces:diff", args=["isbn"]), "/accounts/login/",
                reverse("namespaces:check")):
        doc = page(client.get(url, HTTP_HOST="evil.example"))
        assert canonical(doc) == site_url + url
        description = one(doc, "//head/meta[@name='description']").get("content")
        assert len(description) > 50, url
        icons = [link.get("href") for link in find(doc, "//head/link[@rel='icon']")]
        assert "/favicon.ico" in icons


def test_a_namespace_names_its_registered_spelling_as_canonical(client, registry, site_url):
    doc = page(client.get(reverse("namespaces:detail", args=["ISBN"])))
    assert canonical(doc) == site_url + reverse("namespaces:detail", args=["isbn"])
    description = one(doc, "//head/meta[@name='description']").get("content")
    assert description.startswith("URN namespace isbn (formal, active)")


def test_an_error_page_names_no_canonical(client, registry):
    doc = page(client.get("/namespaces/no-such-nid-here/"))
    assert find(doc, "//head/link[@rel='canonical']") == []
