"""The fields of the RFC 8141 Appendix A registration template, in its order.

One abstract model holds them so that a draft request, each submitted round
and each published version carry exactly the same fields; the guidance shown
with each field condenses sections 6.4.1-6.4.7.

The contact block has two parts: what the registry publishes (the template's
own fields, ``TEXT_FIELDS``) and, per contact field, a private value for IANA
only (``PRIVATE_FIELDS``, declared by ``CONTACT_FIELDS``). Everything public
(pages, exports, the API, template.txt, the feed, list mail) reads
``TEXT_FIELDS`` only; copying a template from model to model reads
``STORED_FIELDS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.db import models
from django.utils.text import capfirst

# The longest text a template field may hold; real templates are far shorter.
FIELD_MAX_CHARS = 20_000


@dataclass(frozen=True)
class TemplateSection:
    title: str
    fields: tuple[str, ...]


class TemplateFields(models.Model):
    """Appendix A. NID, version and date live on the models that use these fields."""

    registrant_organisation = models.CharField(
        "organisation",
        max_length=300,
        blank=True,
        help_text="The person or organisation registering the NID.",
    )
    registrant_address = models.TextField(
        "organisation address", blank=True, help_text="Postal address of the organisation."
    )
    contact_name = models.CharField(
        "contact person", max_length=200, blank=True,
        help_text="The designated contact person for this namespace.",
    )
    contact_email = models.EmailField("contact email", max_length=254, blank=True)
    contact_phone = models.CharField("contact phone", max_length=64, blank=True)
    contact_postal = models.TextField("contact postal address", blank=True)
    private_contact_name = models.CharField(
        "contact person for IANA", max_length=200, blank=True,
        help_text="Only IANA staff (and you) see it. Empty: the published one.",
    )
    private_contact_email = models.EmailField(
        "contact email for IANA", max_length=254, blank=True,
        help_text="A personal address IANA may write to; never published. Empty: the "
                  "published one.",
    )
    private_contact_phone = models.CharField("contact phone for IANA", max_length=64, blank=True)
    private_contact_postal = models.TextField("contact postal address for IANA", blank=True)
    purpose = models.TextField(
        blank=True,
        help_text=(
            "Section 6.4.1: the kinds of resources named; scope and community of use; who "
            "benefits and how; how it relates to existing URN namespaces, URI schemes and other "
            "identifier systems; which software uses the URNs; whether resolution services exist; "
            "whether the namespace is to become part of a standard."
        ),
    )
    syntax = models.TextField(
        blank=True,
        help_text=(
            "Section 6.4.2: the structure of the NSS (ABNF, an algorithm or a regular "
            "expression, or 'opaque'); special encoding rules; URN-equivalence rules beyond "
            "section 3; mappings needed to conform to URN syntax; meaning of q- and "
            "f-components, if any."
        ),
    )
    assignment = models.TextField(
        blank=True,
        help_text=(
            "Section 6.4.3: who assigns URNs and how (open, closed or delegated) and how "
            "uniqueness is ensured."
        ),
    )
    security = models.TextField(
        "security and privacy",
        blank=True,
        help_text=(
            "Section 6.4.4: false positives and negatives in comparison, leakage of private "
            "information, directory harvesting, and the concerns of RFC 3552 and RFC 6973."
        ),
    )
    interoperability = models.TextField(
        blank=True,
        help_text=(
            "Section 6.4.5 (required): known interoperability issues, such as confusion with "
            "other namespaces, identifier systems or URI schemes."
        ),
    )
    resolution = models.TextField(
        blank=True,
        help_text=(
            "Section 6.4.6 (required): whether resolution is intended; who runs or recommends "
            "resolvers; handling of r-components."
        ),
    )
    documentation = models.TextField(
        blank=True,
        help_text=(
            "A pointer to an RFC, another standards body's specification, or a stable document "
            "about this namespace. Required for the fast track (section 6.3)."
        ),
    )
    additional_information = models.TextField(
        blank=True,
        help_text="Section 6.4.7 (optional): comparisons with namespaces that might overlap.",
    )
    revision_information = models.TextField(
        blank=True,
        help_text=(
            "For a revision: describe the differences from the prior version (section 6.2: "
            "MUST), noting changes in the underlying technology or management processes."
        ),
    )
    profile = models.TextField(
        "machine-readable profile", blank=True,
        help_text=(
            "Optional: the Syntax, Validation, equivalence and Resolution rules above as JSON: "
            "an ABNF (or regular-expression) NSS syntax, check-digit validators, lexical-"
            "equivalence steps, examples that must pass and counter-examples that must fail, "
            "and https resolver URL templates, each citing where the template says so. The "
            "registered namespaces' profiles, in /profiles.json, are worked examples."
        ),
    )

    class Meta:
        abstract = True


SECTIONS: tuple[TemplateSection, ...] = (
    TemplateSection(
        "Registrant",
        ("registrant_organisation", "registrant_address", "contact_name", "contact_email",
         "contact_phone", "contact_postal"),
    ),
    TemplateSection("Purpose", ("purpose",)),
    TemplateSection("Syntax", ("syntax",)),
    TemplateSection("Assignment", ("assignment",)),
    TemplateSection("Security and Privacy", ("security",)),
    TemplateSection("Interoperability", ("interoperability",)),
    TemplateSection("Resolution", ("resolution",)),
    TemplateSection("Documentation", ("documentation",)),
    TemplateSection("Additional Information", ("additional_information",)),
    TemplateSection("Revision Information", ("revision_information",)),
)

# Every published text field of the template, in the template's order.
TEXT_FIELDS: tuple[str, ...] = tuple(name for section in SECTIONS for name in section.fields)


@dataclass(frozen=True)
class ContactField:
    """One field of the contact block: the value published, and IANA's private one."""

    published: str
    private: str


