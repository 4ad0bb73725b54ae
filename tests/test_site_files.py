"""Files asked for at the site's root."""

from django.urls import reverse

from registry.site_files import FAVICON


def test_favicon_is_served_at_the_root(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/x-icon"
    assert response.content == FAVICON.read_bytes()
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    assert "max-age=86400" in response["Cache-Control"]
    assert client.head("/favicon.ico").status_code == 200
    assert client.post("/favicon.ico").status_code == 405
    assert reverse("favicon") == "/favicon.ico"
