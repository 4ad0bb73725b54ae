"""The live NID check behind the request form (sections 2.1, 5.1 and 5.2)."""


def test_nid_check_endpoint(client, registry):
    data = client.get("/api/nid-check", {"nid": "xn--foo"}).json()
    assert not data["acceptable"]
    assert data["problems"][0]["code"] == "reserved_country_code_prefix"
    assert "5.1" in data["problems"][0]["message"]
    assert client.get("/api/nid-check", {"nid": "ISBN"}).json()["problems"][0]["code"] == \
        "already_registered"
    assert client.get("/api/nid-check", {"nid": "racefoo"}).json()["acceptable"]


def test_nid_check_warns_about_uri_schemes_and_country_codes(client, db):
    http = client.get("/api/nid-check", {"nid": "HTTP"}).json()
    assert http["acceptable"] and [w["code"] for w in http["warnings"]] == ["uri_scheme"]
    deu = client.get("/api/nid-check", {"nid": "deu"}).json()
    assert [w["code"] for w in deu["warnings"]] == ["country_code"]
    assert client.get("/api/nid-check", {"nid": "racefoo"}).json()["warnings"] == []


def test_nid_check_counts_other_open_requests(client, registrant, other_registrant):
    from tests.factories import make_registration

    make_registration(registrant, nid="shared")
    data = client.get("/api/nid-check", {"nid": "SHARED"}).json()
    assert data["acceptable"] and data["other_open_requests"] == 1
