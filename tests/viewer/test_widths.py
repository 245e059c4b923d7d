"""Two papercuts of issue 44, measured in Debian's Chromium at 1400 px: an evaluation's ranking
of five long setup names and their outcomes ran ~500 px past the window (the whole page
scrolled sideways), and a grading with a long bench path and note wrapped the dates of the
gradings page onto three lines. Cells recorded through the Store API as the run loop records
them (tests/replay/cellkit); the gradings as a regrade writes them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from evalkit import evaluation, make_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from cellkit import record_cell, start_run  # noqa: E402

from benchtape.core.results import Result  # noqa: E402
from benchtape.spec.evaluation import Cell, load_evaluation  # noqa: E402
from benchtape.store.database import Store  # noqa: E402
from benchtape.view.serving import running  # noqa: E402
from benchtape.view.viewer import Viewer  # noqa: E402

pytestmark = pytest.mark.xdist_group("viewer")
WIDTH = 1400
OUTCOMES = ["passed", "failed", "timeout", "no_changes", "infrastructure_error", "passed"]
LONG_BENCH = "/home/someone/work/projects/benchmarks/evaluations/the-long-suite/benches/refactoring-bench-v2.yaml"
LONG_NOTE = "task cells re-verified with each task as it is now (tests.patch repaired after the upstream fix to the flaky integration test)"


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    root = tmp_path_factory.mktemp("wide")
    project = make_project(root / "proj")
    evaluation(project, "wide", "attempts: 3\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, sonnet-5], effort: [medium, high]}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n")
    ev = load_evaluation("wide", project, user=root / "user")
    db = project / ".benchtape" / "benchtape.db"
    store = Store(db)
    run = start_run(store, ev)
    n = 0
    for task in ev.tasks():
        for arm in ev.arms:
            for attempt in range(1, 4):
                n += 1
                sid = record_cell(store, run, ev, Cell(arm, task, attempt), OUTCOMES[n % len(OUTCOMES)], cost=0.0123 * (n % 4) if n % 5 else None)
    for _ in range(2):
        grading = store.new_grading("regrade", checkset_sha256="ab" * 32, catalog_version="1", bench_path=LONG_BENCH, note=LONG_NOTE)
        store.add_verdicts(grading, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "0" * 64, "result": Result.of(True, "ok")}])
    store.close()
    with running(Viewer(db, project)) as base:
        yield base


@pytest.fixture
def wide_page(browser):
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(8000)
    yield pg
    ctx.close()


def test_an_evaluation_with_long_setup_names_fits_a_1400_px_window(wide, wide_page, shots):
    wide_page.goto(wide + "/evaluation/wide")
    wide_page.screenshot(path=shots / f"evaluation-{WIDTH}.png", full_page=True)
    page_width, window = wide_page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert page_width <= window, f"the page is {page_width} px wide in a {window} px window"
    tables = wide_page.evaluate("() => Array.from(document.querySelectorAll('table.compare')).map(t => [t.className, t.scrollWidth, t.clientWidth])")
    assert tables and all(scroll <= client + 1 for _, scroll, client in tables), tables  # nothing hidden to scroll to either


def test_the_gradings_page_keeps_each_date_on_one_line(wide, wide_page, shots):
    wide_page.goto(wide + "/gradings")
    wide_page.screenshot(path=shots / f"gradings-{WIDTH}.png", full_page=True)
    lines = wide_page.evaluate(
        """() => Array.from(document.querySelectorAll('table.gradings tr')).slice(1).map(tr => {
            const r = document.createRange(); r.selectNodeContents(tr.children[4]);
            return [tr.children[4].textContent, r.getClientRects().length];
        })"""
    )
    assert lines and all(n == 1 for _, n in lines), f"dates over several lines: {lines}"
