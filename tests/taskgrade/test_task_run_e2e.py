"""End to end through the real CLI on five validated toolz tasks: `benchtape run` records the
task cells of three setups (the mock agent, the no-op negative control, the oracle) and grades
each live through grade_session's task:verify; `compare` ranks the oracle first; `regrade`
(no bench) re-verifies every stored candidate to the same outcomes, `grade` reproduces them,
and `show --diff` of an oracle cell is the reference fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import cli_env, validated_toolz  # noqa: E402

from benchtape.sandbox.patches import changed_paths  # noqa: E402
from benchtape.spec.task import load_task, task_dirs  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

FIVE = ["603", "551", "534", "434", "398"]
EVALUATION = """\
apiVersion: benchtape/v1alpha1
kind: Evaluation
tasks: all
tools:
  - tool: mock
    model: [scripted, noop]
  - tool: oracle
    model: reference
"""
ORACLE, NOOP, MOCK = "oracle@latest reference", "mock@latest noop", "mock@latest scripted"


def _json(done: Any) -> Any:
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = validated_toolz(tmp_path_factory.mktemp("e2e") / "toolz", tuple(FIVE))
    (repo / ".benchtape" / "evaluations").mkdir(parents=True, exist_ok=True)
    (repo / ".benchtape" / "evaluations" / "tasks.yaml").write_text(EVALUATION)
    run = _json(benchtape("run", "tasks", "--yes", "--json", cwd=repo, env=cli_env(), timeout=900))
    return {"repo": repo, "db": repo / ".benchtape" / "benchtape.db", "run": run}


def test_live_grading_gives_each_setup_its_task_verdicts_and_compare_keeps_the_controls_apart(ran: dict[str, Any]):
    assert ran["run"]["outcomes"] == {ORACLE: {"passed": 5}, NOOP: {"no_changes": 5}, MOCK: {"no_changes": 5}}
    doc = _json(benchtape("compare", "tasks", "--json", cwd=ran["repo"]))
    # the oracle and the no-op check the tasks: controls, never ranked; the mock is a script
    controls = {r["label"]: r for r in doc["controls"]}
    assert controls[ORACLE]["kind"] == "oracle" and controls[ORACLE]["passes"] == 5 and controls[ORACLE]["rank"] is None
    assert controls[NOOP]["kind"] == "no-op" and controls[NOOP]["passes"] == 0
    assert [r["label"] for r in doc["ranked"]] == [MOCK] and doc["ranked"][0]["kind"] == "scripted" and doc["measured"] == "pipeline"
    for task_id, by_arm in doc["matrix"].items():
        assert task_id in FIVE
        assert sorted(c["outcome"] for cells in by_arm.values() for c in cells) == ["no_changes", "no_changes", "passed"]


def test_regrade_and_grade_reproduce_the_live_outcomes_from_the_stored_candidates(ran: dict[str, Any]):
    repo, db = ran["repo"], ran["db"]
    store = Store(db, readonly=True)
    live_outcomes = store.latest_outcomes([r.id for r in store.session_rows(run_id=ran["run"]["run_id"])])
    live = {sid: o["outcome"] for sid, o in live_outcomes.items()}
    graded_live = {o["grading_id"] for o in live_outcomes.values()}
    store.close()
    assert len(live) == 15
    def lines_per_cell() -> dict[str, Any]:  # controls (oracle, no-op) are listed apart from the ranked setups
        doc = _json(benchtape("compare", "tasks", "--json", cwd=repo))
        return {r["label"]: r["lines_per_cell"] for r in doc["ranked"] + doc["controls"]}

    lines_before = lines_per_cell()
    assert lines_before[ORACLE] and lines_before[ORACLE] > 0
    done = benchtape("regrade", "--run", ran["run"]["run_id"], cwd=repo, env=cli_env(), timeout=900)
    assert done.returncode == 0, done.stderr
    # the live run graded its cells in several gradings: the next step diffs each, not the first alone
    regraded = done.stdout.split()[-1]
    assert all(f"benchtape diff {g} {regraded}" in done.stdout + done.stderr for g in graded_live), (graded_live, done.stdout + done.stderr)
    store = Store(db, readonly=True)
    again = {sid: o["outcome"] for sid, o in store.latest_outcomes(list(live)).items()}
    assert again == live and len({o["grading_id"] for o in store.latest_outcomes(list(live)).values()}) == 1
    store.close()
    # the agent's change is the recording's: lines/cell reads the same after a regrade (issue 44: it became "—")
    assert lines_per_cell() == lines_before
    doc = _json(benchtape("grade", "--run", ran["run"]["run_id"], "--json", cwd=repo, env=cli_env(), timeout=900))
    assert doc["counts"]["REPRODUCED"] == 15 and doc["counts"]["DIVERGED"] == 0


def test_show_diff_of_an_oracle_cell_is_the_reference_fix(ran: dict[str, Any]):
    repo = ran["repo"]
    store = Store(ran["db"], readonly=True)
    rows = [r for r in store.session_rows(run_id=ran["run"]["run_id"]) if r.harness == "oracle" and r.scenario == "434"]
    store.close()
    done = benchtape("show", rows[0].id, "--diff", cwd=repo)
    assert done.returncode == 0, done.stderr
    task = load_task(task_dirs(repo)["434"])
    assert sorted(changed_paths(done.stdout.encode())) == sorted(changed_paths(task.reference()))


def test_a_task_edited_since_is_counted_stale_not_unlisted(ran: dict[str, Any]):
    """Issue 44: a stale task's cells were dropped as "the evaluation no longer lists"."""
    repo = ran["repo"]
    tests_patch = task_dirs(repo)["434"] / "tests.patch"
    original = tests_patch.read_bytes()
    tests_patch.write_bytes(original + b"\n")  # any byte of a bound input makes the task stale
    try:
        doc = _json(benchtape("compare", "tasks", "--json", cwd=repo))
        assert (doc["stale_measurements"], doc["retired_measurements"], doc["stale_tasks"]) == (3, 0, ["434"])  # 3 setups × 1 attempt of task 434
        text = " ".join(benchtape("compare", "tasks", cwd=repo).stdout.split())
        assert "3 stored measurement(s) of stale tasks (434) are not counted" in text and "benchtape task validate 434" in text and "no longer lists" not in text
    finally:
        tests_patch.write_bytes(original)


