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
- Under ``/api/`` the query parameters of an operation are the ones the OpenAPI
  document declares: a name it does not declare, or one that is not repeatable
  (an array) given twice, is a 400 naming them, so a tool author's typo is seen; a
  query string longer than ``MAX_QUERY_BYTES`` is a 414 (JSON) before any view reads
  it, short enough that gunicorn (``limit_request_line``) lets every such request
  through to say so.

Content negotiation, for every answer that has a gzip form (the cached pages and
documents, registry/namespaces/public_cache.py, and the export files): one function,
``negotiate_encoding``, reads Accept-Encoding by RFC 9110 section 12.5.3 (q-values, ``*``,
``identity``, names in any case, ``x-gzip`` as gzip); ``representation_etag`` gives each
representation its own ETag (section 8.8.3) and ``none_match`` compares If-None-Match
with the selected one's, weakly (section 13.1.2); ``not_acceptable`` is the 406 when
the client refuses every form there is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render

from registry.namespaces.query_params import BadParameter

GZIP, IDENTITY = "gzip", "identity"
# RFC 9110 section 12.4.2's weight: q= 0 to 1 with at most three decimals ("q" in any case).
# Matched against a member stripped of its outer whitespace: a pattern with optional
# whitespace at both ends of an optional part tries every split of a run of spaces
# (an 8 KB header took half a second).
_CODING = re.compile(
    r"([!#$%&'*+.^_`|~0-9A-Za-z-]+)"
    r"(?:[ \t]*;[ \t]*[qQ]=((?:0(?:\.[0-9]{0,3})?)|(?:1(?:\.0{0,3})?)))?")
_ALIASES = {"x-gzip": GZIP}
# Identity, not listed: acceptable, after any coding listed with a q above 0 (three
# decimals at most: 0.001 is the smallest a client can write).
UNLISTED_IDENTITY = 0.0005  # section 8.4.1.3: a recipient SHOULD treat them as gzip
_ENTITY_TAG = re.compile(r'(?:W/)?("[\x21\x23-\x7e\x80-\xff]*")')
API_PREFIX = "/api/"
# The longest query string the API reads (a 414 past it). gunicorn.conf.py's
# limit_request_line is above it by more than the longest API path, so such a request
# reaches the application to be told; each GET parameter's bounds in openapi.py keep
# a request within it (tests/namespaces/test_api_limits.py).
MAX_QUERY_BYTES = 8000
SHOWN_NAME_CHARS = 40
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


@functools.cache
def api_query_parameters() -> dict[tuple[str, str], dict[str, bool]]:
    """Each API operation (path template, method) with the query parameters the OpenAPI
    document declares for it, each with whether it is repeatable (an array)."""
    from registry.namespaces.openapi import openapi_document

    declared: dict[tuple[str, str], dict[str, bool]] = {}
    for path, operations in openapi_document("")["paths"].items():
        for method, operation in operations.items():
            if method not in HTTP_METHODS:
                continue
            declared[(path, method.upper())] = {
                parameter["name"]: parameter["schema"].get("type") == "array"
                for parameter in operation.get("parameters", ()) if parameter["in"] == "query"}
    return declared


def undeclared_parameters(request: HttpRequest, template: str) -> BadParameter | None:
    """The refusal of a query naming a parameter the operation does not declare, or
    a parameter that is not repeatable more than once; None when the query is right."""
    declared = api_query_parameters().get((template, request.method or "GET"))
    if declared is None:
        return None
    unknown = [name for name in request.GET if name not in declared]
    repeated = [name for name in request.GET if name in declared and not declared[name]
                and len(request.GET.getlist(name)) > 1]
    if unknown:
        takes = f"it takes {', '.join(declared)}" if declared else "it takes none"
        return BadParameter(", ".join(name[:SHOWN_NAME_CHARS] for name in unknown),
                            f"not a parameter of {template}; {takes}")
    if repeated:
        return BadParameter(", ".join(repeated), "given more than once; give it once")
    return None


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
        if len(request.META.get("QUERY_STRING", "")) > MAX_QUERY_BYTES:
            return json_error(414, f"the query string is longer than {MAX_QUERY_BYTES} "
                                   f"bytes; send a long list of URNs in a POST body to "
                                   f"/api/check")
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
        template = path_template(match.route)
        allowed = api_methods().get(template)
        if allowed is None or request.method in allowed:
            refused = undeclared_parameters(request, template)
            return bad_parameter(request, refused) if refused else None
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


def accepted_codings(header: str) -> dict[str, float]:
    """Accept-Encoding as {coding in lower case: its q-value}: a member that is not
    ``coding [;q=value]`` with a valid value is ignored, as is a coding named again."""
    weights: dict[str, float] = {}
    for member in header.split(","):
        if not member.strip():
            continue  # the list rule allows empty members
        found = _CODING.fullmatch(member.strip())
        if found is None:
            continue
        coding = found.group(1).lower()
        coding = _ALIASES.get(coding, coding)
        weights.setdefault(coding, float(found.group(2)) if found.group(2) else 1.0)
    return weights


def negotiate_encoding(request: HttpRequest, offered: tuple[str, ...] = (GZIP,)) -> str | None:
    """The content coding to send (one of ``offered`` or "identity"), or None when the
    client accepts none of them (answer ``not_acceptable``). By RFC 9110 section 12.5.3:
    no Accept-Encoding means no preference (identity is sent); an empty one, identity
    only; a coding not listed takes the q of ``*`` if that is listed, else is refused
    (identity: accepted unless ``identity;q=0``, or ``*;q=0`` without an entry for
    identity, and then after any coding the client listed); q=0 refuses. The highest q
    wins; on a tie, the first of ``offered`` (smaller), then identity."""
    header = request.META.get("HTTP_ACCEPT_ENCODING")
    if header is None:
        return IDENTITY
    weights = accepted_codings(header)
    star = weights.get("*")

    def weight(coding: str) -> float:
        if coding in weights:
            return weights[coding]
        if star is not None:
            return star
        return UNLISTED_IDENTITY if coding == IDENTITY else 0.0

    choices = [(weight(coding), -rank, coding)
               for rank, coding in enumerate((*offered, IDENTITY))]
    best = max(choices)
    return best[2] if best[0] > 0 else None


def representation_etag(tag: str, coding: str) -> str:
    """The (strong) ETag of one representation: each content coding has its own."""
    return f'"{tag}"' if coding == IDENTITY else f'"{tag}-{coding}"'


def none_match(request: HttpRequest, etag: str) -> bool | None:
    """If-None-Match against the selected representation's ETag (RFC 9110 section
    13.1.2, weak comparison): True when it names it (or is ``*``), False when it does
    not, None when the request has none (then If-Modified-Since decides)."""
    header = request.META.get("HTTP_IF_NONE_MATCH")
    if header is None:
        return None
    if header.strip() == "*":
        return True
    return etag.removeprefix("W/") in _ENTITY_TAG.findall(header)


def not_acceptable(offered: tuple[str, ...] = (GZIP,)) -> HttpResponse:
    """406: the client refused every content coding this answer has (RFC 9110 section
    15.5.7). Plain text, or JSON under /api/ (the middleware)."""
    codings = ", ".join((*offered, IDENTITY))
    response = HttpResponse(f"Not acceptable: this is available as {codings} only; your "
                            f"Accept-Encoding refuses all of them.\n", status=406,
                            content_type="text/plain; charset=utf-8")
    response["Vary"] = "Accept-Encoding"
    return response
