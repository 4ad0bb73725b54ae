"""The registry generation: one row that every public change moves, the key of
the public page and export cache (see actions.registry_changed)."""

import secrets

from django.db import migrations, models
from django.utils import timezone


def create_row(apps, schema_editor):
    generation = apps.get_model("namespaces", "RegistryGeneration")
    event = apps.get_model("namespaces", "NamespaceEvent")
    last = (event.objects.exclude(kind="imported").order_by("-created_at")
            .values_list("created_at", flat=True).first())
    generation.objects.get_or_create(
        pk=1, defaults={"token": secrets.token_hex(8), "number": 1,
                        "changed_at": timezone.now(), "published_at": last})


class Migration(migrations.Migration):
    dependencies = [("namespaces", "0005_iana_people_metadata_typed_references")]

    operations = [
        migrations.CreateModel(
            name="RegistryGeneration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("token", models.CharField(max_length=32)),
                ("number", models.PositiveBigIntegerField(default=0)),
                ("changed_at", models.DateTimeField()),
                ("published_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.RunPython(create_row, migrations.RunPython.noop),
    ]
