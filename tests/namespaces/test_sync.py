"""sync_iana: a report by default, every change an event with --apply, and the
daily task that runs it where IANA_SYNC_URL is set."""

import datetime as dt
import io

import feedparser
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from registry.namespaces import sync
from registry.namespaces.actions import namespace_register
from registry.namespaces.models import (
    Namespace,
    NamespaceEvent,
    Person,
    RegistryEvent,
    RegistryMetadata,
)
from registry.namespaces.public_cache import current_generation
from registry.namespaces.tasks import sync_iana_task
from tests.factories import complete_values
from tests.html import main_text, page, texts
from tests.namespaces.test_iana_xml import IANA_XML, newer_iana_file


@pytest.fixture
def newer(tmp_path):
    path = tmp_path / "urn-namespaces.xml"
    text = newer_iana_file().decode().replace(
        '<record date="2018-06-19">\n      <name>3gpp2</name>',
        '<record date="2018-06-20" updated="2026-05-01">\n      <name>3gpp2</name>')
    path.write_text(text)
    return path


@pytest.fixture
def iana_registry(db):
    call_command("import_registry", str(IANA_XML), verbosity=0)


def run(*args) -> str:
    out = io.StringIO()
    call_command("sync_iana", *args, stdout=out)
    return out.getvalue()


def test_the_default_is_a_report_that_changes_nothing(iana_registry, newer):
    events = NamespaceEvent.objects.count(), RegistryEvent.objects.count()
    report = run(str(newer))
    assert "new      trivore: new formal namespace" in report
    assert "changed  3gpp2: registered_on: 2018-06-19 -> 2018-06-20" in report
    assert "changed  3gpp2: record_updated: '' -> 2026-05-01" in report
    assert "experts  formal:" in report and "person   Ada_Example: new: Ada Example" in report
    assert "updated  registry: 2026-05-28" in report
    assert "run again with --apply" in report
    assert (NamespaceEvent.objects.count(), RegistryEvent.objects.count()) == events
    assert not Namespace.objects.by_nid("trivore").exists()


def test_apply_records_every_change_as_an_event(iana_registry, newer):
    report = run(str(newer), "--apply")
    assert "Recorded" in report
    trivore = Namespace.objects.by_nid("trivore").get()
    new_event = trivore.events.get()
    assert new_event.kind == NamespaceEvent.Kind.ADDED_FROM_IANA and "New in" in new_event.comment
    gpp2 = Namespace.objects.by_nid("3gpp2").get()
    assert str(gpp2.registered_on) == "2018-06-20" and str(gpp2.record_updated) == "2026-05-01"
    change = gpp2.events.get(kind="synced")
    assert "registered_on: 2018-06-19 -> 2018-06-20" in change.comment
    experts = RegistryEvent.objects.filter(kind="experts_changed", subject="formal").first()
    assert experts.before.endswith("Jyrki Ilva") and experts.after.endswith("Lars Svensson")
    assert RegistryMetadata.objects.get(key="formal").experts == experts.after
    assert RegistryEvent.objects.filter(kind="person_added", subject="Ada_Example").exists()
    assert str(RegistryMetadata.objects.get(key="registry").updated) == "2026-05-28"
    # In line now: a second run finds nothing and records nothing.
    count = NamespaceEvent.objects.count()
    assert "In line with" in run(str(newer), "--apply")
    assert NamespaceEvent.objects.count() == count


def test_synced_changes_do_not_count_as_changes_made_here(client, iana_registry, newer):
    run(str(newer), "--apply")
    assert current_generation().real_change_at is None
    assert b"<updated>2026-05-28</updated>" in client.get("/registry.xml").getvalue()


