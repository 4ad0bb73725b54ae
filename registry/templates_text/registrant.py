"""The registrant part of a template: organisation, address, contact person,
email, phone and postal address, from labelled lines ("Organization:",
"E-mail:"), sub-headings ("Registering organization", "Designated contact") or
plain lines ("Commons Machinery AB", "Jonas Öberg <jonas@example.org>")."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields

# Linear time: the local part starts only where a run of its characters starts
# (else a long run without "@" is rescanned from each of its characters).
EMAIL = re.compile(r"(?:mailto:)?(?<![A-Za-z0-9._%+\-'])"
                   r"([A-Za-z0-9._%+\-']+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)")

ORG, CONTACT = "org", "contact"
# sub-label -> (the context it opens, or None; what its value is)
_SUBLABELS: dict[str, tuple[str | None, str]] = {}


def _sub(context: str | None, kind: str, *names: str) -> None:
    for name in names:
        _SUBLABELS[name] = (context, kind)


_sub(ORG, "organisation", "organization", "organisation", "registering organization",
     "registering organisation", "standards organization", "standards organisation",
     "organization name", "organisation name", "name of organization", "name of organisation",
     "company", "institution", "registrant organization", "registrant organisation",
     "sponsoring organization", "sponsoring organisation", "affiliation", "registrant name",
     "registering body", "standards body")
_sub(CONTACT, "contact", "contact", "contact name", "contact person", "designated contact",
     "designated contact person", "contact information", "designated contact information",
     "technical contact", "person", "registrant contact", "contact details")
_sub(CONTACT, "postal", "contact postal address", "contact address")
_sub(None, "name", "name", "full name")
_sub(None, "role", "role", "title", "position")
_sub(None, "email", "email", "e-mail", "mail", "electronic mail", "email address",
     "e-mail address", "contact email")
_sub(None, "phone", "phone", "telephone", "tel", "voice", "phone number", "telephone number")
_sub(None, "address", "address", "postal", "postal address", "mailing address", "postal mail",
     "street address")
_sub(None, "other", "web", "web url", "url", "uri", "homepage", "home page", "website",
     "web site", "fax", "facsimile", "www")
_SUB_RE = re.compile(
    r"^[-*\u2022]?\s*(?P<label>" +
    "|".join(re.escape(n).replace(r"\ ", r"\s+")
             for n in sorted(_SUBLABELS, key=len, reverse=True)) +
    r")\s*(?::\s*(?P<rest>.*)|$)", re.IGNORECASE)
_BULLET = re.compile(r"^(\s*)[-*+\u2022]\s+")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")
_ABBREVIATIONS = frozenset(("inc", "ltd", "co", "corp", "st", "dr", "mr", "mrs", "ms", "prof",
                            "no", "nr", "dept", "univ", "assoc"))


# Past this size the registrant part is not read line by line: no template's
# registrant says more than a few hundred characters.
MAX_CHARS = 20_000


@dataclass
class Registrant:
    """The registrant part, under the names of the app's template fields
    (registry.namespaces.template), so nothing maps one name to another."""

    registrant_organisation: str = ""
    registrant_address: str = ""
    contact_name: str = ""
    contact_email: str = ""
    contact_phone: str = ""
    contact_postal: str = ""
    leftover: str = ""  # what none of the fields above can hold


# The template fields a registrant part fills, in the dataclass's order.
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclass_fields(Registrant)
                                if f.name != "leftover")


@dataclass
class _Item:
    context: str | None
    kind: str  # a kind of _SUBLABELS, or "free" for unlabelled lines
    label: str = ""
    indent: int = 0
    inline: bool = False  # the value starts on the label's line
    column: int = 0  # where the value starts on the label's line
    lines: list[str] = field(default_factory=list)

    @property
    def value(self) -> str:
        """The lines, with their indentation relative to one another kept:
        continuation lines lose the indentation up to the value's column."""
        if not self.inline:
            return textwrap.dedent("\n".join(self.lines)).strip("\n")
        rest = [line[min(self.column, len(line) - len(line.lstrip(" "))):]
                for line in self.lines[1:]]
        return "\n".join([self.lines[0], *rest]).strip("\n")


