"""Response times of the public pages with 10,000 namespaces.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/urn_registry .venv/bin/python bench/pages.py

Creates a throwaway test database (test_<name>), fills it with the real registry
plus 10,000 formal namespaces (a tenth with a published template), and times
each page through Django's test client: median and best of --repeat runs, in
milliseconds, with the number of SQL queries. Run it against PostgreSQL: that is
where search, locks and the numbers that matter live.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

PAGES = [
    ("registry, first page", "/"),
    ("registry, page 20", "/?fpage=20"),
    ("registry, letter b, by date", "/?letter=b&sort=-date"),
    ("search 'archive records'", "/search/?q=archive+records"),
    ("search 'bulk0500'", "/search/?q=bulk0500"),
    ("did-you-mean 'bulk0500x'", "/search/?q=zzbulk0500x"),
    ("namespace page", "/namespaces/bulk05000/"),
    ("API list, page 50", "/api/namespaces/?page=50"),
    ("registry.csv (10,088 rows)", "/registry.csv"),
    ("registry.xml (10,088 rows)", "/registry.xml"),
    ("URN checker, one URN", "/check/?urn=urn:isbn:0451450523"),
]


def populate(count: int) -> None:
    from registry.namespaces.models import Namespace, TemplateVersion

    call_command("import_registry", verbosity=0)
    rows = Namespace.objects.bulk_create(
        Namespace(nid=f"bulk{i:05d}", kind="formal", registered_on=dt.date(2020, 1, 1)
                  + dt.timedelta(days=i % 2000), organisation=f"Organisation {i % 97}",
                  search_text=f"Names archive records of collection {i}.")
        for i in range(count)
    )
    TemplateVersion.objects.bulk_create(
        TemplateVersion(namespace=ns, number=1, date=dt.date(2024, 1, 1), nid=ns.nid,
                        purpose=ns.search_text, registrant_organisation=ns.organisation)
        for ns in rows[::10]
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # what autovacuum does for a live database
            cursor.execute("ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        populate(args.count)
        client = Client()
        print(f"{connection.vendor}, {args.count:,} extra namespaces, {args.repeat} runs each")
        print(f"{'page':32} {'median ms':>10} {'best ms':>9} {'queries':>8}")
        for label, url in PAGES:
            client.get(url)  # warm up
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(url)
                times.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, (url, response.status_code)
            print(f"{label:32} {statistics.median(times):10.1f} {min(times):9.1f} "
                  f"{len(queries):8d}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