def test_rows_only_held_here_are_reported_never_removed(iana_registry, tmp_path):
    path = tmp_path / "fewer.xml"
    path.write_text(IANA_XML.read_text().replace("""    <record>
      <name>xmpp</name>
      <xref type="rfc" data="rfc4854"/>
    </record>""", ""))
    assert "dropped  xmpp: dropped from fewer.xml; kept here" in run(str(path))
    assert "1 differences" in run(str(path))
    report = run(str(path), "--apply")
    assert "dropped  xmpp: dropped from fewer.xml; noted in its history, kept here" in report
    xmpp = Namespace.objects.by_nid("xmpp").get()
    event = xmpp.events.get(kind=NamespaceEvent.Kind.DROPPED_AT_IANA)
    assert event.comment == "No longer in fewer.xml; kept here, as every NID is."
    # Noted once: the next run names it, records nothing.
    again = run(str(path), "--apply")
    assert "its history notes the drop" in again and "In line with" in again
    assert xmpp.events.filter(kind=NamespaceEvent.Kind.DROPPED_AT_IANA).count() == 1


def test_a_nid_dropped_at_iana_leaves_a_trace_in_its_history_and_the_feed(
        client, iana_registry, tmp_path):
    path = tmp_path / "fewer.xml"
    path.write_text(IANA_XML.read_text().replace("""    <record>
      <name>xmpp</name>
      <xref type="rfc" data="rfc4854"/>
    </record>""", ""))
    run(str(path), "--apply")
    doc = page(client.get(reverse("namespaces:history", args=["xmpp"])))
    history = texts(doc, "//table[@id='history']/tbody/tr/td[2]")
    assert history[0] == "Dropped from IANA's registry"
    feed = feedparser.parse(client.get(reverse("namespaces:feed")).content)
    assert "xmpp: dropped from IANA's registry (kept here)" in [e.title for e in feed.entries]
    assert current_generation().real_change_at is None  # IANA's change, not one made here


def test_the_feed_entry_of_a_nid_new_at_iana_gives_its_registration_date(client,
                                                                          iana_registry,
                                                                          newer):
    run(str(newer), "--apply")
    feed = feedparser.parse(client.get(reverse("namespaces:feed")).content)
    (entry,) = [e for e in feed.entries if e.title.startswith("New formal namespace: trivore")]
    registered = Namespace.objects.by_nid("trivore").get().registered_on
    assert registered is not None
    assert entry.summary.startswith(f"Registered at IANA on {registered:%Y-%m-%d}.")


def test_a_nid_new_at_iana_is_new_not_brought_in_line(client, iana_registry, newer):
    run(str(newer), "--apply")
    feed = feedparser.parse(client.get(reverse("namespaces:feed")).content)
    assert "New formal namespace: trivore (registered at IANA)" in [e.title for e in feed.entries]
    doc = page(client.get(reverse("namespaces:history", args=["trivore"])))
    history = texts(doc, "//table[@id='history']/tbody/tr/td[2]")
    assert NamespaceEvent.Kind.ADDED_FROM_IANA.label in history
    assert NamespaceEvent.Kind.SYNCED.label not in history
    note = main_text(client.get(reverse("namespaces:detail", args=["trivore"])))
    assert "registered at IANA directly" in note and "predates" not in note
    assert "predates" in main_text(client.get(reverse("namespaces:detail", args=["xmpp"])))


def test_the_report_names_nids_registered_here_that_iana_lacks(iana_registry, newer, staff,
                                                                 registrant):
    namespace_register(kind="formal", nid="heredoc", values=complete_values(registrant),
                       date=dt.date(2026, 11, 1), actor=staff, holder=registrant)
    for args in ((str(newer),), (str(newer), "--apply")):
        report = run(*args)
        assert "here     heredoc: registered here, not yet in" in report
    assert "In line with" in run(str(newer))  # only reported, never a difference to record


