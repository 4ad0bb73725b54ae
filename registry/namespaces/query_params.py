"""The canonical values of the query parameters a cached public page or document reads.

Only canonical values reach the public cache (public_cache.cache_key): a value is
either one the page knows (a status, a sort order, a page number without leading
zeros) or refused with ``BadParameter`` (a 400 naming the parameter: an HTML page,
or JSON under /api/), so junk values cannot fill the cache with copies. A view
declares its parameters once, reads their canonical values with
``canonical_query`` and builds its page (and every link it writes) from those
alone; parameters it does not declare are never read and never in a key.

A default value is left out of the key, so ``?sort=nid`` and no ``sort`` at all
share one entry.

Free text (a search, a URN to check) has no finite set of canonical values: a client
can send a new one with every request. Such a parameter is declared ``free_text=True``,
and a query that carries a value of one is not ``shared``: its answer is never kept in
the shared cache (public_cache.py keeps it in a small store of the process). A
parameter whose canonical form is not one with a finite set of values (``choice``,
``positive_integer``, or one marked ``finite``) and is not declared free text is refused
when it is declared, so free text cannot reach a shared key by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from django.core.paginator import EmptyPage, Page, Paginator
from django.http import HttpRequest

MAX_PAGE_DIGITS = 9  # far past any real page; bounded before int() reads it
SHOWN_VALUE_CHARS = 40  # of a refused value, in the error message


# Canonical forms whose values are a finite set the registry knows (a page past the
# last is refused by page_of): only these may key the shared cache.
_FINITE: set[Callable[[str], str]] = set()


def finite(canonical: Callable[[str], str]) -> Callable[[str], str]:
    """Mark a canonical form whose values are a finite, known set."""
    _FINITE.add(canonical)
    return canonical


class BadParameter(ValueError):
    """A query parameter whose value the page does not know: answered with a 400."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


@dataclass(frozen=True)
class Param:
    """One query parameter: its name, its default and how a typed value becomes the
    canonical one (``canonical`` raises ValueError with the reason to show)."""

    name: str
    canonical: Callable[[str], str]
    default: str = ""
    many: bool = False  # repeatable (?urn=a&urn=b): the values in order
    empty_is_default: bool = True  # "?status=" (what a form sends for "all")
    free_text: bool = False  # any text: its answers stay out of the shared cache

    def __post_init__(self) -> None:
        if not self.free_text and self.canonical not in _FINITE:
            raise TypeError(f"query parameter {self.name!r}: its canonical form is not one "
                            f"with a finite set of values; declare it free_text=True")

    def read(self, values: list[str]) -> str | tuple[str, ...]:
        if self.many:
            return tuple(self._one(value) for value in values)
        if not values:
            return self.default
        return self._one(values[-1])  # the value QueryDict.get gives

    def _one(self, value: str) -> str:
        if value == "" and self.empty_is_default:
            return self.default
        try:
            return self.canonical(value)
        except ValueError as exc:
            raise BadParameter(self.name, f"{exc} (not {value[:SHOWN_VALUE_CHARS]!r})") from None


def choice(values: Iterable[str]) -> Callable[[str], str]:
    """One of ``values``, exactly."""
    known = tuple(values)

    def canonical(value: str) -> str:
        if value not in known:
            raise ValueError(f"must be one of {', '.join(known)}")
        return value

    return finite(canonical)


@finite
def positive_integer(value: str) -> str:
    """1, 2, 3 ... written without sign, space or leading zero once read."""
    if not (value.isascii() and value.isdigit()) or len(value) > MAX_PAGE_DIGITS:
        raise ValueError(f"must be a whole number from 1 to {'9' * MAX_PAGE_DIGITS}")
    number = int(value)
    if number < 1:
        raise ValueError("must be 1 or more")
    return str(number)


def page_param(name: str = "page") -> Param:
    return Param(name, positive_integer, default="1")


@dataclass(frozen=True)
class Query:
    """A request's canonical query: each declared parameter's value (``query["sort"]``),
    what of it goes into a cache key (the values that are not the default), and whether
    that key may be in the shared cache (no free text in it; a Query made by hand is not,
    unless it says so)."""

    values: Mapping[str, str | tuple[str, ...]]
    key: tuple[tuple[str, str | tuple[str, ...]], ...]
    shared: bool = False

    def __getitem__(self, name: str) -> str:
        value = self.values[name]
        if not isinstance(value, str):
            raise TypeError(f"{name} is repeatable: read it with .many()")
        return value

    def many(self, name: str) -> tuple[str, ...]:
        value = self.values[name]
        if isinstance(value, str):
            raise TypeError(f"{name} is not repeatable")
        return value


NO_QUERY = Query({}, (), shared=True)


def canonical_query(request: HttpRequest, params: Iterable[Param]) -> Query:
    """Each declared parameter's canonical value (raises BadParameter)."""
    values: dict[str, str | tuple[str, ...]] = {}
    key = []
    shared = True
    for param in params:
        value = values[param.name] = param.read(request.GET.getlist(param.name))
        if value != param.default and value != ():
            key.append((param.name, value))
            shared = shared and not param.free_text
    return Query(values, tuple(sorted(key)), shared=shared)


def page_of(paginator: Paginator, name: str, number: str) -> Page:
    """The page of a canonical page number; past the last page is a BadParameter (a
    page that does not exist is never built, so never cached)."""
    try:
        return paginator.page(int(number))
    except EmptyPage:
        raise BadParameter(name, f"must be 1 to {paginator.num_pages} "
                                 f"(not {number[:SHOWN_VALUE_CHARS]!r})") from None
