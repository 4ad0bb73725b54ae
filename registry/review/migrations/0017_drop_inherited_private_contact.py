"""Drafts of a new version started before a holder change was handled: a draft that
a new holder started was filled with the previous registrant's contact for IANA. Where
a working copy still holds, field for field, a private value of a published version
of the namespace it revises that another person gave, that value is dropped (the
name and address fall back to the draft's own account, as a new draft starts).
Rounds already submitted are history and stay as they are."""

from django.db import migrations

PRIVATE_FIELDS = ("private_contact_name", "private_contact_email", "private_contact_phone",
                  "private_contact_postal")
EDITABLE = ("draft", "changes_requested")


def drop_inherited(apps, schema_editor):
    RegistrationRequest = apps.get_model("review", "RegistrationRequest")
    TemplateVersion = apps.get_model("namespaces", "TemplateVersion")
    drafts = (RegistrationRequest.objects.filter(revises__isnull=False, state__in=EDITABLE)
              .select_related("registrant"))
    for draft in drafts:
        others = (TemplateVersion.objects.filter(namespace_id=draft.revises_id)
                  .exclude(source_registration__registrant_id=draft.registrant_id))
        foreign = {(name, getattr(version, name)) for version in others
                   for name in PRIVATE_FIELDS if getattr(version, name)}
        own = {"private_contact_name": draft.registrant.get_full_name(),
               "private_contact_email": draft.registrant.email}
        changes = {name: own.get(name, "") for name in PRIVATE_FIELDS
                   if getattr(draft, name) and (name, getattr(draft, name)) in foreign
                   and getattr(draft, name) != own.get(name)}
        if changes:
            RegistrationRequest.objects.filter(pk=draft.pk).update(**changes)


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0016_outbound_notice_without_request"),
        ("namespaces", "0020_holder_changed_event"),
    ]

    operations = [migrations.RunPython(drop_inherited, migrations.RunPython.noop)]
