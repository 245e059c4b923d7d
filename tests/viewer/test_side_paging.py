"""Two setups side by side over a task of many attempts is paged (issue 44, item 11): a task of
10,000 attempts drew every session of both setups in one page (10 s, 27 MB of HTML; 79 MB as
JSON). Cells recorded through the Store API as the run loop records them (tests/replay/cellkit)."""

from __future__ import annotations

import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from evalkit import evaluation, make_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from cellkit import record_cell, start_run  # noqa: E402

from benchtape.spec.evaluation import Cell, load_evaluation  # noqa: E402
from benchtape.store.database import Store  # noqa: E402
from benchtape.view.serving import running  # noqa: E402
from benchtape.view.viewer import Viewer  # noqa: E402

pytestmark = pytest.mark.xdist_group("viewer")
ATTEMPTS = 25
SIDE_PAGE = 10  # benchtape.view.page_evaluation.SIDE_PAGE


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("side")
    project = make_project(root / "proj")
    evaluation(project, "many", f"attempts: {ATTEMPTS}\ntools:\n  - {{tool: claude-code, model: [sonnet-4.6, sonnet-5], effort: medium}}\n")
    ev = load_evaluation("many", project, user=root / "user")
    db = project / ".benchtape" / "benchtape.db"
    store = Store(db)
    run = start_run(store, ev)
    task = ev.tasks()[0]
    for arm in ev.arms:
        for n in range(1, ATTEMPTS + 1):
            record_cell(store, run, ev, Cell(arm, task, n), "passed" if n % 2 else "failed", cost=0.01)
    store.close()
    with running(Viewer(db, project)) as base:
        yield base, task.id


def fetch(base: str, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(base + path, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_side_by_side_page_shows_a_page_of_attempts_and_links_the_next(many):
    base, task = many
    status, page = fetch(base, f"/evaluation/many/side?task={task}")
    assert status == 200
    assert page.count(b'class="attempt"') == 2 * SIDE_PAGE
    assert f"attempts 1–{SIDE_PAGE} of {ATTEMPTS} and {ATTEMPTS}".encode() in page
    nxt = re.search(rb'rel="next" href="([^"]+)"', page)[1].decode().replace("&amp;", "&")
    assert "from=11" in nxt and b'rel="prev"' not in page
    status, last = fetch(base, f"/evaluation/many/side?task={task}&from=21")
    assert status == 200 and last.count(b'class="attempt"') == 2 * (ATTEMPTS - 20)
    assert b"attempt 21:" in last and b"attempt 20:" not in last
    assert b'rel="prev"' in last and b'rel="next"' not in last


def test_its_json_twin_is_paged_the_same_and_says_how_many_there_are(many):
    base, task = many
    status, body = fetch(base, f"/evaluation/many/side?task={task}&from=11&format=json")
    assert status == 200
    doc = orjson.loads(body)
    for side in ("a", "b"):
        assert doc[side]["total"] == ATTEMPTS and doc[side]["first"] == 11
        assert [m["attempt"] for m in doc[side]["measurements"]] == list(range(11, 11 + SIDE_PAGE))


@pytest.mark.parametrize("value", ["0", "-3", "x", "99999999999999999999999"])
def test_a_from_out_of_range_is_a_400(many, value):
    base, task = many
    status, body = fetch(base, f"/evaluation/many/side?task={task}&from={value}")
    assert status == 400 and b"from" in body
