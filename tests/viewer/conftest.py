"""The viewer's fixtures: real stores (tests/viewer/scenes.py), the viewer served from a thread
on a free port, and Debian's Chromium driven by Playwright (the system browser through
`executable_path`: nothing is downloaded). Without Chromium the browser tests skip, and in CI
(CI=true) they fail: `.ci/run` installs it.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenes  # noqa: E402

CHROMIUM = os.environ.get("BENCHTAPE_CHROMIUM") or next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "") if p and os.access(p, os.X_OK)), None)
# Playwright passes most of these already; stated here so the browser stays quiet and offline:
# its own resolver answers every name but the loopback literal with "not found", so not even
# a DNS query leaves the machine (the viewer's URLs use 127.0.0.1).
CHROMIUM_ARGS = [
    "--no-sandbox",  # as root Chromium refuses its sandbox
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the viewer's browser tests need Chromium in CI: {reason} (apt-get install -y chromium)")
    pytest.skip(f"no browser for the viewer's tests: {reason} (apt-get install -y chromium)")


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        _unavailable("chromium is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, chromium_sandbox=False)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context; any dialog (an alert a planted script raised) is recorded and fails the test."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(8000)
    dialogs: list[str] = []
    errors: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    ctx.close()
    assert not dialogs, f"a page raised a dialog: {dialogs}"
    assert not errors, f"a page's script failed: {errors}"


@pytest.fixture(scope="session")
def shots(tmp_path_factory) -> Path:
    """Where each browser test leaves a screenshot of the page it checked ($BENCHTAPE_SCREENSHOTS to keep them)."""
    folder = Path(os.environ["BENCHTAPE_SCREENSHOTS"]) if os.environ.get("BENCHTAPE_SCREENSHOTS") else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def serving(project: scenes.Project) -> Iterator[str]:
    """The viewer over the project's store (from the project folder, as `benchtape view` run there): its base URL."""
    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    with running(Viewer(project.db, project.root)) as base:
        yield base


@pytest.fixture(scope="session")
def rich(tmp_path_factory) -> scenes.Project:
    return scenes.rich(tmp_path_factory.mktemp("rich"))


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory) -> scenes.Project:
    return scenes.evaluation(tmp_path_factory.mktemp("evaluation"))
