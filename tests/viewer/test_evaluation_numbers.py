"""The viewer's evaluation page shows every number issue 46 asks `compare` for, as `compare`
(text, --json, --html) does: ranks that share ties and the rule, scripted and control labels,
every pair's difference with its interval and Holm-adjusted p, the task-clustered standard
error, cost per solved task with its interval, the planner's minimum detectable difference,
and, for an evaluation run in rounds, why it stopped. (Partial credit and contamination flags
are shown on a real toolz task in tests/solver/test_partial_credit.py.)

Cells are recorded through the Store API as the run loop records them (tests/replay/cellkit);
the pages come from `benchtape view`'s real HTTP server, the CLI's from its real process."""

from __future__ import annotations

import html
import re
import sys
import urllib.request
from pathlib import Path

import orjson
import pytest
from e2e.cli import benchtape
from evalkit import evaluation, make_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from cellkit import record_cell, start_run  # noqa: E402

from benchtape.spec.cells import run_fields  # noqa: E402
from benchtape.spec.evaluation import Cell, load_evaluation  # noqa: E402
from benchtape.store.database import Store  # noqa: E402
from benchtape.view.serving import running  # noqa: E402
from benchtape.view.viewer import Viewer  # noqa: E402

pytestmark = pytest.mark.xdist_group("viewer")
TASKS = [f"t{i}" for i in range(1, 9)]
BENCH = "description: numbers\nharness: mock\nscenarios:\n" + "".join(f"  - {{name: {t}, prompt: 'fix {t}', testdata: calc, checks: [{{type: contains, value: fixed}}]}}\n" for t in TASKS)
SETUPS = "attempts: 2\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, opus-4.6, haiku-4.5, scripted], effort: medium}\n  - {tool: mock, model: noop}\n"
# per setup (by model), the tasks whose both attempts pass; plus one task passed in one attempt of two
PASSES = {"sonnet-4.6": (TASKS[:7], None), "opus-4.6": (TASKS[:4], "t5"), "haiku-4.5": (TASKS[:4], None), "scripted": (TASKS[:1], None), "noop": ((), None)}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("numbers")
    project = make_project(root / "proj", bench=BENCH)
    evaluation(project, "all", SETUPS)
    evaluation(project, "rounds", "attempts: 1\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, haiku-4.5], effort: medium}\n")
    db = project / ".benchtape" / "benchtape.db"
    store = Store(db)
    ev = load_evaluation("all", project, user=root / "user")
    run = start_run(store, ev)
    for arm in ev.arms:
        model = arm.steps[0].model
        both, once = PASSES[model]
        for task in ev.tasks():
            for n in (1, 2):
                passed = task.id in both or (task.id == once and n == 1)
                record_cell(store, run, ev, Cell(arm, task, n), "passed" if passed else "failed", cost=0.02 + 0.01 * n)
    rounds = load_evaluation("rounds", project, user=root / "user")
    fields = run_fields(rounds, argv=["benchtape", "run", "rounds", "--until-decided", "--max-cells", "8"])
    arms = {a.steps[0].model: a for a in rounds.arms}
    first = [t for t in rounds.tasks() if t.id in TASKS[:4]]
    fields["params"]["round"] = {"number": 1, "tasks": {a.key: [t.id for t in first] for a in rounds.arms}, "limits": {"max_cells": 8, "budget": None}}
    run_id = store.new_run(fields.pop("kind"), **fields)
    for task in first:
        record_cell(store, run_id, rounds, Cell(arms["sonnet-4.6"], task, 1), "passed", cost=0.02)
        record_cell(store, run_id, rounds, Cell(arms["haiku-4.5"], task, 1), "passed" if task.id == "t1" else "failed", cost=0.02)
    store.close()
    with running(Viewer(db, project)) as base:
        yield project, base


def _get(base: str, path: str) -> str:
    with urllib.request.urlopen(base + path, timeout=60) as r:
        assert r.status == 200
        return r.read().decode()


