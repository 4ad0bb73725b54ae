"""seed_load: N namespaces x V versions through the bulk action, events included."""

import pytest
from django.core.management import call_command

from registry.namespaces.models import Namespace, NamespaceEvent, RegistryGeneration
from registry.namespaces.sample_text import registration, seed_nid
from urn8141 import check_formal_nid


def test_seeds_namespaces_with_every_version_and_its_events(db):
    before = RegistryGeneration.objects.get(pk=1).number
    call_command("seed_load", namespaces=4, versions=3, prefix="demo", verbosity=0)
    seeded = Namespace.objects.filter(nid__startswith="demo-")
    assert seeded.count() == 4
    for namespace in seeded:
        numbers = list(namespace.versions.values_list("number", flat=True))
        assert sorted(numbers) == [1, 2, 3]
        kinds = sorted(namespace.events.values_list("kind", "version__number"))
        assert kinds == [("registered", 1), ("version_published", 2), ("version_published", 3)]
        current = namespace.versions.get(number=3)
        assert current.revision_information.startswith("Version 3:")
        assert namespace.organisation == current.registrant_organisation
        assert current.purpose.split(".")[0] in namespace.search_text
    assert RegistryGeneration.objects.get(pk=1).number > before
    assert NamespaceEvent.objects.filter(namespace__in=seeded).count() == 12


def test_running_again_adds_only_what_is_missing(db):
    call_command("seed_load", namespaces=2, versions=1, prefix="again", verbosity=0)
    call_command("seed_load", namespaces=3, versions=1, prefix="again", verbosity=0)
    assert Namespace.objects.filter(nid__startswith="again-").count() == 3


def test_a_field_set_is_about_2_kb_and_the_nids_are_valid():
    entry = registration("load", 42, 5, seed=8141)
    sizes = [sum(len(v) for v in values.values()) for _, values in entry["versions"]]
    assert all(1500 <= size <= 3000 for size in sizes), sizes
    assert registration("load", 42, 5, seed=8141) == entry  # deterministic
    for number in (1, 999, 10_000):
        problems = check_formal_nid(seed_nid("load", number))
        assert [p for p in problems if p.code != "already_registered"] == []


@pytest.mark.parametrize("arguments", [{"versions": 0}, {"namespaces": -1}])
def test_nonsense_is_refused_with_a_message(db, arguments):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--"):
        call_command("seed_load", verbosity=0, **arguments)
