"""HTTP as clients speak it, for every URL: HEAD, 405, 400/413 and JSON errors on the API.

``HttpSemanticsMiddleware`` (before CSRF and SecurityMiddleware in settings.MIDDLEWARE):

- HEAD is answered wherever GET is (RFC 9110 section 9.3.2): the request is served as
  a GET and the answer leaves with the same headers, Content-Length included, and no
  body. A load balancer probing ``/healthz`` with HEAD gets its 200.
- Under ``/api/`` the methods of a path are the ones the OpenAPI document declares
  (registry/namespaces/openapi.py, one place for them): any other gets a 405 with
  ``Allow``, before CSRF is looked at; a body past DATA_UPLOAD_MAX_MEMORY_SIZE gets a
  413 before it is read; and every error, whoever answered it (a view, Django's 404
  or 500 handler, the rate limit), leaves as JSON ``{"error": "..."}``.
- A query parameter a page does not know (query_params.BadParameter) is a 400 that
  names it: JSON under ``/api/``, the site's 400 page elsewhere; never cached.

And content negotiation as RFC 9110 has it, for whoever answers in more than one
representation: ``negotiate_encoding`` (section 12.5.3: q-values, ``*``, ``identity``,
codings in any case) and ``not_modified`` (section 13.1.2: If-None-Match against the
selected representation's own ETag, weak comparison; If-Modified-Since only without it).
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.utils.http import parse_etags, parse_http_date_safe

with warnings.catch_warnings():
    # WebOb 1.8 imports the standard library's cgi module (deprecated; on Python 3.13
    # WebOb depends on legacy-cgi instead): a warning about WebOb, not about this code.
    warnings.filterwarnings("ignore", "'cgi' is deprecated", DeprecationWarning)
    from webob.acceptparse import AcceptEncodingValidHeader, create_accept_encoding_header

from registry.namespaces.query_params import BadParameter

API_PREFIX = "/api/"
_ROUTE_ARGUMENT = re.compile(r"<(?:\w+:)?(\w+)>")
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_JSON = re.compile(r"application/(?:[\w.+-]+\+)?json\b")


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


@functools.cache
def api_methods() -> dict[str, tuple[str, ...]]:
    """Each API path template of the OpenAPI document with the methods it answers
    (HEAD wherever GET)."""
    from registry.namespaces.openapi import openapi_document

    methods = {}
    for path, operations in openapi_document("")["paths"].items():
        declared = [name.upper() for name in operations if name in HTTP_METHODS]
        if "GET" in declared and "HEAD" not in declared:
            declared.append("HEAD")
        methods[path] = tuple(sorted(declared))
    return methods


def path_template(route: str) -> str:
    """A Django route ("api/namespaces/<str:nid>/") as an OpenAPI path template."""
    return "/" + _ROUTE_ARGUMENT.sub(r"{\1}", route)


def json_error(status: int, message: str, **extra: object) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def bad_parameter(request: HttpRequest, exc: BadParameter) -> HttpResponse:
    if is_api(request):
        return json_error(400, str(exc), parameter=exc.name)
    return render(request, "400.html", {"parameter": exc.name, "message": exc.message},
                  status=400)


def _as_json(response: HttpResponseBase) -> HttpResponseBase:
    """An API error answered as HTML (Django's handlers, a decorator's 405) in JSON,
    with the headers that matter to a client (Allow, Retry-After)."""
    if _JSON.match(response.get("Content-Type", "")):
        return response
    status = response.status_code
    reason = HTTPStatus(status).phrase.lower() if status in HTTPStatus._value2member_map_ else (
        "error")
    replacement = json_error(status, reason)
    for name in ("Allow", "Retry-After", "Vary"):
        if response.has_header(name):
            replacement[name] = response[name]
    return replacement


class HttpSemanticsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        head = request.method == "HEAD"
        if head:
            request.method = "GET"
        response = self._answer(request)
        if head:
            request.method = "HEAD"
            _without_body(response)
        allow = response.get("Allow")
        if allow and "GET" in allow and "HEAD" not in allow:
            response["Allow"] = f"{allow}, HEAD"
        return response

    def _answer(self, request: HttpRequest) -> HttpResponseBase:
        if not is_api(request):
            return self.get_response(request)
        if _declared_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return json_error(413, f"the body is larger than "
                                   f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes")
        response = self.get_response(request)
        if response.status_code >= 400:
            response = _as_json(response)
        return response

    def process_view(self, request: HttpRequest, view: Callable, args: tuple,
                     kwargs: dict) -> HttpResponse | None:
        """Before CSRF (which runs in its own process_view, after this one): a method
        the API path does not declare is a 405."""
        match = request.resolver_match
        if not is_api(request) or match is None:
            return None
        allowed = api_methods().get(path_template(match.route))
        if allowed is None or request.method in allowed:
            return None
        response = json_error(405, f"{request.method} is not allowed here; "
                                   f"use {', '.join(allowed)}")
        response["Allow"] = ", ".join(allowed)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if isinstance(exception, BadParameter):
            return bad_parameter(request, exception)
        return None


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _without_body(response: HttpResponseBase) -> None:
    """The answer to a HEAD: every header of the GET's, Content-Length too, no body."""
    if response.streaming:
        response.streaming_content = []  # type: ignore[attr-defined]
        return
    content = response.content  # type: ignore[attr-defined]
    if not response.has_header("Content-Length"):
        response["Content-Length"] = str(len(content))
    response.content = b""  # type: ignore[attr-defined]