CONTACT_FIELDS: tuple[ContactField, ...] = tuple(
    ContactField(name, f"private_{name}") for name in TEXT_FIELDS if name.startswith("contact_")
)
# The contact for IANA only: never in a public page, export, API answer, feed or mail.
PRIVATE_FIELDS: tuple[str, ...] = tuple(c.private for c in CONTACT_FIELDS)
PRIVATE_SECTION = TemplateSection("Contact for IANA only (not published)", PRIVATE_FIELDS)
# What a request, a round and a version store (and copy from one to the next).
STORED_FIELDS: tuple[str, ...] = TEXT_FIELDS + PRIVATE_FIELDS

# The fields of one line (a name, an address of mail, a number): the model's
# CharFields, read from TemplateFields so a new field says which it is by its type.
SINGLE_LINE_FIELDS: tuple[str, ...] = tuple(
    name for name in STORED_FIELDS
    if not isinstance(TemplateFields._meta.get_field(name), models.TextField))

# Required before a request can be submitted (Appendix A; 6.4.5 and 6.4.6 say MUST).
REQUIRED_FIELDS: tuple[str, ...] = (
    "registrant_organisation",
    "contact_name",
    "contact_email",
    "purpose",
    "syntax",
    "assignment",
    "security",
    "interoperability",
    "resolution",
)


def field_label(name: str) -> str:
    field = cast("models.Field[Any, Any]", TemplateFields._meta.get_field(name))
    return capfirst(str(field.verbose_name))  # "Contact email for IANA" keeps its capitals


# The machine-readable profile travels with the text fields (request, rounds, versions)
# but is JSON, not prose: it is not in TEXT_FIELDS nor in the plain-text template.
PROFILE_FIELD = "profile"
TEMPLATE_FIELDS: tuple[str, ...] = (*STORED_FIELDS, PROFILE_FIELD)


def template_values(obj) -> dict[str, str]:
    """Every stored field, the private contact and the profile included (for copying
    and for staff)."""
    return {name: getattr(obj, name) for name in TEMPLATE_FIELDS}


def private_contact(values: dict[str, str]) -> list[tuple[str, str]]:
    """IANA's private contact as (label, value) pairs, where it differs from the
    published one (an empty private field means "the published one")."""
    return [(field_label(c.private), value) for c in CONTACT_FIELDS
            if (value := (values.get(c.private) or "").strip())
            and value != (values.get(c.published) or "").strip()]


def missing_fields(values: Mapping[str, Any], *, fast_track: bool, revision: bool) -> list[str]:
    """The template fields still empty that submission needs."""
    required = list(REQUIRED_FIELDS)
    if fast_track:
        required.append("documentation")
    if revision:
        required.append("revision_information")
    return [name for name in required if not (values.get(name) or "").strip()]


# The label each field of a section with several fields is written under, in template.txt
# and on the pages (a section of one field is written under the section's title). The
# parser (registry/templates_text/registrant.py) reads these labels back; a field without
# one here is written under its model label.
LINE_LABELS: dict[str, str] = {
    "registrant_organisation": "Organisation",
    "registrant_address": "Address",
    "contact_name": "Contact",
    "contact_email": "Email",
    "contact_phone": "Phone",
    "contact_postal": "Contact postal address",
}
# Sections shown on the pages only when they hold something (the others say "—").
SHOWN_WHEN_FILLED: frozenset[str] = frozenset({"revision_information"})
# Fields whose addresses the pages turn into links.
LINKED_FIELDS: frozenset[str] = frozenset({"documentation"})
FAST_TRACK_NOTE = "Fast track requested by a standards body (RFC 8141 section 6.3)."


def line_label(name: str) -> str:
    return LINE_LABELS.get(name) or field_label(name)


def render_text(*, nid: str, version: int | None, date, values: dict[str, str],
                fast_track: bool = False) -> str:
    """The plain-text template in the layout IANA publishes, every section of
    ``SECTIONS`` in its order."""

    def block(label: str, text: str) -> str:
        text = (text or "").strip()
        if not text:
            return f"{label}:\n"
        indented = "\n".join(("   " + line) if line else "" for line in text.splitlines())
        return f"{label}:\n{indented}\n"

    def labelled(label: str, text: str) -> str:
        # Continuation lines start under the value, so the text reads back
        # unambiguously (registry.templates_text parses this layout).
        lines = (text or "").strip().splitlines()
        if not lines:
            return ""
        pad = " " * (len(label) + 2)
        rest = "".join(f"\n{pad}{line}" if line.strip() else "\n" for line in lines[1:])
        return f"{label}: {lines[0]}{rest}"

    parts = [
        f"Namespace Identifier:\n   {nid}\n",
        f"Version:\n   {version if version is not None else ''}\n",
        f"Date:\n   {date.isoformat() if date else ''}\n",
    ]
    for number, section in enumerate(SECTIONS):
        if len(section.fields) == 1:
            parts.append(block(section.title, values.get(section.fields[0], "")))
            continue
        lines = [FAST_TRACK_NOTE] if fast_track and number == 0 else []
        lines += [labelled(line_label(name), values.get(name, "")) for name in section.fields]
        parts.append(block(section.title, "\n".join(line for line in lines if line)))
    return "\n".join(parts)