class Items:
    """The items of a registrant part; each extractor takes the ones it uses, so
    a later extractor sees only what is left."""

    def __init__(self, items: list[_Item], text: str) -> None:
        self.all = items
        self.text = text
        self._used: set[int] = set()

    def take(self, pred: Callable[[_Item], bool]) -> _Item | None:
        for item in self.all:
            if id(item) not in self._used and pred(item):
                self._used.add(id(item))
                return item
        return None

    def left(self) -> list[_Item]:
        return [item for item in self.all if id(item) not in self._used]

    def any(self, kind: str) -> bool:
        return any(i.kind == kind for i in self.all)


@dataclass
class Found:
    """What the extractors took, for the ones after them."""

    organisation: _Item | None = None
    person: _Item | None = None
    contact: _Item | None = None


def parse_registrant(text: str) -> Registrant:
    """The registrant part as template fields: one extractor per field, in order,
    each taking the items it reads."""
    result = Registrant()
    if not text.strip():
        return result
    if len(text) > MAX_CHARS:
        result.leftover = text.strip()
        return result
    items = Items([i for i in _items(text) if i.value.strip()], text)
    found = Found()
    found.organisation = extract_organisation(items, result)
    found.person, found.contact = extract_contact_name(items, result)
    result.contact_email = extract_email(items)
    result.contact_phone = extract_phone(items)
    extract_addresses(items, result, found)
    return result


def extract_organisation(items: Items, result: Registrant) -> _Item | None:
    """The organisation (and the address that follows it on its line): a labelled
    organisation, a name under an organisation sub-heading, else the first plain
    line. Returns the labelled item it used."""
    org = items.take(lambda i: i.kind == "organisation") or \
        items.take(lambda i: i.kind == "name" and i.context == ORG)
    if org is None and items.any("contact"):
        # "Name: Mitre Corporation" then "Contact: Michael Mealling": the name is the body's.
        org = items.take(lambda i: i.kind == "name" and i.context is None)
    if org is not None:
        head, *more = org.value.split("\n")
        name, address = _name_and_address(head)
        if address:  # "Organization: Example Corp, 1 Main Street, Springfield"
            result.registrant_organisation = name
            result.registrant_address = "\n".join(x for x in (address, *more) if x.strip())
            return org
        result.registrant_organisation = head.strip() if org.inline else _first_sentence(head)
        tail = head[len(result.registrant_organisation):].strip()
        result.registrant_address = "\n".join(x for x in (tail, *more) if x.strip())
        return org
    free = items.take(lambda i: i.kind == "free" and i.context is None)
    if free is not None:
        head, *more = free.value.split("\n")
        name, address = _name_and_address(head)
        if EMAIL.search(head) and not more:  # "Jane Doe <jane@example.org>"
            result.contact_name = result.registrant_organisation = _person(head)
        elif address:  # "Example Corp, 1 Main Street, Springfield, IL 62701, USA"
            result.registrant_organisation = name
            result.registrant_address = address
            if more:
                items.all.append(_Item(None, "free", lines=["\n".join(more)]))
        else:
            result.registrant_organisation = _first_sentence(head)
            tail = head[len(result.registrant_organisation):].strip()
            rest = "\n".join(x for x in (tail, *more) if x.strip())
            if rest:
                items.all.append(_Item(None, "free", lines=[rest]))
    return None


# What may follow an organisation's name after a comma and still be its name.
_LEGAL_FORMS = {"inc", "inc.", "ltd", "ltd.", "llc", "l.l.c.", "gmbh", "ag", "sa", "s.a.",
                "bv", "b.v.", "nv", "n.v.", "plc", "corp", "corp.", "co", "co.", "e.v.",
                "ab", "oy", "as", "a/s", "srl", "s.r.l.", "spa", "s.p.a.", "pty", "pty ltd",
                "lp", "llp", "kg", "kk", "limited", "incorporated"}


