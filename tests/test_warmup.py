"""registry/warmup.py: what gunicorn's master fills before it forks its workers."""

import runpy

from django.conf import settings
from django.template import engines

from registry.warmup import warm


def test_every_template_is_compiled_without_touching_the_database():
    compiled = warm()  # no db fixture: any database access here would fail the test
    on_disk = {p.relative_to(settings.BASE_DIR / "templates").as_posix()
               for p in (settings.BASE_DIR / "templates").rglob("*.html")}
    assert set(compiled) == on_disk
    assert {"base.html", "namespaces/registry.html", "namespaces/detail.html"} <= on_disk


def test_gunicorn_warms_the_master_before_it_forks():
    config = runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))
    assert config["preload_app"] is True
    logged = []

    class Server:
        class log:  # noqa: N801 - gunicorn's arbiter has a ``log`` attribute
            info = staticmethod(lambda message, *args: logged.append(message % args))

    config["when_ready"](Server())
    count = len(list((settings.BASE_DIR / "templates").rglob("*.html")))
    assert logged == [f"warmed {count} templates"]
    assert engines["django"].get_template("base.html")
