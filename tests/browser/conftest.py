"""One JupyterLab server and one headless Chromium for all browser tests.

Chromium is Debian's (``/usr/bin/chromium``, or ``COURSE_CHROMIUM``), driven
through Playwright's Python API; Playwright's own browser download is not used.
Without it the tests skip, unless ``COURSE_REQUIRE_BROWSER=1`` (CI) makes that
a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.notebooks.harness import ROOT
from tests.system_deps import missing

from .jupyterlab_server import running_jupyterlab

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-extensions"]


def _missing(reason: str):
    missing(reason, "COURSE_REQUIRE_BROWSER")


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        _missing(f"headless Chromium not found at {CHROMIUM}: install Debian's `chromium` "
                 "package (`sudo apt-get install chromium`) or set COURSE_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: `.venv/bin/pip install -e '.[dev]'`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory):
    with running_jupyterlab(ROOT, tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@pytest.fixture
def lab_page(chromium, jupyterlab):
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
    jupyterlab.shutdown_kernels()


def offline_context(chromium, allowed, viewport=(1200, 900)):
    """A browser context in which every request ``allowed(url)`` refuses is aborted.
    Returns the context and the list that collects the refused URLs."""
    context = chromium.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    refused = []

    def route(request_route):
        if allowed(request_route.request.url):
            request_route.continue_()
        else:
            refused.append(request_route.request.url)
            request_route.abort()

    context.route("**/*", route)
    return context, refused
