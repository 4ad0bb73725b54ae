"""Take the documentation's screenshots from a running demo, so they show what the app shows.

    .venv/bin/python docs/screenshots.py [--port 8170] [--only NAME]

It builds the demo as ``python3 dev.py start`` does (migrate, IANA's registry, the real
templates, the demo accounts), but seeds with ``seed_demo --with-history``, which also
registers the demo namespace ``exarchive`` with two versions; all in a throwaway SQLite
database. It serves it with ``runserver`` on 127.0.0.1:PORT, signs in as each persona
with the demo password and writes docs/screenshots/<name>.png with headless Chromium
(Debian's ``/usr/bin/chromium``, or ``CHROMIUM``). Nothing is kept but the pictures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
PYTHON = sys.executable
PASSWORD = "demo-registry-8141"  # noqa: S105 - the demo's published password
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@dataclass(frozen=True)
class Shot:
    name: str
    path: str
    persona: str | None = None  # the demo account's local part, None for a visitor
    act: Callable | None = field(default=None, compare=False)  # page -> None, before the shot
    full_page: bool = False


def _type_nid(value: str) -> Callable:
    def act(page) -> None:
        page.fill("input[name=proposed_nid]", value)
        page.wait_for_timeout(900)  # the live check answers after a short pause
    return act


def _paste_template(page) -> None:
    text = ROOT / "tests" / "templates_text" / "samples" / "isbn-rfc3187.txt"
    box = page.locator("textarea[name=template_text]")
    if not box.is_visible():  # the import panel is folded until opened
        page.locator("details:has(textarea[name=template_text]) > summary").click()
    box.fill(text.read_text())
    page.click("button[name=import_template]")
    page.wait_for_load_state()


SHOTS = [
    Shot("registry", "/"),
    Shot("search", "/search/?q=isbn"),
    Shot("diff", "/namespaces/exarchive/diff/?a=1&b=2"),
    Shot("checker", "/check/?urn=urn:ISBN:0-395-36341-1"),
    Shot("dashboard", "/requests/dashboard/", persona="expert"),
    Shot("nid-check", "/requests/new/", persona="registrant", act=_type_nid("X-foo")),
    Shot("nid-warnings-form", "/requests/new/", persona="registrant", act=_type_nid("isbn-x")),
    Shot("nid-warnings-dashboard", "/requests/dashboard/", persona="expert"),
    Shot("template-import", "/requests/new/", persona="registrant", act=_paste_template),
    Shot("stats", "/stats/"),
    Shot("profile", "/namespaces/oid/#profile"),
    Shot("quarantine", "/requests/iana/mail/", persona="staff"),
    Shot("availability", "/requests/availability/", persona="expert"),
]


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True)  # noqa: S603


def build_demo(env: dict[str, str]) -> None:
    manage("migrate", "--noinput", "-v", "0", env=env)
    manage("import_registry", env=env)
    templates = ROOT.parent / "shared" / "data" / "templates"
    if templates.is_dir():
        manage("import_templates", str(templates), env=env)
    manage("seed_demo", "--with-history", env=env)


def wait_until_up(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "healthz", timeout=2):  # noqa: S310 - loopback
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the demo server did not answer at {url}")


def sign_in(context, base: str, persona: str) -> None:
    page = context.new_page()
    page.goto(base + "accounts/login/")
    page.fill("input[name=login]", f"{persona}@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_load_state()
    page.close()


def take(shots: list[Shot], base: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        contexts: dict[str | None, object] = {}
        for shot in shots:
            if shot.persona not in contexts:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                if shot.persona:
                    sign_in(context, base, shot.persona)
                contexts[shot.persona] = context
            page = contexts[shot.persona].new_page()  # type: ignore[attr-defined]
            page.goto(base + shot.path.lstrip("/"))
            if shot.act:
                shot.act(page)
            page.screenshot(path=str(OUT / f"{shot.name}.png"), full_page=shot.full_page)
            who = shot.persona or "visitor"
            print(f"docs/screenshots/{shot.name}.png  <- {shot.path} as {who}")
            page.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8170)
    parser.add_argument("--only", action="append", help="a shot's name (repeatable)")
    options = parser.parse_args()
    shots = [s for s in SHOTS if not options.only or s.name in options.only]
    with tempfile.TemporaryDirectory() as tmp:
        address = f"127.0.0.1:{options.port}"
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp}/demo.sqlite3",
               "SITE_URL": f"http://{address}", "LOG_LEVEL": "ERROR"}
        for name in ("CELERY_BROKER_URL", "REDIS_URL", "REGISTRY_ENV", "EMAIL_BACKEND"):
            env.pop(name, None)
        build_demo(env)
        server = subprocess.Popen(  # noqa: S603 - our own manage.py
            [PYTHON, "manage.py", "runserver", "--noreload", address], cwd=ROOT, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://{address}/"
            wait_until_up(base)
            take(shots, base)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