def _text(page: str) -> str:
    """The page's text as a reader sees it (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_evaluation_page_shows_every_number_compare_states(served):
    project, base = served
    doc = orjson.loads(benchtape("compare", "all", "--json", cwd=project).stdout)
    page = _get(base, "/evaluation/all")
    assert orjson.loads(_get(base, "/evaluation/all?format=json")) == doc  # the page's twin is compare --json
    text = _text(page)
    labels = {r["arm"]: r["label"] for r in doc["ranked"] + doc["controls"]}
    # ranks follow the test: haiku and opus (4 and 4.5 tasks of 8) cannot be told apart and share a rank; the rule is said
    ranks = {r["label"].split()[-1].split("/")[0]: r["rank"] for r in doc["ranked"]}
    assert ranks["haiku-4.5"] == ranks["opus-4.6"] and f"rank {ranks['opus-4.6']} is shared" in text and doc["rank_rule"] in text
    assert [r["rank"] for r in doc["ranked"]] == sorted(r["rank"] for r in doc["ranked"]) and f">{ranks['opus-4.6']}</td>" in page
    # a script is labelled as such, a control is listed apart (never ranked) with what it should show
    scripted = next(r for r in doc["ranked"] if r["kind"] == "scripted")
    assert f"{scripted['label']} [scripted]" in text and doc["headline"] in text
    assert [r["kind"] for r in doc["controls"]] == ["no-op"] and "Controls (they check the tasks; never ranked)" in text and "should pass none): holds" in text
    # every pair: the difference with its interval, the raw and the Holm-adjusted p
    assert len(doc["pairs"]) == 6 and "Holm-adjusted" in doc["correction"] and doc["correction"] in text
    for p in doc["pairs"]:
        row = f"{labels[p['a']]} {labels[p['b']]} {p['tasks']} {p['mean_difference']:+.0%} {p['ci'][0]:+.0%} to {p['ci'][1]:+.0%}"
        assert " ".join(row.split()) in " ".join(text.split()) and f"{p['p_adjusted']:.3g}" in text
    # the standard error clustered by task (two attempts each), the cost per solved task with its interval
    assert "<th>se</th>" in page and all(r["se"] is not None for r in doc["ranked"])
    ranking = re.search(r'<table class="compare">(.*?)</table>', page, re.S)[1]  # the first table: the ranking
    head = re.findall(r"<th>(.*?)</th>", ranking)
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", ranking)[1:]]
    for row, shown in zip(doc["ranked"], rows):
        assert shown[head.index("se")] == f"{row['se']:.1%}", (row["label"], shown)
    best = doc["ranked"][0]
    low, high = best["cost_per_solved_ci"]
    assert f"${best['cost_per_solved']:.4f} ({low:.4f}–{high:.4f})" in text
    # the planner's minimum detectable difference for this evaluation as it stands
    assert doc["plan"]["setups"] == 4 and f"detect a difference of {doc['plan']['mdd']:.0%}" in text and "Plan (80% power)" in text


def test_an_evaluation_run_in_rounds_says_why_it_stopped_on_every_surface(served, tmp_path):
    project, base = served
    doc = orjson.loads(benchtape("compare", "rounds", "--json", cwd=project).stdout)
    assert doc["stopped"].startswith("not decided: 1 neighbouring pair(s) undecided") and "its limit (--max-cells 8)" in doc["stopped"]
    assert len(doc["rounds"]) == 1 and doc["pairs"][0]["test"] == "e-value"
    said = f"stopped: {doc['stopped']}"
    assert said in _text(_get(base, "/evaluation/rounds"))
    assert said in benchtape("compare", "rounds", "--plain", cwd=project).stdout
    out = tmp_path / "rounds.html"
    assert benchtape("compare", "rounds", "--html", out, cwd=project).returncode == 0 and said in _text(out.read_text())
