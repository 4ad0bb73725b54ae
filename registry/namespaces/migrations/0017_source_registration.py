"""A version's ``source_request`` is its ``source_registration``: ``request`` is the HTTP
request only. A column rename (the append-only trigger fires on rows, not on ALTER TABLE);
the admin still says "source request"."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("namespaces", "0016_export_order_from_the_index"),
        ("review", "0013_registration_not_request"),
    ]

    operations = [
        migrations.RenameField(model_name="templateversion", old_name="source_request",
                               new_name="source_registration"),
        migrations.AlterField(
            model_name="templateversion", name="source_registration",
            field=models.ForeignKey(blank=True, null=True,
                                    on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="+", to="review.registrationrequest",
                                    verbose_name="source request"),
        ),
    ]
