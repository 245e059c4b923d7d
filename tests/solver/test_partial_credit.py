"""Partial credit from real per-test verdicts: compare's `partial` column is the share of a
task's FAIL_TO_PASS tests the stored verifier verdict says passed (issue 46's secondary column,
issue 43's per-test verdicts).

The task is toolz PR #203 ("get and getter with an empty index"), harvested from the real
history: two FAIL_TO_PASS tests (`test_get`, `test_getter`) and a reference fix of two hunks,
one per function. The scripted `solver` plays the whole fix; `solver-partial` plays its first
edit only, which fixes `get` and not `getter`: one test of two, a share strictly between 0 and
1. Three of the file's tests fail at the 2015 base and with the fix alike on this Python (a
generator's StopIteration is an error since 3.7): no task can be validated with them in, so
the verifier deselects them, as a user reviewing the harvested task would.
"""

from __future__ import annotations

import html
import json
import sqlite3
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import cli_env, clone_toolz  # noqa: E402

TEST_FILE = "toolz/tests/test_itertoolz.py"
BROKEN_HERE = ("test_nth", "test_partition_all", "test_sliding_window_of_short_iterator")  # fail at base and fixed alike on Python ≥ 3.7
F2P = ["toolz.tests.test_itertoolz::test_get", "toolz.tests.test_itertoolz::test_getter"]
EVALUATION = "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: all\ntools:\n  - tool: mock\n    model: [solver, solver-partial]\n"


def _json(done: Any) -> Any:
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = clone_toolz(tmp_path_factory.mktemp("partial") / "toolz")
    assert benchtape("task", "create", "203", cwd=repo).returncode == 0
    task_yaml = repo / ".benchtape" / "tasks" / "203" / "task.yaml"
    harvested = f'command: "python3 -m pytest -q {TEST_FILE}"'
    assert harvested in task_yaml.read_text()
    deselect = " ".join(f"--deselect {TEST_FILE}::{name}" for name in BROKEN_HERE)
    task_yaml.write_text(task_yaml.read_text().replace(harvested, f'command: "python3 -m pytest -q {TEST_FILE} {deselect}"'))
    report = _json(benchtape("task", "validate", "203", "--sandbox", "home", "--json", cwd=repo, env=cli_env(), timeout=900))["tasks"][0]
    assert report["validated"] and report["tests"]["fail_to_pass"] == F2P, report
    (repo / ".benchtape" / "evaluations").mkdir(parents=True, exist_ok=True)
    (repo / ".benchtape" / "evaluations" / "partial.yaml").write_text(EVALUATION)
    run = _json(benchtape("run", "partial", "--yes", "--json", cwd=repo, env=cli_env(), timeout=900))
    assert run["outcomes"] == {"mock@latest solver": {"passed": 1}, "mock@latest solver-partial": {"failed": 1}}, run["outcomes"]
    return repo


def _stored_shares(repo: Path) -> dict[str, float]:
    """model → the FAIL_TO_PASS share its task cell's verifier verdict stored, read from the store's file."""
    with sqlite3.connect(repo / ".benchtape" / "benchtape.db") as db:
        rows = db.execute("SELECT s.model, json_extract(v.evidence, '$.fail_to_pass_share') FROM verdicts v JOIN sessions s ON s.id = v.session_id WHERE json_extract(v.evidence, '$.fail_to_pass_share') IS NOT NULL").fetchall()
    return dict(rows)


def test_the_partial_column_is_the_stored_per_test_share(measured: Path):
    stored = _stored_shares(measured)
    assert stored == {"mock-solver": 1.0, "mock-solver-partial": 0.5}  # the verifier ran the two tests: get fixed, getter not
    doc = _json(benchtape("compare", "partial", "--json", cwd=measured))
    shares = {row["label"]: row["partial"] for row in doc["ranked"]}
    assert shares == {"mock@latest solver": stored["mock-solver"], "mock@latest solver-partial": stored["mock-solver-partial"]}
    assert 0 < shares["mock@latest solver-partial"] < 1
    partial_row = next(row for row in doc["ranked"] if row["label"].endswith("solver-partial"))
    assert partial_row["passes"] == 0 and partial_row["outcomes"] == {"failed": 1}  # partial credit is beside the verdict, never a pass


