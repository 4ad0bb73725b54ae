from django.db import migrations

from registry import history

TABLES = ["review_round", "review_requestevent", "review_comment"]


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial"), ("namespaces", "0003_counter_trigrams_append_only")]

    operations = [
        migrations.RunPython(history.forwards(TABLES), history.backwards(TABLES)),
    ]
