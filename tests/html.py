"""Pages read as a visitor reads them: parsed HTML, not substrings of markup.

    doc = page(client.get(url))
    assert texts(doc, "//h1") == ["urn:isbn"]
    assert one(doc, "//form[@id='decide']//textarea[@name='reason']").text == "typed"
    assert "Withdrawn" in text(one(doc, "//main"))

XPath (lxml) is the one query language here: it needs no extra package and can
select by text as well as by attribute.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.html
from lxml.html import HtmlElement

_SPACE = re.compile(r"\s+")


def page(source: Any) -> HtmlElement:
    """The document of a response (or of bytes / str)."""
    content = getattr(source, "content", source)
    if isinstance(content, str):
        content = content.encode()
    return lxml.html.document_fromstring(content)


def text(element: HtmlElement | str) -> str:
    """What a reader sees of an element: its text with whitespace collapsed."""
    raw = element if isinstance(element, str) else element.text_content()
    return _SPACE.sub(" ", raw).strip()


def find(doc: HtmlElement, xpath: str) -> list[HtmlElement]:
    return doc.xpath(xpath)


def one(doc: HtmlElement, xpath: str) -> HtmlElement:
    """The single element the XPath selects; fails (with what was found) otherwise."""
    found = doc.xpath(xpath)
    assert len(found) == 1, f"{xpath!r} selected {len(found)} elements"
    return found[0]


def texts(doc: HtmlElement, xpath: str) -> list[str]:
    """The visible text of every element the XPath selects, in document order."""
    return [text(element) for element in doc.xpath(xpath)]


def main_text(source: Any) -> str:
    """The visible text of the page's <main>, the part that is not navigation."""
    return text(one(page(source), "//main"))


def links(doc: HtmlElement, xpath: str = ".//a") -> list[str]:
    """The hrefs of the links the XPath selects (by default: every link in ``doc``, which
    may be a document or one element of it)."""
    return [element.get("href") for element in doc.xpath(xpath)]


def field_value(doc: HtmlElement, name: str) -> str:
    """What a form field shows: an input's value, a textarea's text, a select's choice."""
    element = one(doc, f"//*[@name='{name}'][self::input or self::textarea or self::select]")
    if element.tag == "textarea":
        # A browser drops the one newline right after <textarea> (Django writes it).
        return (element.text or "").removeprefix("\n")
    if element.tag == "select":
        chosen = element.xpath(".//option[@selected]/@value")
        return chosen[0] if chosen else ""
    return element.get("value", "")


def field_errors(doc: HtmlElement, name: str) -> list[str]:
    """The error messages shown at a field: the invalid-feedback elements named after its id
    (crispy-bootstrap5 writes ``<id>_error``; the app's own forms ``<id>-error``), or the
    items of the errorlist Django itself writes (the admin: ``<ul class="errorlist"
    id="<id>_error">``)."""
    element = one(doc, f"//*[@name='{name}'][self::input or self::textarea or self::select]")
    field_id = element.get("id")
    feedback = [text(e) for e in doc.xpath("//*[contains(@class, 'invalid-feedback')]")
                if (e.get("id") or "").startswith((f"{field_id}_error", f"{field_id}-error"))]
    errorlist = texts(doc, f"//ul[contains(@class, 'errorlist')][@id='{field_id}_error']/li")
    return feedback + errorlist


def terms(dl: HtmlElement) -> dict[str, HtmlElement]:
    """A description list read as a reader pairs it: each <dt>'s text to the <dd> after it."""
    pairs = {}
    for term in dl.xpath("./dt"):
        value = term.getnext()
        assert value is not None and value.tag == "dd", f"<dt>{text(term)}</dt> has no <dd>"
        pairs[text(term)] = value
    return pairs
