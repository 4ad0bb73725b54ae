"""PostgreSQL indexes for search: the weighted document of querysets.search_document()
(GIN over the same expression, so "document @@ query" uses it) and trigrams of
UPPER(nid) for the case-insensitive substring match of NIDs. Nothing on SQLite."""

from django.db import migrations

DOCUMENT = (
    "(setweight(to_tsvector('simple'::regconfig, COALESCE(nid, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(organisation, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(search_text, '')), 'C'))"
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX namespace_search_document ON namespaces_namespace USING gin ({DOCUMENT})",
        params=None,
    )
    schema_editor.execute(
        "CREATE INDEX namespace_nid_trigram ON namespaces_namespace "
        "USING gin ((UPPER(nid::text)) gin_trgm_ops)",
        params=None,
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS namespace_search_document", params=None)
    schema_editor.execute("DROP INDEX IF EXISTS namespace_nid_trigram", params=None)


class Migration(migrations.Migration):
    dependencies = [("namespaces", "0003_counter_trigrams_append_only")]

    operations = [migrations.RunPython(create, drop)]
