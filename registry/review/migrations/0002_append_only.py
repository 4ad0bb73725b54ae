from django.db import migrations

from registry.namespaces import append_only_sql

TABLES = ["review_round", "review_requestevent", "review_comment"]


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial"), ("namespaces", "0003_counter_trigrams_append_only")]

    operations = [
        migrations.RunPython(append_only_sql.forwards(TABLES), append_only_sql.backwards(TABLES)),
    ]
