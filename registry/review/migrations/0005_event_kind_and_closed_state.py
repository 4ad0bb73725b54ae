from django.db import migrations, models

# Events that were stored as if they were transitions get their own kind; their
# ``transition`` is emptied. The rows are append-only history (a trigger refuses
# UPDATE on PostgreSQL), so this one migration lifts the trigger around its update.
OTHER_KINDS = {"create": "create", "assign": "assign",
               "set_standardisation": "standardisation", "remind": "remind"}
TRIGGER = "review_requestevent_append_only"


def _set_kinds(apps, schema_editor, mapping):
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute(f"ALTER TABLE review_requestevent DISABLE TRIGGER {TRIGGER}")
    for old_transition, (kind, new_transition) in mapping.items():
        schema_editor.execute(
            "UPDATE review_requestevent SET kind = %s, transition = %s "
            "WHERE kind = %s AND transition = %s",
            params=[kind, new_transition, *old_transition],
        )
    if postgres:
        schema_editor.execute(f"ALTER TABLE review_requestevent ENABLE TRIGGER {TRIGGER}")


def forwards(apps, schema_editor):
    _set_kinds(apps, schema_editor, {("transition", name): (kind, "")
                                     for name, kind in OTHER_KINDS.items()})


def backwards(apps, schema_editor):
    _set_kinds(apps, schema_editor, {(kind, ""): ("transition", name)
                                     for name, kind in OTHER_KINDS.items()})


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0004_rename_request_to_registrationrequest'),
    ]

    operations = [
        migrations.AddField(
            model_name='requestevent',
            name='kind',
            field=models.CharField(choices=[('transition', 'Transition'), ('create', 'Draft started'), ('assign', 'Assignment'), ('standardisation', 'Standardisation flag'), ('remind', 'Reminder to the experts')], default='transition', max_length=16),
        ),
        migrations.AlterField(
            model_name='registrationrequest',
            name='state',
            field=models.CharField(choices=[('draft', 'Draft'), ('in_review', 'In public review'), ('changes_requested', 'Changes requested'), ('awaiting_iesg', 'Awaiting IESG direction'), ('approved', 'Ready for IANA to register'), ('registered', 'Registered'), ('rejected', 'Rejected'), ('withdrawn', 'Withdrawn'), ('closed', 'Closed')], db_index=True, default='draft', max_length=20),
        ),
        migrations.AlterField(
            model_name='requestevent',
            name='from_state',
            field=models.CharField(choices=[('draft', 'Draft'), ('in_review', 'In public review'), ('changes_requested', 'Changes requested'), ('awaiting_iesg', 'Awaiting IESG direction'), ('approved', 'Ready for IANA to register'), ('registered', 'Registered'), ('rejected', 'Rejected'), ('withdrawn', 'Withdrawn'), ('closed', 'Closed')], max_length=20),
        ),
        migrations.AlterField(
            model_name='requestevent',
            name='to_state',
            field=models.CharField(choices=[('draft', 'Draft'), ('in_review', 'In public review'), ('changes_requested', 'Changes requested'), ('awaiting_iesg', 'Awaiting IESG direction'), ('approved', 'Ready for IANA to register'), ('registered', 'Registered'), ('rejected', 'Rejected'), ('withdrawn', 'Withdrawn'), ('closed', 'Closed')], max_length=20),
        ),
        migrations.AlterField(
            model_name='requestevent',
            name='transition',
            field=models.CharField(blank=True, help_text="The workflow transition, for kind 'transition'.", max_length=32),
        ),
        migrations.RunPython(forwards, backwards),
    ]
