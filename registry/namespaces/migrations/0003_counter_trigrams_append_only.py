from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

from registry import history

TABLES = ["namespaces_templateversion", "namespaces_namespaceevent"]


def create_counter(apps, schema_editor):
    apps.get_model("namespaces", "InformalNumberCounter").objects.get_or_create(
        pk=1, defaults={"last_assigned": 0}
    )


class Migration(migrations.Migration):
    dependencies = [("namespaces", "0002_initial")]

    operations = [
        TrigramExtension(),
        migrations.RunPython(create_counter, migrations.RunPython.noop),
        migrations.RunPython(history.forwards(TABLES), history.backwards(TABLES)),
    ]