def test_every_surface_shows_the_share(measured: Path, tmp_path: Path):
    text = benchtape("compare", "partial", "--plain", cwd=measured)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    header = next(line for line in lines if line.startswith("rank"))
    at = header.index(" partial ") + 1  # the table is laid out in columns: read each row under the header's word
    shown = {line.split()[2]: line[at:].split()[0] for line in lines if line.startswith("1 ") and "mock@latest" in line}
    assert shown == {"solver": "100%", "solver-partial": "50%"}, text.stdout
    # the column says what it is: a broken PASS_TO_PASS test counts against the share (dateutil newcomer: the note said FAIL_TO_PASS alone)
    assert any(line.startswith("note: partial: the mean over a setup's cells of the FAIL_TO_PASS tests passed over the FAIL_TO_PASS tests plus the PASS_TO_PASS tests broken") for line in lines), text.stdout
    page = tmp_path / "partial.html"
    assert benchtape("compare", "partial", "--html", page, cwd=measured).returncode == 0
    html = page.read_text()
    assert "<th>partial</th>" in html and "<td>50%</td>" in html and "<td>100%</td>" in html


def test_the_viewer_shows_the_share(measured: Path):
    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    with running(Viewer(measured / ".benchtape" / "benchtape.db", measured)) as base:
        with urllib.request.urlopen(base + "/evaluation/partial", timeout=60) as r:
            page = r.read().decode()
    assert "<th>partial</th>" in page and "<td>50%</td>" in page and "<td>100%</td>" in page


def test_contamination_is_flagged_on_every_surface_with_where_the_cutoff_is_published(measured: Path, tmp_path: Path):
    """PR #203 was fixed in 2015: a setup whose model's published training cutoff is later may
    have seen it (said with the vendor's page); a model with no published cutoff is said so,
    never guessed; --after-cutoff is refused while one setup's cutoff is unknown."""
    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    (measured / ".benchtape" / "evaluations" / "dated.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: all\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: codex, model: gpt-5.4-mini, effort: medium}\n")
    doc = _json(benchtape("compare", "dated", "--json", cwd=measured))
    dated = doc["contamination"]
    sonnet = next(arm for arm in dated["cutoffs"] if dated["cutoffs"][arm] == "2026-01")
    mini = next(arm for arm in dated["cutoffs"] if arm != sonnet)
    assert dated["dates"]["203"] < "2026" and dated["may_have_been_seen"] == {sonnet: ["203"]} and dated["cutoffs"][mini] is None
    assert dated["cutoff_sources"] == {sonnet: "https://platform.claude.com/docs/en/about-claude/models/overview", mini: None}
    flag = "claude-code@latest sonnet-4.6/medium: 1 task(s) were fixed on or before its model's training cutoff (2026-01, as published at https://platform.claude.com/docs/en/about-claude/models/overview) and may have been seen: 203"
    unknown = "no published cutoff for codex@latest gpt-5.4-mini/medium"
    text = benchtape("compare", "dated", "--plain", cwd=measured).stdout
    page = tmp_path / "dated.html"
    assert benchtape("compare", "dated", "--html", page, cwd=measured).returncode == 0
    with running(Viewer(measured / ".benchtape" / "benchtape.db", measured)) as base:
        with urllib.request.urlopen(base + "/evaluation/dated", timeout=60) as r:
            viewed = r.read().decode()
    for shown in (" ".join(text.split()), html.unescape(page.read_text()), html.unescape(viewed)):
        assert flag in shown and unknown in shown
    refused = benchtape("compare", "dated", "--after-cutoff", cwd=measured)
    assert refused.returncode == 2 and "none is published for codex@latest gpt-5.4-mini/medium" in refused.stderr


def test_the_preview_never_says_the_solver_calls_no_tools(measured: Path):
    """The solver models play the task's own script: the mock's "no `mock:` script" note (true of
    a bench scenario run by the plain mock) is not said of them."""
    preview = _json(benchtape("run", "partial", "--dry-run", "--json", cwd=measured))
    assert preview["notes"] is not None and not [n for n in preview["notes"] if "calls no tools" in n], preview["notes"]
