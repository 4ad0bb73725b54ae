"""Search finds what the registry shows: the reference column joins the weighted
document (with the organisation, weight B) and ``search_text`` holds every field
of the current template, RFC numbers written one way ("RFC 3187" -> "RFC3187").

The GIN index is over exactly querysets.search_document(); change both together."""

import re

from django.db import migrations

from registry.namespaces.template import TEXT_FIELDS

DOCUMENT = (
    "(setweight(to_tsvector('simple'::regconfig, COALESCE(nid, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(organisation, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE((\"references\")::text, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(search_text, '')), 'C'))"
)
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


def replace_index(apps, schema_editor, document=DOCUMENT):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS namespace_search_document", params=None)
    schema_editor.execute(
        f"CREATE INDEX namespace_search_document ON namespaces_namespace USING gin ({document})",
        params=None,
    )


def restore_index(apps, schema_editor):
    replace_index(apps, schema_editor, OLD_DOCUMENT)


class Migration(migrations.Migration):
    dependencies = [("namespaces", "0005_registry_generation")]

    operations = [
        migrations.RunPython(fill_search_text, migrations.RunPython.noop),
        migrations.RunPython(replace_index, restore_index),
    ]
