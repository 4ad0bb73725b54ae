"""The foreign keys to a RegistrationRequest are called ``registration``: ``request`` is
the HTTP request only. Column renames: the append-only triggers fire on rows, not on
ALTER TABLE, and the unique constraint of a round's number follows its column (so it
changes in the migration state only). Pages and the admin still say "request"."""

import django.db.models.deletion
from django.db import migrations, models

RELATED_NAMES = {"round": "rounds", "requestevent": "events", "comment": "comments",
                 "outboundmessage": "outbound_messages", "inboundmessage": "inbound_messages",
                 "inboundplacement": "+"}


def _field(model: str) -> models.ForeignKey:
    optional = {"blank": True, "null": True} if model == "inboundmessage" else {}
    return models.ForeignKey(on_delete=django.db.models.deletion.PROTECT,
                             related_name=RELATED_NAMES[model],
                             to="review.registrationrequest", verbose_name="request",
                             **optional)


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0012_privacy_private_contact"),
    ]

    operations = [
        # The constraint names its fields: out of the state before the rename, back after.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveConstraint(model_name="round", name="one_round_number"),
        ]),
        *(migrations.RenameField(model_name=model, old_name="request", new_name="registration")
          for model in RELATED_NAMES),
        *(migrations.AlterField(model_name=model, name="registration", field=_field(model))
          for model in RELATED_NAMES),
        migrations.AlterModelOptions(name="round",
                                     options={"ordering": ["registration", "number"]}),
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AddConstraint(
                model_name="round",
                constraint=models.UniqueConstraint(fields=("registration", "number"),
                                                   name="one_round_number"),
            ),
        ]),
    ]