def test_a_bad_file_changes_nothing(iana_registry, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_bytes(newer_iana_file().replace(
        b"https://www.trivore.com/", b"javascript:alert(1)"))
    with pytest.raises(CommandError, match="Nothing changed.*trivore.*not an http"):
        run(str(path), "--apply")
    assert not Namespace.objects.by_nid("trivore").exists()
    assert not Person.objects.filter(person_id="Ada_Example").exists()


@pytest.mark.parametrize("source", ["file:///etc/passwd", "ftp://example.org/x.xml",
                                    "/no/such/file.xml"])
def test_only_files_and_http_urls_are_read(db, source):
    with pytest.raises(CommandError, match="Nothing changed"):
        run(source)


def test_a_url_is_fetched(iana_registry, newer, monkeypatch):
    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    seen = []

    def urlopen(request, timeout):
        seen.append(request.full_url)
        return Response(newer.read_bytes())

    monkeypatch.setattr(sync.urllib.request, "urlopen", urlopen)
    assert "trivore" in run("https://www.iana.org/assignments/urn-namespaces/urn-namespaces.xml")
    assert seen == ["https://www.iana.org/assignments/urn-namespaces/urn-namespaces.xml"]


def test_the_daily_task_is_off_by_default_and_applies_when_set(iana_registry, newer,
                                                               settings):
    settings.IANA_SYNC_URL = ""
    sync_iana_task()
    assert not Namespace.objects.by_nid("trivore").exists()
    settings.IANA_SYNC_URL = str(newer)
    sync_iana_task()
    assert Namespace.objects.by_nid("trivore").exists()


def test_the_command_needs_a_source(db, settings):
    settings.IANA_SYNC_URL = ""
    with pytest.raises(CommandError, match="IANA_SYNC_URL"):
        run()


def test_the_history_and_the_feed_never_show_a_path_of_the_server(client, iana_registry,
                                                                  newer):
    """A file is recorded by its base name: where it lay on the server is nobody's
    business (the history and the Atom feed are public)."""
    run(str(newer), "--apply")
    comments = [e.comment for e in NamespaceEvent.objects.filter(kind="synced")]
    assert comments and all("urn-namespaces.xml" in c for c in comments)
    assert not any(str(newer.parent) in c for c in comments)
    feed = client.get(reverse("namespaces:feed")).content.decode()
    assert "urn-namespaces.xml" in feed
    assert str(newer.parent) not in feed


@pytest.mark.parametrize(("source", "recorded"), [
    ("/srv/registry/private/urn-namespaces.xml", "urn-namespaces.xml"),
    ("urn-namespaces.xml", "urn-namespaces.xml"),
    ("https://www.iana.org/assignments/urn-namespaces/urn-namespaces.xml",
     "https://www.iana.org/assignments/urn-namespaces/urn-namespaces.xml"),
    ("https://user:secret@mirror.example:8443/urn.xml?v=2#top",
     "https://mirror.example:8443/urn.xml?v=2"),
])
def test_a_source_is_recorded_as_its_url_or_its_file_name(source, recorded):
    assert sync.recorded_source(source) == recorded


@pytest.mark.django_db(transaction=True)
def test_noting_a_drop_is_a_write_of_its_own(tmp_path):
    """namespace_note_dropped locks the row and writes the event in one transaction of
    its own, as every action does, whoever calls it (not only sync.apply's)."""
    from registry.namespaces.actions import namespace_note_dropped

    call_command("import_registry", str(IANA_XML), verbosity=0)
    xmpp = Namespace.objects.by_nid("xmpp").get()
    assert namespace_note_dropped(namespace=xmpp, source="fewer.xml")
    assert not namespace_note_dropped(namespace=xmpp, source="fewer.xml")  # once per drop
    assert xmpp.events.filter(kind=NamespaceEvent.Kind.DROPPED_AT_IANA).count() == 1


def test_comparing_asks_the_same_queries_however_many_nids_iana_dropped(iana_registry,
                                                                        tmp_path):
    """Whether each NID gone from IANA's file was noted dropped already is read for all
    of them at once, not once a NID."""
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    whole = IANA_XML.read_text()
    records = re.findall(r"    <record>\n      <name>[^<]+</name>.*?</record>\n", whole, re.S)
    assert len(records) > 10

    def queries(dropped: int) -> tuple[int, int]:
        text = whole
        for record in records[:dropped]:
            text = text.replace(record, "")
        path = tmp_path / f"fewer-{dropped}.xml"
        path.write_text(text)
        with CaptureQueriesContext(connection) as captured:
            compared = sync.compare(sync.load(str(path)))
        return len([c for c in compared if c.what == "dropped"]), len(captured)

    (few, few_queries), (many, many_queries) = queries(2), queries(10)
    assert 2 <= few < many
    assert few_queries == many_queries
