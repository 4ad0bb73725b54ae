"""The exports' own generation: ``exports_number`` moves only with a change to what the
exports show (every registry_changed() but the review's own pages: a submission, a
comment), so a submission no longer makes the worker rebuild four documents that did
not change. On PostgreSQL the bump row says which it is and the deferred trigger moves
both numbers at commit."""

from django.db import migrations, models
from django.db.models import F

FUNCTION = """
CREATE OR REPLACE FUNCTION namespaces_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE namespaces_registrygeneration
       SET number = number + 1,
           exports_number = exports_number + CASE WHEN NEW.exports THEN 1 ELSE 0 END,
           changed_at = greatest(changed_at, clock_timestamp()),
           real_change_at = coalesce(greatest(real_change_at, NEW.real_change_at),
                                     real_change_at, NEW.real_change_at)
     WHERE id = 1;
    IF NOT FOUND THEN
        INSERT INTO namespaces_registrygeneration
               (id, token, number, exports_number, changed_at, real_change_at)
        VALUES (1, substr(md5(random()::text), 1, 16), 1, 1, clock_timestamp(),
                NEW.real_change_at)
        ON CONFLICT (id) DO UPDATE SET number = namespaces_registrygeneration.number + 1,
            exports_number = namespaces_registrygeneration.exports_number + 1,
            changed_at = greatest(namespaces_registrygeneration.changed_at, clock_timestamp());
    END IF;
    DELETE FROM namespaces_generationbump WHERE id = NEW.id;
    RETURN NULL;
END $$;
"""
OLD_FUNCTION = """
CREATE OR REPLACE FUNCTION namespaces_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
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
"""


def forwards(apps, schema_editor):
    # The exports built so far are named by the registry's number: they stay valid.
    apps.get_model("namespaces", "RegistryGeneration").objects.update(exports_number=F("number"))
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE namespaces_generationbump "
                              "ADD COLUMN exports boolean NOT NULL DEFAULT true")
        schema_editor.execute(FUNCTION)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(OLD_FUNCTION)
        schema_editor.execute("ALTER TABLE namespaces_generationbump DROP COLUMN exports")


class Migration(migrations.Migration):

    dependencies = [
        ("namespaces", "0014_event_kinds_of_privacy_and_profiles"),
    ]

    operations = [
        migrations.AddField(
            model_name="registrygeneration",
            name="exports_number",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.RunPython(forwards, backwards),
    ]