def _name_and_address(line: str) -> tuple[str, str]:
    """An organisation and its postal address given on one line, split at the comma
    after the name ("Example Corp, Inc., 1 Main Street, Springfield, IL 62701, USA");
    ("", "") when the line is not one: no comma, an email, or after the name less
    than an address has (two parts, a street's, a box's or a postcode's number)."""
    if EMAIL.search(line) or "," not in line:
        return "", ""
    parts = [part.strip() for part in line.strip().rstrip(".").split(",")]
    name = parts[0]
    rest = parts[1:]
    while rest and rest[0].lower() in _LEGAL_FORMS:
        name += ", " + rest.pop(0)
    rest = [part for part in rest if part]
    address = ", ".join(rest)
    # At least a street (or box) and a place, with a number among them.
    if not name or len(rest) < 2 or not any(ch.isdigit() for ch in address):
        return "", ""
    return name, address


def extract_contact_name(items: Items, result: Registrant) -> tuple[_Item | None, _Item | None]:
    """The contact person: a "Name:" line, else a contact label's first line, else
    a role. Returns the name and contact items it used."""
    person = items.take(lambda i: i.kind == "name")
    contact = items.take(lambda i: i.kind == "contact")
    named = person or contact
    if named is not None:
        head = named.value.split("\n")[0]
        # "Contact: Jane Doe" stays as written; "Jane Doe <jane@...>, Editor" is cleaned.
        result.contact_name = head.strip() if named.inline and not EMAIL.search(head) \
            else _person(head)
    else:
        role = items.take(lambda i: i.kind == "role")
        if role is not None and not result.contact_name:
            result.contact_name = role.value.split("\n")[0]
    return person, contact


def extract_email(items: Items) -> str:
    """An "Email:" line's address, else one in the contact's lines, else the first
    address anywhere in the part."""
    labelled = [token.strip("<>(),;").removeprefix("mailto:") for i in items.all
                if i.kind == "email" for token in i.value.split()[:1] if "@" in token]
    in_contact = [m.group(1) for i in items.all if i.context == CONTACT or i.kind in
                  ("email", "contact") for m in EMAIL.finditer(i.value)]
    anywhere = [m.group(1) for m in EMAIL.finditer(items.text)]
    return (labelled or in_contact or anywhere or [""])[0].rstrip(".")


def extract_phone(items: Items) -> str:
    phone = items.take(lambda i: i.kind == "phone")
    return phone.value.split("\n")[0] if phone is not None else ""


def extract_addresses(items: Items, result: Registrant, found: Found) -> None:
    """The organisation's address, the contact's postal address, and what no field
    holds (the leftover), from the items no extractor took."""
    postal: list[str] = []
    if found.contact is not None and found.person is None:
        below = [line for line in found.contact.value.split("\n")[1:]
                 if line.strip().strip("<>,;.") != result.contact_email]
        if any(r.strip() for r in below):
            postal.append("\n".join(below).strip("\n"))
    address: list[str] = [result.registrant_address] if result.registrant_address else []
    leftover: list[str] = []
    for item in items.left():
        if item.kind == "postal":
            postal.append(item.value)
        elif item.kind == "address":
            (postal if item.context == CONTACT and (found.organisation is not None or address)
             else address).append(item.value)
        elif item.kind in ("free", "contact", "name") and item.context == CONTACT:
            postal.append(item.value)
        elif item.kind == "free" and item.context == ORG:  # the lines under the organisation
            address.append(item.value)
        elif item.kind in ("email", "role", "phone"):
            if item.value.strip() != result.contact_email and item.kind != "email":
                leftover.append(f"{item.label}: {item.value}")
        elif item.kind in ("other", "organisation", "name"):
            leftover.append(f"{item.label}: {item.value}" if item.label else item.value)
        else:
            leftover.append(item.value)
    result.registrant_address = "\n".join(address)
    result.contact_postal = "\n".join(postal)
    # A line that is only the email already taken says nothing more.
    email = result.contact_email
    leftover = ["\n".join(line for line in x.split("\n")
                          if line.strip().strip("<>,;.").removeprefix("mailto:") != email)
                for x in leftover]
    result.leftover = "\n\n".join(x for x in leftover if x.strip())


