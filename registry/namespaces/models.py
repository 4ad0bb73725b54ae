"""The published registry: namespaces, their immutable template versions and
their append-only event log."""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.urls import reverse

from registry.history import AppendOnlyModel, AppendOnlyQuerySet, EventGuardedState
from registry.namespaces import xrefs
from registry.namespaces.querysets import NamespaceEventQuerySet, NamespaceQuerySet
from registry.namespaces.template import TemplateFields
from registry.namespaces.xrefs import Xref


def reference_link(xref: Xref | str) -> tuple[str, str]:
    """A typed reference (or an old label string) as (text, URL or "")."""
    if isinstance(xref, str):
        xref = xrefs.from_label(xref)
    return xrefs.label(xref), xrefs.link(xref)


class Namespace(EventGuardedState):
    """A registered NID. Never deleted and never reassigned (RFC 8141 section 5)."""

    class Kind(models.TextChoices):
        FORMAL = "formal", "Formal"
        INFORMAL = "informal", "Informal"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        DEPRECATED = "deprecated", "Deprecated"

    nid = models.CharField("NID", max_length=32,
                           help_text="As registered; compared case-insensitively.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    informal_number = models.PositiveIntegerField(null=True, blank=True, unique=True,
                                                  editable=False)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    status_note = models.TextField(
        "deprecation note", blank=True,
        help_text="For a deprecated namespace: why, and what to use instead.",
    )
    registered_on = models.DateField("registration date", null=True, blank=True)
    references = models.JSONField(
        default=list, blank=True,
        help_text='Typed as IANA types them: [{"type": "rfc", "data": "rfc5279"}, ...].',
    )
    record_updated = models.DateField(
        "updated", null=True, blank=True,
        help_text="The date IANA's registry gives for the record's last update.",
    )
    contact = models.JSONField(
        default=list, blank=True,
        help_text="Informal namespaces: the record's contact, as typed references.",
    )
    template_url = models.URLField(
        "template URL", blank=True,
        help_text="Where IANA publishes the template, when its text is not held here.",
    )
    template_date = models.DateField(null=True, blank=True,
                                     help_text="The date written inside that template.")
    registry_note = models.TextField(blank=True)
    profile = models.JSONField(
        "machine-readable profile", default=dict, blank=True,
        help_text="The published profile (urn8141.profiles); {} when there is none. "
                  "Written by namespace_set_profile() and by publishing a version.",
    )
    # Search document of the current version, written by version_publish().
    organisation = models.CharField(max_length=300, blank=True, editable=False)
    search_text = models.TextField(blank=True, editable=False)
    holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="namespaces",
        help_text="The account that may request new versions.",
    )
    replaced_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaces",
        help_text="For a deprecated namespace: the registered namespace to use instead.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NamespaceQuerySet.as_manager()

    class Meta:
        ordering = [Lower("nid")]
        constraints = [
            models.UniqueConstraint(Lower("nid"), name="namespace_nid_case_insensitive_unique"),
            models.CheckConstraint(
                condition=(Q(kind="formal", informal_number__isnull=True)
                           | Q(kind="informal", informal_number__isnull=False)),
                name="namespace_informal_number_iff_informal",
            ),
        ]
        indexes = [
            models.Index(fields=["kind", "status"]),
            # NID order answered from the index alone (it holds the NID and the id): an
            # API page deep in the list skips thousands of entries, not of rows (28 ms
            # -> 1 ms at 10,000 namespaces). PostgreSQL only; elsewhere a plain index.
            # The kind and updated_at let the export builder read every formal record's
            # (id, stamp) in order from it too, not from the wide rows (0.3 s -> 0.05 s
            # at 100,000).
            models.Index(Lower("nid"), name="namespace_nid_order",
                         include=["nid", "id", "kind", "updated_at"]),
        ]
        permissions = [("set_namespace_status", "Can deprecate and reinstate namespaces")]

    guarded_field = "status"
    guard_message = "Change a namespace's status with namespace_set_status()."

    def __str__(self) -> str:
        return self.nid

    def get_absolute_url(self) -> str:
        return reverse("namespaces:detail", args=[self.nid])

    @property
    def reference_links(self) -> list[tuple[str, str]]:
        """The registry's reference labels as (text, URL or "") pairs."""
        return [reference_link(xref) for xref in self.references]

    @property
    def contact_links(self) -> list[tuple[str, str]]:
        """An informal namespace's contact as (text, URL or "") pairs."""
        return [reference_link(xref) for xref in self.contact]

    @property
    def reference_labels(self) -> list[str]:
        return [text for text, _ in self.reference_links]

    @property
    def is_deprecated(self) -> bool:
        return self.status == self.Status.DEPRECATED

    def current_version(self) -> TemplateVersion | None:
        cached = getattr(self, "_prefetched_objects_cache", {}).get("versions")
        if cached is not None:
            return max(cached, key=lambda v: v.number, default=None)
        return self.versions.order_by("-number").first()


