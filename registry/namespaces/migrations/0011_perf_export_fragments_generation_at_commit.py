"""The exports' per-record fragments (export_files.py), and on PostgreSQL the registry
generation moved at commit (actions.registry_changed): a writer queues a bump row that
a deferred trigger turns into the one-row update as its transaction commits, so
concurrent writers hold the generation row only for their commit, not for their
whole transaction."""

import django.db.models.deletion
from django.db import migrations, models

CREATE = """
CREATE UNLOGGED TABLE namespaces_generationbump (
    id bigserial PRIMARY KEY,
    real_change_at timestamptz
);
CREATE FUNCTION namespaces_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE namespaces_registrygeneration
       SET number = number + 1,
           changed_at = greatest(changed_at, clock_timestamp()),
           real_change_at = coalesce(greatest(real_change_at, NEW.real_change_at),
                                     real_change_at, NEW.real_change_at)
     WHERE id = 1;
    IF NOT FOUND THEN
        INSERT INTO namespaces_registrygeneration (id, token, number, changed_at, real_change_at)
        VALUES (1, substr(md5(random()::text), 1, 16), 1, clock_timestamp(), NEW.real_change_at)
        ON CONFLICT (id) DO UPDATE SET number = namespaces_registrygeneration.number + 1,
            changed_at = greatest(namespaces_registrygeneration.changed_at, clock_timestamp());
    END IF;
    DELETE FROM namespaces_generationbump WHERE id = NEW.id;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER namespaces_generation_bump
    AFTER INSERT ON namespaces_generationbump
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION namespaces_generation_bump();
"""
DROP = """
DROP TABLE IF EXISTS namespaces_generationbump;
DROP FUNCTION IF EXISTS namespaces_generation_bump();
"""


def create_bump(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop_bump(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("namespaces", "0010_nid_order_index"),
    ]

    operations = [
        migrations.CreateModel(
            name="ExportFragment",
            fields=[
                ("namespace", models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                    related_name="export_fragment", serialize=False,
                    to="namespaces.namespace")),
                ("stamp", models.CharField(max_length=100)),
                ("xml", models.TextField()),
                ("iana_csv", models.TextField()),
                ("csv", models.TextField()),
            ],
        ),
        migrations.RunPython(create_bump, drop_bump),
    ]