def _items(text: str) -> list[_Item]:
    """Split the registrant text into labelled items, remembering whether each
    sits under an organisation or a contact sub-heading."""
    items: list[_Item] = []
    context: str | None = None
    context_indent = -1
    current: _Item | None = None
    lines = text.split("\n")
    lines = [_BULLET.sub(r"\1", line) for line in lines]  # "- Email: x" is "Email: x"
    following = _next_non_blank(lines)
    for n, raw in enumerate(lines):
        indent = len(raw) - len(raw.lstrip())
        stripped = raw.strip()
        if not stripped:
            if current is not None and current.lines:
                if current.inline and _continues(current, following[n]):
                    current.lines.append("")  # a blank line inside an indented value
                    continue
                current = None
            continue
        if current is not None and current.inline and _continues(current, raw):
            current.lines.append(raw.rstrip())  # continuation of "Address: ..." lines
            continue
        m = _SUB_RE.match(stripped)
        if m is None:
            # A line at the label's own depth continues only an address, a label
            # on a line of its own, or unlabelled lines; otherwise it is new text.
            if current is None or (current.inline and current.kind not in ("address", "free")):
                current = _Item(context, "free", indent=indent)
                items.append(current)
            current.lines.append(raw.rstrip())
            continue
        label = " ".join(m.group("label").lower().split())
        opens, kind = _SUBLABELS[label]
        rest = (m.group("rest") or "").strip()
        if indent <= context_indent:
            context, context_indent = None, -1
        if opens is not None:
            context, context_indent = opens, indent
            if m.group("rest") is None:
                current = None  # "Registering organization" alone: a sub-heading
                continue
        column = indent + (m.start("rest") if rest else 0)
        current = _Item(context, kind, m.group("label"), indent, bool(rest), column,
                        [rest] if rest else [])
        items.append(current)
    return items


def _next_non_blank(lines: list[str]) -> list[str]:
    """For each line, the next line after it that is not blank ("" at the end):
    one pass from the end, not a scan ahead from every blank line."""
    out = [""] * len(lines)
    after = ""
    for n in range(len(lines) - 1, -1, -1):
        out[n] = after
        if lines[n].strip():
            after = lines[n]
    return out


def _continues(item: _Item, line: str) -> bool:
    """Whether ``line`` goes on with the value of a labelled item: it starts
    under the value, or deeper than the label without being a label itself."""
    indent = len(line) - len(line.lstrip())
    if not line.strip() or indent <= item.indent:
        return False
    return indent >= item.column or _SUB_RE.match(line.strip()) is None


def _person(text: str) -> str:
    """"Jonas Öberg <jonas@example.org>" -> "Jonas Öberg"; "IESG, iesg@ietf.org" -> "IESG"."""
    without = EMAIL.sub("", text)
    without = re.sub(r"[<>()\[\]]", " ", without)
    without = " ".join(without.split()).strip(" ,;:-")
    if "," in without:
        without = without.split(",")[0].strip()
    return without


def _first_sentence(line: str) -> str:
    """"IETF and the CORE working group. Should the group cease..." -> its first
    sentence; "ACME Inc. Research" stays whole."""
    for m in _SENTENCE_END.finditer(line):
        # The word before the full stop (a bounded look back: an abbreviation is short).
        before = line[max(0, m.start() - 40):m.start()].split()
        word = before[-1].lower() if before else ""
        if word in _ABBREVIATIONS or len(word) <= 1:
            continue
        if len(line) - m.end() < 25:  # a short tail is part of the name
            continue
        return line[:m.start() + 1]
    return line.strip()