# --- content negotiation (RFC 9110) -----------------------------------------------------

IDENTITY = "identity"
GZIP = "gzip"
# A longer Accept-Encoding is no client's: read as if absent (bounded work per request).
ACCEPT_ENCODING_MAX = 512


def negotiate_encoding(request: HttpRequest, available: tuple[str, ...] = (GZIP,)) -> str:
    """The content coding to send, of ``available`` and "identity" (RFC 9110 12.5.3).

    WebOb parses the field (its grammar, q-values, codings in any case) and orders what
    it allows, ties in the order offered. The server's own choices, where the RFC leaves
    them to it: no field, or one that does not parse, gets identity (curl without
    --compressed sends none); identity the field does not name (nor ``*``) is acceptable
    but only chosen when no coding offered is; "x-gzip" is gzip (8.4.1.3); a field that
    allows nothing offered gets identity (the header is then disregarded, 12.5.3)."""
    value = request.META.get("HTTP_ACCEPT_ENCODING")
    if value is None or len(value) > ACCEPT_ENCODING_MAX:
        return IDENTITY
    field = create_accept_encoding_header(value)
    if not isinstance(field, AcceptEncodingValidHeader):
        return IDENTITY
    aliases = {coding: coding for coding in available}
    if GZIP in aliases:
        aliases["x-gzip"] = GZIP
    named = {coding.lower() for coding, _ in field.parsed}
    offers = field.acceptable_offers([*aliases, IDENTITY])
    if IDENTITY not in named and "*" not in named:
        offers = [offer for offer in offers if offer[0] != IDENTITY] or offers
    return aliases.get(offers[0][0], IDENTITY) if offers else IDENTITY


def not_modified(request: HttpRequest, etag: str, last_modified: datetime | None) -> bool:
    """Whether the client's copy of this representation is current (RFC 9110 13.1.2,
    13.1.3): If-None-Match names ``etag`` (weak comparison) or is "*"; only when the
    request has no If-None-Match, If-Modified-Since is at or after ``last_modified``."""
    if_none_match = request.META.get("HTTP_IF_NONE_MATCH")
    if if_none_match is not None:
        tags = parse_etags(if_none_match)
        return "*" in tags or _opaque(etag) in {_opaque(tag) for tag in tags}
    since = parse_http_date_safe(request.META.get("HTTP_IF_MODIFIED_SINCE", ""))
    return bool(since and last_modified and int(last_modified.timestamp()) <= since)


def _opaque(etag: str) -> str:
    return etag.removeprefix("W/")
