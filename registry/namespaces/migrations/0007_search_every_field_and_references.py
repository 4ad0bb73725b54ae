"""Search finds what the registry shows: the reference column joins the weighted
document (with the organisation, weight B) and ``search_text`` holds every field
of the current template, RFC numbers written one way ("RFC 3187" -> "RFC3187").

On PostgreSQL the documents are stored, generated columns (computed by the
database on every INSERT and UPDATE, so never out of date), each with a GIN
index: ``search_head`` (NID, organisation, references: what the registry table
shows) and ``search_vector`` (that and the template text). They are not model
fields; querysets.NamespaceQuerySet.search() names them."""

import re

from django.db import migrations

from registry.namespaces.template import TEXT_FIELDS

HEAD = (
    "setweight(to_tsvector('simple'::regconfig, COALESCE(nid, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(organisation, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE((\"references\")::text, '')), 'B')"
)
DOCUMENT = f"{HEAD} || setweight(to_tsvector('english'::regconfig, COALESCE(search_text, '')), 'C')"
OLD_DOCUMENT = (
    "(setweight(to_tsvector('simple'::regconfig, COALESCE(nid, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(organisation, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(search_text, '')), 'C'))"
)
_RFC_NUMBER = re.compile(r"\bRFC[\s-]*(\d+)\b", re.IGNORECASE)


def fill_search_text(apps, schema_editor):
    namespace_model = apps.get_model("namespaces", "Namespace")
    version_model = apps.get_model("namespaces", "TemplateVersion")
    current = {}
    for version in version_model.objects.order_by("namespace_id", "number").iterator():
        current[version.namespace_id] = version
    changed = []
    for namespace in namespace_model.objects.filter(pk__in=list(current)).iterator():
        version = current[namespace.pk]
        text = "\n".join(value for name in TEXT_FIELDS
                         if (value := (getattr(version, name) or "").strip()))
        namespace.search_text = _RFC_NUMBER.sub(lambda m: f"RFC{m.group(1)}", text)
        changed.append(namespace)
    namespace_model.objects.bulk_update(changed, ["search_text"], batch_size=500)


def add_vectors(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for sql in (
        "DROP INDEX IF EXISTS namespace_search_document",
        f"ALTER TABLE namespaces_namespace ADD COLUMN search_head tsvector "
        f"GENERATED ALWAYS AS ({HEAD}) STORED",
        f"ALTER TABLE namespaces_namespace ADD COLUMN search_vector tsvector "
        f"GENERATED ALWAYS AS ({DOCUMENT}) STORED",
        "CREATE INDEX namespace_search_head ON namespaces_namespace USING gin (search_head)",
        "CREATE INDEX namespace_search_vector ON namespaces_namespace USING gin (search_vector)",
    ):
        schema_editor.execute(sql, params=None)


def drop_vectors(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for sql in (
        "ALTER TABLE namespaces_namespace DROP COLUMN IF EXISTS search_vector",
        "ALTER TABLE namespaces_namespace DROP COLUMN IF EXISTS search_head",
        f"CREATE INDEX namespace_search_document ON namespaces_namespace "
        f"USING gin (({OLD_DOCUMENT}))",
    ):
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("namespaces", "0006_registry_generation")]

    operations = [
        migrations.RunPython(fill_search_text, migrations.RunPython.noop),
        migrations.RunPython(add_vectors, drop_vectors),
    ]
