"""The viewer's fixtures: real stores (tests/viewer/scenes.py), the viewer served from a thread
on a free port, and Debian's Chromium driven by Playwright (the system browser through
`executable_path`: nothing is downloaded). Without Chromium the browser tests skip, and in CI
(CI=true) they fail: `.ci/run` installs it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenes
from browserkit import CHROMIUM, CHROMIUM_ARGS


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


def _built_once(tmp_path_factory, name: str, build) -> scenes.Project:
    """A store every xdist worker of this run shares (built by the first to ask, under a lock):
    the stores are only read by the tests that use them."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"viewer-{name}"
    with open(root / f"viewer-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            (folder / ".built").write_text("")
    return scenes.Project(folder)


@pytest.fixture(scope="session")
def rich(tmp_path_factory) -> scenes.Project:
    return _built_once(tmp_path_factory, "rich", scenes.rich)


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory) -> scenes.Project:
    return _built_once(tmp_path_factory, "evaluation", scenes.evaluation)
