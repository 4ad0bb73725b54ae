"""Headless Chromium through Playwright against pytest-django's live server."""

import os
import shutil

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.skip(f"needs Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls are synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        yield from _launch(sync_playwright)
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


def _launch(sync_playwright):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser, live_server):
    contexts = []

    def make():
        context = browser.new_context(base_url=live_server.url,
                                      viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
