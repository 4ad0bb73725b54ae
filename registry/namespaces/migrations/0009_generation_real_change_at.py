"""The generation's ``published_at`` becomes ``real_change_at``: the registry's last
change made here, written with the event rows (record_namespace_events), so the
registry page and IANA's XML read it from the row every request reads anyway
instead of computing MAX(created_at) over the history on each build."""

from django.db import migrations


def fill(apps, schema_editor):
    generation = apps.get_model("namespaces", "RegistryGeneration")
    event = apps.get_model("namespaces", "NamespaceEvent")
    last = (event.objects.exclude(kind__in=("imported", "synced"))
            .order_by("-created_at").values_list("created_at", flat=True).first())
    generation.objects.filter(pk=1).update(real_change_at=last)


class Migration(migrations.Migration):

    dependencies = [
        ("namespaces", "0008_record_events_replaced_by_status_permission"),
    ]

    operations = [
        migrations.RenameField(
            model_name="registrygeneration", old_name="published_at", new_name="real_change_at",
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
