"""The OpenAPI 3.1 description of the JSON API, served at /api/schema.

Its schemas are JSON Schema 2020-12 (OpenAPI 3.1's dialect); the tests validate
real responses of every endpoint against them."""

from __future__ import annotations

import copy

from registry.http_semantics import MAX_QUERY_BYTES
from registry.namespaces.checker import MAX_QUERY_URN_LENGTH, MAX_QUERY_URNS
from registry.namespaces.query_params import MAX_PAGE_DIGITS
from registry.namespaces.template import TEXT_FIELDS
from urn8141.syntax import _PCHAR_SET


def _nullable(schema: dict) -> dict:
    return {"oneOf": [schema, {"type": "null"}]}


STRING = {"type": "string"}
DATE = {"type": "string", "format": "date"}
URL = {"type": "string", "format": "uri"}

SCHEMAS: dict[str, dict] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {"error": STRING,
                       "parameter": {"type": "string",
                                     "description": "The query parameter refused (a 400), "
                                                    "or the parameters, comma-separated."},
                       "which": {"enum": ["a", "b"],
                                 "description": "The URN that is not one (/api/equivalent)."}},
    },
    "RateLimited": {
        "type": "object",
        "description": "A 429 (too many requests) or a 503 (a part the answer needs is "
                       "away): try again after retry_after seconds, as Retry-After says.",
        "required": ["error", "retry_after"],
        "properties": {"error": STRING, "retry_after": {"type": "integer", "minimum": 1}},
    },
    "NotFound": {
        "type": "object",
        "required": ["error", "did_you_mean"],
        "properties": {"error": STRING, "did_you_mean": {"type": "array", "items": STRING}},
    },
    "Reference": {
        "type": "object",
        "description": "A reference typed as IANA types it (rfc, rfc-errata, draft, uri, "
                       "person, text, ...), with the label and link the pages show.",
        "required": ["type", "data", "label", "url"],
        "properties": {
            "type": STRING,
            "data": _nullable(STRING),
            "label": STRING,
            "url": _nullable(URL),
        },
        "additionalProperties": False,
    },
    "NamespaceSummary": {
        "type": "object",
        "required": ["nid", "kind", "informal_number", "status", "status_note",
                     "registration_date", "updated", "references", "contact", "organisation",
                     "template_url", "url", "api_url"],
        "properties": {
            "nid": STRING,
            "kind": {"enum": ["formal", "informal"]},
            "informal_number": _nullable({"type": "integer", "minimum": 1}),
            "status": {"enum": ["active", "deprecated"]},
            "status_note": {"type": "string",
                            "description": "For a deprecated namespace: why, and what to "
                                           "use instead."},
            "registration_date": _nullable(DATE),
            "updated": _nullable(DATE),
            "references": {"type": "array", "items": {"$ref": "#/components/schemas/Reference"}},
            "contact": {"type": "array", "items": {"$ref": "#/components/schemas/Reference"}},
            "organisation": STRING,
            "template_url": _nullable(URL),
            "url": URL,
            "api_url": URL,
        },
    },
    "Version": {
        "type": "object",
        "required": ["version", "date", "nid", "fast_track", "published_at", "url", "template"],
        "properties": {
            "version": {"type": "integer", "minimum": 1},
            "date": DATE,
            "nid": STRING,
            "fast_track": {"type": "boolean"},
            "published_at": {"type": "string", "format": "date-time"},
            "url": URL,
            "template": {
                "type": "object",
                "description": "The registration template (RFC 8141 Appendix A), by field.",
                "required": list(TEXT_FIELDS),
                "properties": {name: STRING for name in TEXT_FIELDS},
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    },
    "NamespaceDetail": {
        "allOf": [
            {"$ref": "#/components/schemas/NamespaceSummary"},
            {
                "type": "object",
                "required": ["versions"],
                "properties": {"versions": {"type": "array",
                                            "items": {"$ref": "#/components/schemas/Version"}}},
            },
        ],
    },
    "NamespaceList": {
        "type": "object",
        "required": ["count", "page", "pages", "next", "previous", "results"],
        "properties": {
            "count": {"type": "integer", "minimum": 0},
            "page": {"type": "integer", "minimum": 1},
            "pages": {"type": "integer", "minimum": 1},
            "next": _nullable(URL),
            "previous": _nullable(URL),
            "results": {"type": "array",
                        "items": {"$ref": "#/components/schemas/NamespaceSummary"}},
        },
        "additionalProperties": False,
    },
    "CheckResult": {
        "oneOf": [
            {
                "type": "object",
                "required": ["urn", "valid", "error"],
                "properties": {
                    "urn": STRING,
                    "valid": {"const": False},
                    "error": {
                        "type": "object",
                        "required": ["message", "offset"],
                        "properties": {"message": STRING,
                                       "offset": _nullable({"type": "integer"})},
                    },
                },
            },
            {
                "type": "object",
                "required": ["urn", "valid", "nid", "nss", "normalized", "informal",
                             "registered", "registered_nid", "status", "namespace_url"],
                "properties": {
                    "urn": STRING,
                    "valid": {"const": True},
                    "nid": STRING,
                    "nss": STRING,
                    "r_component": _nullable(STRING),
                    "q_component": _nullable(STRING),
                    "f_component": _nullable(STRING),
                    "normalized": STRING,
                    "informal": {"type": "boolean"},
                    "registered": {"type": "boolean"},
                    "registered_nid": _nullable(STRING),
                    "status": _nullable({"enum": ["active", "deprecated"]}),
                    "namespace_url": _nullable(STRING),
                },
            },
        ],
    },
    "NidCheck": {
        "type": "object",
        "required": ["nid", "acceptable", "problems", "warnings", "other_open_requests"],
        "properties": {
            "nid": STRING,
            "acceptable": {"type": "boolean"},
            "problems": {"type": "array", "items": {
                "type": "object", "required": ["code", "message"],
                "properties": {"code": STRING, "message": STRING}}},
            "warnings": {"type": "array", "items": {
                "type": "object", "required": ["code", "message", "rule"],
                "properties": {"code": STRING, "message": STRING, "matched": STRING,
                               "link": STRING, "rule": STRING, "rule_link": STRING}}},
            "other_open_requests": {"type": "integer", "minimum": 0},
        },
    },
    "CheckResults": {
        "type": "object",
        "required": ["results"],
        "properties": {"results": {"type": "array",
                                   "items": {"$ref": "#/components/schemas/CheckResult"}}},
    },
}


# --- machine-readable namespace profiles (urn8141.profiles) -------------
# Kept in one block: the profile schema, what it adds to the namespace, version and
# check schemas, and its three paths (PROFILE_PATHS).

_CITED = {"type": "object", "properties": {"cite": STRING}}
SCHEMAS["Profile"] = {
    "type": "object",
    "description": "A namespace's machine-readable profile: NSS syntax (ABNF or a regular "
                   "expression), check-digit validators, lexical-equivalence steps, examples, "
                   "counter-examples and https resolver URL templates, each citing the "
                   "registration that states it.",
    "properties": {
        "syntax": {"type": "object", "properties": {"abnf": STRING, "regex": STRING,
                                                    "cite": STRING}},
        "validators": {"type": "array", "items": {"allOf": [_CITED, {
            "type": "object", "required": ["name"], "properties": {"name": STRING}}]}},
        "equivalence": {"type": "array", "items": {"allOf": [_CITED, {
            "type": "object", "required": ["step"], "properties": {"step": STRING}}]}},
        "examples": {"type": "array", "items": STRING},
        "counter_examples": {"type": "array", "items": STRING},
        "resolvers": {"type": "array", "items": {"allOf": [_CITED, {
            "type": "object", "required": ["url"],
            "properties": {"url": STRING, "name": STRING, "nss_prefix": STRING}}]}},
    },
    "additionalProperties": False,
}
SCHEMAS["NamespaceSummary"]["properties"]["has_profile"] = {"type": "boolean"}
SCHEMAS["Version"]["properties"]["profile"] = _nullable({"$ref": "#/components/schemas/Profile"})
SCHEMAS["NamespaceDetail"]["allOf"][1]["properties"]["profile"] = _nullable(
    {"$ref": "#/components/schemas/Profile"})
SCHEMAS["NSSError"] = {
    "type": "object",
    "required": ["rule", "offset", "message", "cite"],
    "properties": {
        "rule": {"type": "string", "description": "The ABNF rule or validator that failed."},
        "offset": {"type": "integer", "minimum": 0,
                   "description": "The character of the URN (from 0) where it failed."},
        "message": STRING,
        "cite": STRING,
    },
    "additionalProperties": False,
}
_VALID_RESULT = SCHEMAS["CheckResult"]["oneOf"][1]
_VALID_RESULT["required"] += ["nss_valid", "nss_errors", "namespace_normal_form", "resolves_to"]
_VALID_RESULT["properties"].update({
    "nss_valid": {"type": ["boolean", "null"],
                  "description": "By the namespace's profile; null when it has none."},
    "nss_errors": {"type": "array", "items": {"$ref": "#/components/schemas/NSSError"}},
    "namespace_normal_form": {"type": "string", "description": "RFC 8141 normalisation, "
                              "then the namespace's own equivalence steps."},
    "resolves_to": {"type": "array", "items": {
        "type": "object", "required": ["name", "url"],
        "properties": {"name": STRING, "url": URL}}},
})
SCHEMAS["Equivalence"] = {
    "type": "object",
    "required": ["a", "b", "equivalent", "rfc8141_equivalent", "steps"],
    "properties": {
        "a": STRING, "b": STRING,
        "equivalent": {"type": "boolean",
                       "description": "By RFC 8141 section 3.1 and the namespace's own rules."},
        "rfc8141_equivalent": {"type": "boolean", "description": "By RFC 8141 section 3.1."},
        "namespace_normal_forms": {"type": "array", "items": STRING},
        "rfc8141_normal_forms": {"type": "array", "items": STRING},
        "has_profile": {"type": "boolean"},
        "steps": {"type": "array", "items": {
            "type": "object", "required": ["step", "description", "cite"],
            "properties": {"step": STRING, "description": STRING, "cite": STRING}}},
    },
}
SCHEMAS["ProfilesExport"] = {
    "type": "object",
    "required": ["profiles"],
    "properties": {"about": STRING, "api": URL, "profiles": {
        "type": "object", "additionalProperties": {"$ref": "#/components/schemas/Profile"}}},
}
# RFC 8141 section 2's syntax as a JSON Schema (ECMA 262) pattern: what urn8141.parse
# accepts (tests/namespaces/test_api_limits.py holds them equal), written without the
# possessive runs its Python pattern uses and with each "%" followed by two hex digits.
def urn_pattern(pchar: str) -> str:
    return (f"^[uU][rR][nN]:[A-Za-z0-9][A-Za-z0-9-]{{0,30}}[A-Za-z0-9]:{pchar}"
            f"(?:{pchar}|/)*(?:\\?\\+{pchar}(?:{pchar}|/|\\?(?!=))*)?"
            f"(?:\\?={pchar}(?:{pchar}|/|\\?)*)?(?:#(?:{pchar}|/|\\?)*)?$")


URN_PATTERN = urn_pattern(f"(?:[{_PCHAR_SET}]|%[0-9A-Fa-f]{{2}})")
QUERY_URN = {"type": "string", "pattern": URN_PATTERN, "minLength": 1,
             "maxLength": MAX_QUERY_URN_LENGTH,
             "description": f"A URN (RFC 8141 section 2), at most {MAX_QUERY_URN_LENGTH} "
                            "characters."}
# In a path a server decodes percent-encoding before anyone reads it (WSGI's PATH_INFO):
# a URN with percent-encoded characters goes to /resolve/?urn= (query) instead.
PATH_URN = {**QUERY_URN, "pattern": urn_pattern(f"[{_PCHAR_SET}]"),
            "description": f"A URN (RFC 8141 section 2) without percent-encoded characters, "
                           f"at most {MAX_QUERY_URN_LENGTH} characters; one with them: "
                           f"/resolve/?urn= with the URN in the query."}
_URN_PARAM = {"in": "query", "required": True, "schema": QUERY_URN}
PROFILE_PATHS: dict[str, dict] = {
    "/api/equivalent": {
        "get": {
            "operationId": "equivalentUrns",
            "summary": "Whether two URNs are equivalent, by RFC 8141 and by their namespace.",
            "parameters": [{"name": "a", **_URN_PARAM}, {"name": "b", **_URN_PARAM}],
            "responses": {
                "200": {"description": "The answer and the steps applied.",
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/Equivalence"}}}},
                "400": {"description": "A missing, empty, malformed or too long URN "
                                       "(`parameter`, and `which` for one that is not a "
                                       "URN), or an unknown or repeated parameter.",
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/Error"}}}},
            },
        },
    },
    "/profiles.json": {
        "get": {
            "operationId": "listProfiles",
            "summary": "Every published machine-readable profile, by NID.",
            "responses": {"200": {"description": "The profiles.", "content": {
                "application/json": {"schema": {
                    "$ref": "#/components/schemas/ProfilesExport"}}}}},
        },
    },
    "/resolve/{urn}": {
        "get": {
            "operationId": "resolveUrn",
            "summary": "Send the client to the namespace's resolver for this URN.",
            "parameters": [{"name": "urn", "in": "path", "required": True,
                            "schema": PATH_URN}],
            "responses": {
                "303": {"description": "The one resolver (Location).", "headers": {
                    "Location": {"schema": URL}}},
                "200": {"description": "An HTML page listing several resolvers.",
                        "content": {"text/html": {"schema": STRING}}},
                "400": {"description": f"Not a URN, or longer than {MAX_QUERY_URN_LENGTH} "
                                       "characters.", "content": {"text/html": {
                                           "schema": STRING}}},
                "404": {"description": "The namespace declares no resolver for it.",
                        "content": {"text/html": {"schema": STRING}}},
            },
        },
    },
}


def _json(ref: str) -> dict:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}


def _response(description: str, ref: str, headers: dict | None = None) -> dict:
    return {"description": description, "content": _json(ref), **(
        {"headers": headers} if headers else {})}


INTEGER = {"type": "integer"}
UNKNOWN = ("A query parameter this path does not declare, or one that is not repeatable "
           "given twice (`parameter` names them).")
LARGEST_NUMBER = int("9" * MAX_PAGE_DIGITS)  # a page or id past it is refused unread
# What every path can answer besides its own: the server's limits, as it enforces them.
CONDITIONAL = {
    "304": {"description": "Not modified since the ETag or date the client sent."},
}
NOT_ALLOWED = {
    "405": _response("A method this path does not answer (HEAD is answered wherever GET "
                     "is); Allow lists the ones it does.", "Error",
                     {"Allow": {"schema": STRING, "required": True}}),
}
TOO_MANY = {
    "429": _response("Too many requests from this client in a short time; wait Retry-After "
                     "seconds. Only work counts: an answer from the cache is free.",
                     "RateLimited", {"Retry-After": {"schema": INTEGER, "required": True}}),
}
# The same outside /api/, where the site answers with its HTML pages.
HTML_ONLY = {"text/html": {"schema": STRING}}
NOT_ALLOWED_HTML = {"405": {"description": NOT_ALLOWED["405"]["description"],
                            "content": HTML_ONLY,
                            "headers": {"Allow": {"schema": STRING, "required": True}}}}
UNAVAILABLE = {
    "503": _response("A part this answer needs (the database, or the cache that keeps "
                     "the rate limits) is away for a moment: wait Retry-After seconds.",
                     "RateLimited", {"Retry-After": {"schema": INTEGER, "required": True}}),
}
UNAVAILABLE_HTML = {"503": {"description": UNAVAILABLE["503"]["description"],
                            "content": HTML_ONLY,
                            "headers": {"Retry-After": {"schema": INTEGER,
                                                        "required": True}}}}
TOO_MANY_HTML = {"429": {"description": TOO_MANY["429"]["description"], "content": HTML_ONLY,
                         "headers": {"Retry-After": {"schema": INTEGER, "required": True}}}}
NOT_ACCEPTABLE = {
    "406": {"description": "Accept-Encoding refuses both gzip and identity.",
            "content": {"text/plain": {"schema": STRING}, "application/json": {
                "schema": {"$ref": "#/components/schemas/Error"}}}},
}
URI_TOO_LONG = {
    "414": _response(f"A query string longer than {MAX_QUERY_BYTES} bytes (as sent, "
                     "percent-encoded); within each parameter's bounds a request never is. "
                     "Send a long list of URNs in a POST body to /api/check.", "Error"),
}
# What every cached GET under /api/ can answer besides its own.
CACHED = {**NOT_ACCEPTABLE, **NOT_ALLOWED, **URI_TOO_LONG, **UNAVAILABLE}
TOO_LARGE = {
    "413": _response("A body larger than the server takes (DATA_UPLOAD_MAX_MEMORY_SIZE, "
                     "2,621,440 bytes by default).", "Error"),
}


def _filter(name: str, values: list[str], description: str) -> dict:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": {"enum": values}}


def openapi_document(site_url: str) -> dict:
    """The whole OpenAPI 3.1 document, with ``site_url`` as its server."""
    from registry.namespaces.api import API_PAGE_SIZE  # the API module imports this one
    from registry.namespaces.checker import MAX_URNS
    from registry.namespaces.models import Namespace
    from registry.review.views import NID_CHECK_MAX_CHARS, ORGANISATION_MAX_CHARS

    urns = {"type": "array", "items": STRING, "minItems": 1, "maxItems": MAX_URNS}
    # Each operation's own responses, then what the server answers on every path.
    paths = copy.deepcopy(PROFILE_PATHS)
    paths["/api/equivalent"]["get"]["responses"].update(
        **CONDITIONAL, **CACHED, **TOO_MANY)
    paths["/profiles.json"]["get"]["responses"].update(
        **CONDITIONAL, **NOT_ACCEPTABLE, **NOT_ALLOWED_HTML, **UNAVAILABLE_HTML)
    paths["/resolve/{urn}"]["get"]["responses"].update(
        **NOT_ALLOWED_HTML, **TOO_MANY_HTML, **UNAVAILABLE_HTML)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "URN Namespace Registry API",
            "version": "1",
            "description": "The IANA registry of URN namespaces (RFC 8141), read-only, and "
                           "a URN checker. Lists and namespaces answer conditional requests "
                           "(ETag, Last-Modified). HEAD is answered wherever GET is, with the "
                           "same headers and no body. Every error is JSON: "
                           '{"error": "..."}, with "parameter" naming a refused query '
                           "parameter.",
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "servers": [{"url": site_url.rstrip("/")}],
        "paths": {
            "/api/namespaces/": {
                "get": {
                    "operationId": "listNamespaces",
                    "summary": f"The registered namespaces, {API_PAGE_SIZE} a page, by NID.",
                    "parameters": [
                        _filter("kind", list(Namespace.Kind.values), "Only this kind."),
                        _filter("status", list(Namespace.Status.values), "Only this status."),
                        {"name": "page", "in": "query", "required": False,
                         "description": "1 to the list's `pages`.",
                         "schema": {"type": "integer", "minimum": 1,
                                    "maximum": LARGEST_NUMBER}},
                    ],
                    "responses": {
                        "200": _response("A page of namespaces.", "NamespaceList"),
                        "400": _response("A filter value that is not one of its values (an "
                                         "empty one too), a page that is not a number from "
                                         f"1 to {LARGEST_NUMBER}, or: {UNKNOWN}", "Error"),
                        "404": _response("A page past the last (`pages`); `parameter` is "
                                         "page.", "Error"),
                        **CONDITIONAL,
                        **CACHED,
                    },
                },
            },
            "/api/namespaces/{nid}/": {
                "get": {
                    "operationId": "getNamespace",
                    "summary": "One namespace with every version of its template.",
                    "parameters": [{"name": "nid", "in": "path", "required": True,
                                    "description": "Matched case-insensitively.",
                                    "schema": STRING}],
                    "responses": {
                        "200": _response("The namespace.", "NamespaceDetail"),
                        "400": _response(UNKNOWN, "Error"),
                        "404": _response("Not registered; close matches.", "NotFound"),
                        **CONDITIONAL,
                        **CACHED,
                    },
                },
            },
            "/api/check": {
                "get": {
                    "operationId": "checkUrns",
                    "summary": f"Check URNs against RFC 8141 and this registry (at most "
                               f"{MAX_QUERY_URNS} in a query string; POST up to {MAX_URNS}).",
                    "parameters": [{"name": "urn", "in": "query", "required": True,
                                    "style": "form", "explode": True,
                                    "description": f"Repeatable, 1 to {MAX_QUERY_URNS} "
                                                   f"times; each 1 to {MAX_QUERY_URN_LENGTH}"
                                                   " printable ASCII characters (a URN is "
                                                   "ASCII). POST other text, longer URNs "
                                                   "and longer lists.",
                                    "schema": {"type": "array", "minItems": 1,
                                               "maxItems": MAX_QUERY_URNS,
                                               "items": {"type": "string",
                                                         "pattern": "^[!-~]+$",
                                                         "maxLength": MAX_QUERY_URN_LENGTH}}}],
                    "responses": {
                        "200": _response("One result per URN, in their order.",
                                         "CheckResults"),
                        "400": _response(f"No URN, more than {MAX_QUERY_URNS}, an empty "
                                         f"one, one longer than {MAX_QUERY_URN_LENGTH} "
                                         f"characters or with a character that is not "
                                         f"printable ASCII, or: {UNKNOWN}", "Error"),
                        **CONDITIONAL,
                        **CACHED,
                        **TOO_MANY,
                    },
                },
                "post": {
                    "operationId": "checkUrnList",
                    "summary": f"Check a list of URNs (at most {MAX_URNS}).",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"oneOf": [
                                urns,
                                {"type": "object", "required": ["urns"],
                                 "properties": {"urns": urns}},
                            ]}},
                            "text/plain": {"schema": {
                                "type": "string", "pattern": "\\S",
                                "description": f"One URN a line, at most {MAX_URNS} lines "
                                               "that are not empty."}},
                        },
                    },
                    "responses": {
                        "200": _response("One result per URN.", "CheckResults"),
                        "400": _response(f"A body that is not UTF-8, not JSON, not a list of "
                                         f"strings, empty, or more than {MAX_URNS} URNs; or "
                                         f"a query parameter (this takes none).", "Error"),
                        **NOT_ALLOWED,
                        **TOO_LARGE,
                        **URI_TOO_LONG,
                        **TOO_MANY,
                        **UNAVAILABLE,
                    },
                },
            },
            "/api/nid-check": {
                "get": {
                    "operationId": "checkNid",
                    "summary": "The live check of a proposed NID (RFC 8141 sections 2.1, "
                               "5.1, 5.2), as the request form uses it.",
                    "parameters": [
                        {"name": "nid", "in": "query", "required": False,
                         "description": f"The proposed NID; past {NID_CHECK_MAX_CHARS} "
                                        "characters the rest is not read.",
                         "schema": STRING},
                        {"name": "kind", "in": "query", "required": False,
                         "schema": {"enum": list(Namespace.Kind.values), "default": "formal"}},
                        {"name": "organisation", "in": "query", "required": False,
                         "description": f"For the confusion warnings; past "
                                        f"{ORGANISATION_MAX_CHARS} characters the rest is "
                                        "not read.", "schema": STRING},
                        {"name": "registration", "in": "query", "required": False,
                         "description": "The id of the request being edited (left out of "
                                        "the warnings).",
                         "schema": {"type": "integer", "minimum": 1,
                                    "maximum": LARGEST_NUMBER}},
                    ],
                    "responses": {
                        "200": _response("Whether the NID is acceptable, why not, and the "
                                         "warnings a reviewer would raise.", "NidCheck"),
                        "400": _response(f"A kind or registration that is not one of its "
                                         f"values, or: {UNKNOWN}", "Error"),
                        **NOT_ALLOWED,
                        **URI_TOO_LONG,
                        **TOO_MANY,
                        **UNAVAILABLE,
                    },
                },
            },
            "/api/schema": {
                "get": {
                    "operationId": "getSchema",
                    "summary": "This OpenAPI 3.1 document.",
                    "responses": {
                        "200": {"description": "The document.",
                                "content": {"application/json": {"schema": {
                                    "type": "object"}}}},
                        "400": _response(UNKNOWN, "Error"),
                        **CONDITIONAL,
                        **CACHED,
                    },
                },
            },
        } | paths,
        "components": {"schemas": SCHEMAS},
    }
