"""The API's contract states the bounds the server enforces: unknown and repeated
query parameters refused by name, the query string's bound (414) above every request
the schema allows and below gunicorn's, the URN pattern equal to the parser's rule."""

import re
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.http_semantics import MAX_QUERY_BYTES, api_query_parameters
from registry.namespaces.checker import MAX_QUERY_URN_LENGTH, MAX_QUERY_URNS
from registry.namespaces.openapi import URN_PATTERN, openapi_document
from urn8141 import URNSyntaxError, parse

ROOT = Path(__file__).resolve().parents[2]
# Percent-encoded, the longest a character can be: four bytes of UTF-8, "%XX" each.
WORST_ENCODED_CHARACTER = 12


def _is_urn(text: str) -> bool:
    try:
        parse(text)
    except URNSyntaxError:
        return False
    return True


URN_ALPHABET = "uUrRnN:aZ09-._~!$&'()*+,;=@/?#%Ff \x00\né"


def ecma_search(pattern: str, text: str) -> bool:
    """JSON Schema's patterns are ECMA 262: there "$" is the end of the text, where
    Python's also matches before a final newline."""
    return re.search(pattern.removesuffix("$") + r"\Z", text) is not None


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(URN_ALPHABET, max_size=30),
                 st.text(URN_ALPHABET, max_size=24).map(lambda tail: "urn:ab:" + tail)))
def test_the_schemas_urn_pattern_is_the_parsers_rule(text):
    assert ecma_search(URN_PATTERN, text) == _is_urn(text), text


def test_the_pattern_knows_the_components():
    for urn in ("urn:isbn:0451450523", "URN:X-Y:a%2Fb/c?+r?x?=q?=p#f/?", "urn:ab:c#"):
        assert ecma_search(URN_PATTERN, urn) and _is_urn(urn)
    for text in ("urn:ab:%G0", "urn:a:b", "urn:ab:c?=", "urn:ab:c\n", "urn:-ab:c"):
        assert not ecma_search(URN_PATTERN, text) and not _is_urn(text)


def _worst_query(parameters: list[dict]) -> int:
    """The longest query string the schema allows for these parameters."""
    length = 0
    for parameter in parameters:
        schema = parameter["schema"]
        items = schema.get("maxItems", 1) if schema.get("type") == "array" else 1
        one = schema.get("items", schema)
        value = one.get("maxLength")
        if value is None:  # read only in part by the server; the client's bound is ours
            continue
        ascii_only = one.get("pattern") in ("^[!-~]+$",) or one.get("pattern") == URN_PATTERN
        per_character = 3 if ascii_only else WORST_ENCODED_CHARACTER
        length += items * (len(parameter["name"]) + 2 + value * per_character)
    return length


def test_every_query_the_schema_allows_fits_the_servers_bounds():
    document = openapi_document("")
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            worst = _worst_query(operation.get("parameters", []))
            assert worst <= MAX_QUERY_BYTES, (method, path, worst)
    # gunicorn lets every query string the API reads reach it, to be told in JSON.
    config = (ROOT / "gunicorn.conf.py").read_text()
    line = int(re.search(r"^limit_request_line = (\d+)$", config, re.M).group(1))
    longest_path = max(len(path) for path in document["paths"])
    assert MAX_QUERY_BYTES + longest_path + len("OPTIONS ? HTTP/1.1") <= line <= 8190
    # The URN bounds the views enforce are the ones the schema states.
    check = document["paths"]["/api/check"]["get"]["parameters"][0]["schema"]
    assert (check["maxItems"], check["items"]["maxLength"]) == (MAX_QUERY_URNS,
                                                                MAX_QUERY_URN_LENGTH)


def _example(name: str, repeatable: bool) -> dict:
    return {"urn": "urn:isbn:0451450523", "a": "urn:a1:b", "b": "urn:a1:b", "nid": "abc",
            "kind": "formal", "page": "1", "status": "active"}.get(name, "x")


@pytest.mark.parametrize("operation", sorted(
    (path, method) for path, method in api_query_parameters() if path.startswith("/api/")
    and "{" not in path and method == "GET"))
def test_unknown_and_repeated_parameters_are_refused_by_name(client, db, operation):
    path, method = operation
    declared = api_query_parameters()[operation]
    required = {name: _example(name, many) for name, many in declared.items()
                if name in ("urn", "a", "b")}
    assert client.get(path, required).status_code == 200, path
    typo = client.get(path, {**required, "urns": "x", "pgae": "2"})
    assert typo.status_code == 400, path
    assert typo.json()["parameter"] == "urns, pgae"
    assert path in typo.json()["error"]
    for name, repeatable in declared.items():
        query = urllib.parse.urlencode([*required.items(), (name, _example(name, repeatable)),
                                        (name, _example(name, repeatable))])
        response = client.get(f"{path}?{query}")
        if repeatable:
            assert response.status_code == 200, (path, name)
        else:
            assert response.status_code == 400, (path, name)
            assert response.json()["parameter"] == name


def test_a_query_past_the_bound_is_a_414_that_says_what_to_do(client, db):
    response = client.get("/api/check", {"urn": "urn:a1:" + "x" * MAX_QUERY_BYTES})
    assert response.status_code == 414
    assert response["Content-Type"] == "application/json"
    assert "POST" in response.json()["error"]


def test_long_lists_go_in_a_post_body(client, db):
    urns = [f"urn:ab:{'x' * 1000}{n}" for n in range(MAX_QUERY_URNS + 5)]
    for many_or_long in ([f"urn:ab:{n}" for n in range(MAX_QUERY_URNS + 1)], urns[:1]):
        refused = client.get("/api/check", {"urn": many_or_long})
        assert refused.status_code == 400 and "POST" in refused.json()["error"]
    posted = client.post("/api/check", urns, content_type="application/json")
    assert posted.status_code == 200
    assert [result["urn"] for result in posted.json()["results"]] == urns


@pytest.mark.parametrize("query, parameter", [
    ({"a": "", "b": "urn:a1:b"}, "a"),
    ({"a": "urn:a1:b", "b": ""}, "b"),
    ({"a": "urn:a1:" + "b" * MAX_QUERY_URN_LENGTH, "b": "urn:a1:b"}, "a"),
])
def test_equivalent_refuses_what_its_schema_refuses(client, db, query, parameter):
    response = client.get("/api/equivalent", query)
    assert response.status_code == 400 and response.json()["parameter"] == parameter