class TemplateVersion(AppendOnlyModel, TemplateFields):
    """One published version of a namespace's registration template (Appendix A).

    Immutable: a revision is a new row with the next number."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField("version")
    date = models.DateField(help_text="When this version was requested of IANA (YYYY-MM-DD).")
    nid = models.CharField("NID", max_length=32, help_text="The NID as written in this version.")
    fast_track = models.BooleanField(
        default=False, help_text="Registered through the fast track of section 6.3."
    )
    published_at = models.DateTimeField(auto_now_add=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_registration = models.ForeignKey(
        "review.RegistrationRequest", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", verbose_name="source request",
    )

    class Meta:
        ordering = ["namespace", "number"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "number"], name="one_version_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="version_starts_at_1"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace.nid} version {self.number}"

    def get_absolute_url(self) -> str:
        return reverse("namespaces:version", args=[self.namespace.nid, self.number])


class NamespaceEventQuerySetAppendOnly(AppendOnlyQuerySet, NamespaceEventQuerySet):  # type: ignore[override]
    """The event log's reads, on a queryset that cannot update or delete."""


class NamespaceEvent(AppendOnlyModel):
    """Everything that happened to a namespace: the registry's change log."""

    class Kind(models.TextChoices):
        IMPORTED = "imported", "Imported from the IANA registry"
        REGISTERED = "registered", "Registered"
        VERSION_PUBLISHED = "version_published", "New version published"
        STATUS_CHANGED = "status_changed", "Status changed"
        RECORD_CHANGED = "record_changed", "Registry record changed"
        HOLDER_CHANGED = "holder_changed", "Holder changed"
        SYNCED = "synced", "Brought in line with IANA's registry"
        ADDED_FROM_IANA = "added_from_iana", "Registered at IANA, added from its registry"
        PROFILE_SHIPPED = "profile_shipped", "Machine-readable profile installed"
        # IANA's registry no longer lists it: kept here (a NID is never removed), noted.
        DROPPED_AT_IANA = "dropped_at_iana", "Dropped from IANA's registry"

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    version = models.ForeignKey(TemplateVersion, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    from_status = models.CharField(max_length=12, blank=True)
    to_status = models.CharField(max_length=12, blank=True)
    comment = models.TextField(blank=True)
    changes = models.JSONField(
        default=dict, blank=True,
        help_text="Registry record fields this event changed: field: [before, after].",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = NamespaceEventQuerySetAppendOnly.as_manager()  # type: ignore[misc]

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.namespace.nid}: {self.get_kind_display()}"

    @property
    def changed_fields(self) -> list[str]:
        """The verbose names of the record fields this event changed."""
        names = []
        for name in self.changes:
            try:
                field = cast("models.Field[Any, Any]", Namespace._meta.get_field(name))
                names.append(str(field.verbose_name))
            except FieldDoesNotExist:  # a field renamed since: show its old name
                names.append(name)
        return names


class InformalNumberCounter(models.Model):
    """One row: the highest informal number ever assigned. Taken with
    SELECT ... FOR UPDATE so that concurrent registrations queue on it."""

    last_assigned = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"urn-{self.last_assigned}"


class Person(models.Model):
    """A person IANA's registry refers to (its ``<people>`` section): the contact of
    an informal namespace, or the reference of a formal one."""

    person_id = models.CharField(
        "id", max_length=100, unique=True,
        help_text="IANA's id for the person, an XML name such as Juha_Hakala.",
    )
    name = models.CharField(max_length=200, blank=True)
    org = models.CharField("organisation", max_length=200, blank=True)
    uris = models.JSONField(default=list, blank=True,
                            help_text="Contact URIs as IANA writes them (mailto:...).")
    updated = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["person_id"]
        verbose_name_plural = "people"

    def __str__(self) -> str:
        return self.name or self.person_id


class RegistryMetadata(models.Model):
    """What IANA's registry says about itself and each sub-registry: the designated
    experts as it lists them, and the date it was last updated."""

    class Key(models.TextChoices):
        REGISTRY = "registry", "The registry"
        FORMAL = "formal", "Formal URN Namespaces"
        INFORMAL = "informal", "Informal URN Namespaces"

    key = models.CharField(max_length=8, choices=Key.choices, unique=True)
    experts = models.CharField(max_length=500, blank=True,
                               help_text="As IANA lists them, e.g. 'A (team leader), B'.")
    updated = models.DateField(null=True, blank=True,
                               help_text="The date IANA's registry gives as last updated.")

    class Meta:
        verbose_name_plural = "registry metadata"

    def __str__(self) -> str:
        return self.get_key_display()


class RegistryEvent(AppendOnlyModel):
    """A change to the registry's own data: experts, people, IANA's updated date."""

    class Kind(models.TextChoices):
        EXPERTS_CHANGED = "experts_changed", "Designated experts changed"
        PERSON_ADDED = "person_added", "Person added"
        PERSON_CHANGED = "person_changed", "Person changed"
        UPDATED_CHANGED = "updated_changed", "IANA's update date changed"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    subject = models.CharField(max_length=100, help_text="The sub-registry or person id.")
    before = models.TextField(blank=True)
    after = models.TextField(blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.subject}"


class RegistryGeneration(models.Model):
    """One row: a number that every change to what the public pages show moves, in
    the same transaction as the change (``registry_changed()`` in actions.py).

    Public pages and exports are cached under a key that carries ``key``, so a
    change is visible at once and nothing stale is ever served. ``token`` is random
    per database, so two databases sharing one Redis never share an entry."""

    token = models.CharField(max_length=32)
    number = models.PositiveBigIntegerField(default=0)
    # Moved with ``number`` by every change but those only the review's own pages show
    # (``registry_changed(exports=False)``): the exports' files are named by it, so a
    # submission or a comment does not make them built again unchanged.
    exports_number = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField()
    # The registry's last change made here (its newest NamespaceEvent that is not
    # mirrored from IANA's registry): the registry page's "Last registry change" and
    # the <updated> of IANA's XML. Written only by record_namespace_events().
    real_change_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.token}-{self.number}"


