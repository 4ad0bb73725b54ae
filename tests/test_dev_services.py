"""`python3 dev.py start --services` (devtools/services.py): the production-like stack's
plan (its own ports, gunicorn as production runs it, a worker and beat, mail to a local
sink), the demo seeded with its mail kept local whatever the broker, and the SMTP sink
writing each mail."""

import importlib.util
import smtplib
import sys
import threading
from email.message import EmailMessage
from pathlib import Path

import pytest

from devtools import services
from devtools.base import seeding_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dev():
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dev"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["dev"]


def test_the_plan_runs_each_part_on_its_own_port():
    plan = services.service_plan("127.0.0.1:8341", root=False, nginx=None)
    assert plan.ports == {"postgresql": 8342, "broker": 8343, "cache": 8344, "smtp": 8345}
    assert len({*plan.ports.values(), 8341}) == 5
    names = [process.name for process in plan.processes]
    assert names == ["postgresql", "broker", "cache", "web", "worker", "beat"]
    by_name = {process.name: process for process in plan.processes}
    assert by_name["web"].argv[-3:] == ["gunicorn", "-c", "gunicorn.conf.py"]
    assert by_name["worker"].argv[3:6] == ["-A", "registry.celery", "worker"]
    assert "beat" in by_name["beat"].argv
    assert str(plan.ports["postgresql"]) in by_name["postgresql"].argv
    assert by_name["cache"].argv[-1] == "allkeys-lru"  # the cache evicts, the broker never
    assert by_name["broker"].argv[-1] == "noeviction"
    env = plan.env
    assert env["DATABASE_URL"].endswith(f":{plan.ports['postgresql']}/urn_registry")
    assert env["CELERY_BROKER_URL"] == env["REDIS_URL"] != env["CACHE_URL"]
    assert (env["EMAIL_HOST"], env["EMAIL_PORT"]) == ("127.0.0.1", str(plan.ports["smtp"]))
    assert env["EMAIL_BACKEND"].endswith("smtp.EmailBackend")
    assert env["BIND"] == "127.0.0.1:8341" and env["SITE_URL"] == "http://127.0.0.1:8341"
    assert "CELERY_TASK_ALWAYS_EAGER" not in env  # the worker does the work, as in production


def test_as_root_postgresql_runs_as_its_own_user_outside_the_checkout():
    plan = services.service_plan("127.0.0.1:8341", root=True, nginx=None)
    assert plan.postgres_user == "postgres"
    assert not plan.postgres_data.is_relative_to(ROOT)
    assert plan.processes[0].user == "postgres"


def test_the_demo_is_seeded_with_its_mail_kept_local_whatever_the_broker():
    from registry.review.management.commands import seed_demo

    env = seeding_env(services.service_plan("127.0.0.1:8341", root=False, nginx=None).env)
    assert env["CELERY_TASK_ALWAYS_EAGER"] == "true"
    assert env["EMAIL_BACKEND"] in seed_demo.LOCAL_MAIL_BACKENDS
    # What seed_demo checks, under those settings: no refusal.
    from django.test import override_settings

    with override_settings(CELERY_TASK_ALWAYS_EAGER=True, EMAIL_BACKEND=env["EMAIL_BACKEND"]):
        assert seed_demo.refusal() is None


def test_nginx_when_installed_answers_in_front_with_the_deploy_snippet():
    plan = services.service_plan("127.0.0.1:8341", root=False, nginx="/usr/sbin/nginx")
    assert plan.ports["gunicorn"] == 8346 and plan.env["BIND"] == "127.0.0.1:8346"
    assert plan.processes[-1].name == "nginx" and plan.processes[-1].argv[0] == "/usr/sbin/nginx"
    assert plan.env["EXPORT_ACCEL_REDIRECT"] == "/_exports/"
    assert plan.env["TRUSTED_PROXIES"] == "127.0.0.1"
    config = services.nginx_config(8346, "127.0.0.1:8341", Path("/x/exports"), root=False)
    snippet = (ROOT / "deploy" / "nginx-registry.conf").read_text()
    assert "listen 127.0.0.1:8341;" in config and "proxy_pass http://127.0.0.1:8346;" in config
    assert "alias /x/exports/;" in config and "X-Forwarded-Proto $scheme;" in config
    # Everything else of the production snippet, as it is.
    for line in snippet.splitlines():
        if not any(value in line for value in ("urn_registry;", "/var/lib/urn-registry",
                                                "X-Forwarded-Proto")):
            assert line in config
    assert "user root;" in services.nginx_config(8346, "127.0.0.1:8341", Path("/x"), root=True)


@pytest.mark.parametrize("argv", [["--services", "8341", "extra"], ["--other"]])
def test_start_refuses_arguments_it_does_not_know(dev, argv, monkeypatch):
    monkeypatch.setattr(dev, "ensure_venv", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(SystemExit, match="usage"):
        dev.start(argv)


def test_the_smtp_sink_writes_each_mail_to_a_file(tmp_path):
    sink = services.SMTPSink(0, tmp_path)
    port = sink.server_address[1]
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    try:
        for n in range(2):
            message = EmailMessage()
            message["From"], message["To"] = "urn@example.org", "registrant@example.org"
            message["Subject"] = f"Mail {n}"
            message.set_content(".a line starting with a dot\nand another\n")
            with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
                client.send_message(message)
    finally:
        sink.shutdown()
        sink.server_close()
    files = sorted(tmp_path.glob("*.eml"))
    assert len(files) == 2
    text = files[1].read_text()
    assert "X-Envelope-To: <registrant@example.org>" in text and "Subject: Mail 1" in text
    assert "\n.a line starting with a dot" in text.replace("\r\n", "\n")