def test_sessions_and_compare_say_the_same_cost_for_the_same_cells(ran: dict[str, Any]):
    """Issue 44: `sessions` said "unknown" where `compare` said $0.0000 for the same cells (no model
    was called: the oracle, the no-op and the scripted mock spend nothing, and that is known)."""
    repo = ran["repo"]
    listed = _json(benchtape("sessions", "--run", ran["run"]["run_id"], "--limit", "0", "--json", cwd=repo))
    rows = listed["sessions"] if isinstance(listed, dict) else listed
    assert rows and {r["cost_usd"] for r in rows} == {0.0}
    doc = _json(benchtape("compare", "tasks", "--json", cwd=repo))
    assert {r["cost_per_cell"] for r in doc["ranked"] + doc["controls"]} == {0.0}
    text = benchtape("sessions", "--run", ran["run"]["run_id"], "--limit", "0", cwd=repo).stdout
    assert "unknown" not in text and "$0.0000" in text
    # and a session's own page (the viewer's, the side by side's, the HTML report's) says the same
    from benchtape.replay.html import Entry, session_section

    store = Store(ran["db"], readonly=True)
    try:  # a session whose tool reported no cost, of a model that is no model (a scripted Codex cell read "cost unknown" there)
        rows = [(row, store.load_session(row.id)) for row in store.session_rows(run_id=ran["run"]["run_id"])]
        row, session = next((r, s) for r, s in rows if s.metrics.cost_usd is None)
        html = session_section(Entry.of(store, row, session), "pass")
    finally:
        store.close()
    assert '<b>cost</b> $0.0000' in html, html[:2000]


def rows_of_434(ran: dict[str, Any]) -> list[Any]:
    store = Store(ran["db"], readonly=True)
    try:
        return [r for r in store.session_rows(run_id=ran["run"]["run_id"]) if r.scenario == "434"]
    finally:
        store.close()


def test_a_regrade_against_an_edited_task_measures_nothing_and_never_stands_for_the_cell(ran: dict[str, Any]):
    """A newcomer on boltons: task.yaml's verify command edited to name a test file that is not
    there, `regrade`, the edit undone. The regrade read "2 of 2 FAIL_TO_PASS did not pass; 5
    PASS_TO_PASS broke" for the oracle's own fix (the runner ran nothing), and `compare` ranked
    on it after the task was restored, with no stale measurement said. Now a verdict against a
    task changed since it was validated is not measured and says why, and compare counts each
    cell's grading made against the task as it is. Kept last: it adds a grading of 434's cells."""
    repo, run_id = ran["repo"], ran["run"]["run_id"]
    task_yaml = task_dirs(repo)["434"] / "task.yaml"
    original = task_yaml.read_text()
    assert "toolz/sandbox/tests/" in original
    task_yaml.write_text(original.replace("toolz/sandbox/tests/", "toolz/sandbox/nope/", 1))
    try:
        done = benchtape("regrade", "--run", run_id, "--scenario", "434", cwd=repo, env=cli_env(), timeout=900)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        # the summary says why the cells were not measured and what to run (markupsafe newcomer:
        # it printed "infrastructure_error 6" and nothing else)
        assert f"{len(rows_of_434(ran))} cell(s) not measured:" in done.stdout and "benchtape task validate 434" in done.stdout, done.stdout
        store = Store(ran["db"], readonly=True)
        rows = [r for r in store.session_rows(run_id=run_id) if r.scenario == "434"]
        latest = store.latest_outcomes([r.id for r in rows])
        store.close()
        assert {o["outcome"] for o in latest.values()} == {"infrastructure_error"}, latest
        assert all("task 434 changed since it was validated" in o["reason"] and "benchtape task validate 434" in o["reason"] for o in latest.values()), latest
    finally:
        task_yaml.write_text(original)
    doc = _json(benchtape("compare", "tasks", "--json", cwd=repo))
    controls = {r["label"]: r for r in doc["controls"]}
    assert controls[ORACLE]["passes"] == 5 and doc["stale_measurements"] == 0, (controls[ORACLE], doc["stale_measurements"])
    # and a run reads each cell as compare does: 434's cells are measured (by their grading
    # against the task as it is), reused, never run again at a cost
    preview = _json(benchtape("run", "tasks", "--dry-run", "--json", cwd=repo, env=cli_env()))
    assert preview["to_run"] == 0 and preview["measured"] == sum(sum(by.values()) for by in ran["run"]["outcomes"].values()) == 15, {k: preview.get(k) for k in ("to_run", "measured", "attempted")}