class ExportGeneration(models.Model):
    """One built generation of the exports (registry.xml, the CSVs), stored in the
    database: the shared truth every app machine reads, replicated and backed up with
    the rest (export_build.py writes it, export_cache.py copies it to a machine's disk,
    which is only a cache of it). ``key`` is the exports' generation it was built from
    (``Generation.exports_key``); a row never changes once written, and only the newest
    ``KEEP_GENERATIONS`` of a database are kept. Derived: a build makes it again."""

    key = models.CharField(max_length=80, unique=True)
    token = models.CharField(max_length=32)  # RegistryGeneration.token
    number = models.PositiveBigIntegerField()  # RegistryGeneration.exports_number
    changed_at = models.DateTimeField(null=True)  # the generation's change: Last-Modified
    # What the documents' bytes depend on besides the rows (the format, SITE_URL): a
    # build splices from the previous generation only when it is the same.
    salt = models.CharField(max_length=32)
    # Each stored file's size in bytes: {"registry.xml": plain, "registry.xml.gz": ...}.
    sizes = models.JSONField()
    built_at = models.DateTimeField(auto_now_add=True)
    build_seconds = models.FloatField()
    built_by = models.CharField(max_length=200)  # host and process id

    class Meta:
        indexes = [models.Index(fields=["token", "-number"], name="export_generation_newest")]

    def __str__(self) -> str:
        return self.key


class ExportChunk(models.Model):
    """A piece (at most ``export_build.CHUNK_BYTES``) of one stored file of a
    generation: each export's gzip form (its plain form is that, inflated) and the
    index the next build splices from."""

    generation = models.ForeignKey(ExportGeneration, on_delete=models.CASCADE,
                                   related_name="chunks")
    name = models.CharField(max_length=64)
    seq = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["generation", "name", "seq"],
                                               name="export_chunk_order")]

    def __str__(self) -> str:
        return f"{self.name} #{self.seq} of {self.generation_id}"
