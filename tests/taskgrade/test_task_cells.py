"""Grading a task cell from the store alone, on the real toolz history: `grade_session` gives
every task cell one `task:verify` verdict (its candidate patch, derived from the stored
snapshots and kept as a blob, through the task's hidden verifier as the task is NOW), and the
cell outcome, the scenario rule, `show --diff`, `regrade`, `grade` and `diff` all agree with it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import cli_env, clone_toolz  # noqa: E402
from taskgradekit import git_apply, grade_live, record_task_cell, task_verdict  # noqa: E402

from benchtape.replay.grading import TASK_VERIFY, scenario_status  # noqa: E402
from benchtape.replay.outcomes import decide  # noqa: E402
from benchtape.sandbox.patches import changed_paths  # noqa: E402
from benchtape.sandbox.task_workspace import fresh_workspace  # noqa: E402
from benchtape.spec.project import load_project  # noqa: E402
from benchtape.spec.task import load_task, task_dirs  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

TASK = "434"  # 1 failing test at the base, 1 passing with the reference (shared README)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("taskgrade")
    repo = clone_toolz(top / "toolz")
    done = benchtape("task", "create", TASK, cwd=repo)
    assert done.returncode == 0, done.stderr
    os.environ["PATH"] = cli_env()["PATH"]  # the verifier's `python3 -m pytest` is this interpreter's
    task = load_task(task_dirs(repo)[TASK])
    return {"top": top, "repo": repo, "task": task, "recipe": load_project(repo).task_recipe(task.source.base_commit)}


def _workspace(made: dict[str, Any], tmp: Path, name: str = "ws") -> Path:
    return fresh_workspace(made["repo"], made["task"].source.base_commit, tmp / name)


def _wrong(ws: Path, task: Any) -> None:
    target = ws / changed_paths(task.reference())[0]
    target.write_text(target.read_text() + "# not the fix\n")


def _drifted(ws: Path) -> None:
    """The agent's edit of a file its workspace had and the base tree has not (a workspace that
    drifted from the base): the candidate cannot apply in the verifier's fresh export."""
    (ws / "NOTES.txt").write_text("mine\nnow\n")


CASES = {
    "correct": ("passed", "PASS"),
    "noop": ("no_changes", "FAIL"),
    "protected": ("guard_violation", "FAIL"),
    "drifted": ("patch_apply_failed", "FAIL"),
    "wrong": ("failed", "FAIL"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_candidate_gets_its_pipeline_verdict_and_the_outcome_agrees(made: dict[str, Any], tmp_path: Path, case: str):
    task = made["task"]
    store = Store(tmp_path / "s.db")
    ws = _workspace(made, tmp_path)
    if case == "drifted":
        (ws / "NOTES.txt").write_text("mine\n")  # there when the agent started (the baseline), not in the base tree
    change = {"correct": git_apply(task.reference()), "noop": None, "protected": git_apply(task.tests_patch()), "drifted": _drifted, "wrong": lambda w: _wrong(w, task)}[case]
    sid = record_task_cell(store, task, ws, change, recipe=made["recipe"])
    gid, row = grade_live(store, sid)
    outcome, status = CASES[case]
    ev = row["evidence"]
    assert (ev["outcome"], row["status"]) == (outcome, status), row["reason"]
    assert row["type"] == TASK_VERIFY and ev["task"]["id"] == TASK and ev["fingerprint"] == task.fingerprint(made["recipe"])
    # the candidate is a blob of the store, and it is exactly what the agent changed (its fresh .git/ left out)
    blob = store.get_blob(ev["candidate"]["sha256"])
    assert blob is not None and hashlib.sha256(blob).hexdigest() == ev["candidate"]["sha256"] and b".git/" not in blob
    assert (blob == b"") == (case == "noop")
    if case == "correct":
        assert ev["runner"] == "pytest" and ev["passed"] >= 1 and ev["failed"] == 0 and "$ python3 -m pytest" in ev["log"]
    if case == "wrong":
        assert ev["failed"] >= 1 and row["score"] == 0
    if case == "protected":
        assert ev["guarded"] == changed_paths(task.tests_patch())
    # the cell outcome and the scenario rule say the same as the verdict
    session = store.load_session(sid)
    from benchtape.replay.grading import GradingContext, StoredSnapshot, grade_session

    verdicts = grade_session(session, [], StoredSnapshot(store, session), GradingContext())
    assert decide(session, verdicts, None).outcome == outcome
    assert scenario_status(verdicts, session) == ("pass" if outcome == "passed" else "fail")


def test_show_diff_prints_the_stored_candidate(made: dict[str, Any], tmp_path: Path):
    task = made["task"]
    store = Store(tmp_path / "s.db")
    ws = _workspace(made, tmp_path)

    def fix_and_commit(w: Path) -> None:  # the agent committed: its fresh repository changed too, never part of the candidate
        git_apply(task.reference())(w)
        subprocess.run(["git", "-C", str(w), "commit", "-qam", "the agent committed"], check=True, env={**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"})

    sid = record_task_cell(store, task, ws, fix_and_commit, recipe=made["recipe"])
    _, row = grade_live(store, sid)
    assert row["status"] == "PASS", row["reason"]
    done = benchtape("show", sid, "--diff", "--db", tmp_path / "s.db")
    assert done.returncode == 0, done.stderr
    assert hashlib.sha256(done.stdout.encode()).hexdigest() == row["evidence"]["candidate"]["sha256"]
    assert sorted(changed_paths(done.stdout.encode())) == sorted(changed_paths(task.reference())) and ".git/" not in done.stdout
    # and it is the patch the verifier applies: onto the base tree, the reference's result
    base = fresh_workspace(made["repo"], task.source.base_commit, tmp_path / "base")
    subprocess.run(["git", "apply", "-"], input=done.stdout.encode(), cwd=base, check=True)
    target = changed_paths(task.reference())[0]
    assert (base / target).read_bytes() == (ws / target).read_bytes()


def test_regrade_after_a_repaired_tests_patch_flips_the_verdict_with_no_new_session(made: dict[str, Any], tmp_path: Path):
    """Record once, grade many: the same stored candidate, the task's tests.patch broken then
    repaired, each `regrade` (no bench: the task cells) re-verifies; `diff` names the task's
    two versions; `grade` reproduces the latest grading."""
    task = made["task"]
    db = tmp_path / "s.db"
    store = Store(db)
    sid = record_task_cell(store, task, _workspace(made, tmp_path), git_apply(task.reference()), recipe=made["recipe"])
    live, row = grade_live(store, sid)
    assert row["status"] == "PASS"
    sessions = len(list(store.session_rows()))
    tests = task.verify.tests_patch
    assert tests is not None
    good = tests.read_bytes()

    def regrade() -> str:
        done = benchtape("regrade", "--db", db, "--all", env=cli_env(), timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.strip().splitlines()[-1]

    try:
        tests.write_bytes(good.replace(b"\n@@", b"\n@@ broken", 1))  # a tests.patch that no longer applies
        broken = regrade()
    finally:
        tests.write_bytes(good)
    repaired = regrade()
    store = Store(db)
    assert len(list(store.session_rows())) == sessions  # no agent ran
    verdicts = {g: task_verdict(store, g, sid) for g in (live, broken, repaired)}
    assert [verdicts[g]["evidence"]["outcome"] for g in (live, broken, repaired)] == ["passed", "patch_apply_failed", "passed"]
    assert verdicts[broken]["evidence"]["fingerprint"] != verdicts[live]["evidence"]["fingerprint"] == verdicts[repaired]["evidence"]["fingerprint"]
    assert len({v["evidence"]["candidate"]["sha256"] for v in verdicts.values()}) == 1  # one stored candidate, graded three times
    outcomes = {o["grading_id"]: o["outcome"] for o in store.outcomes([sid])[sid]}
    assert (outcomes[broken], outcomes[repaired]) == ("patch_apply_failed", "passed")
    # diff says the verdict flipped because the task changed, naming both fingerprints
    d = json.loads(benchtape("diff", live, broken, "--json", "--db", db).stdout)
    (version,) = d["task_versions"]
    assert version["task"] == TASK and version["sessions"] == [sid]
    assert (version["fingerprint_a"], version["fingerprint_b"]) == (verdicts[live]["evidence"]["fingerprint"], verdicts[broken]["evidence"]["fingerprint"])
    assert [f["label"] for f in d["flips"]] == ["PASS→FAIL"]
    text = benchtape("diff", live, broken, "--db", db).stdout
    assert f"task {TASK} changed" in text and "(task changed)" in text
    assert "task:verify task:verify" not in text and " task:verify: PASS→FAIL" in text  # named once (issue 44)
    # the positive control reproduces the repaired grading from the stored candidate
    done = benchtape("grade", "--session", sid, "--grading", repaired, "--json", "--db", db, env=cli_env(), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert doc["counts"]["REPRODUCED"] == 1 and doc["counts"]["DIVERGED"] == 0


def test_a_task_folder_gone_is_an_infrastructure_error_never_a_pass(made: dict[str, Any], tmp_path: Path):
    import shutil

    task = made["task"]
    copy = tmp_path / "project"
    shutil.copytree(made["repo"], copy, symlinks=True)
    moved = load_task(copy / ".benchtape" / "tasks" / TASK)
    store = Store(tmp_path / "s.db")
    sid = record_task_cell(store, moved, _workspace(made, tmp_path), git_apply(task.reference()))
    shutil.rmtree(moved.dir)
    _, row = grade_live(store, sid)
    assert row["status"] == "ERROR" and row["evidence"]["outcome"] == "infrastructure_error" and "could not be loaded" in row["reason"]
    session = store.load_session(sid)
    from benchtape.replay.grading import GradingContext, StoredSnapshot, grade_session

    verdicts = grade_session(session, [], StoredSnapshot(store, session), GradingContext())
    assert decide(session, verdicts, None).outcome == "infrastructure_error" and scenario_status(verdicts, session) == "error"


def test_a_check_list_alongside_the_task_verdict_counts_too(made: dict[str, Any], tmp_path: Path):
    """A task cell may carry bench checks besides its verifier: the task's verdict comes last,
    and the outcome and the scenario rule fail the cell when a check fails though the hidden
    tests pass (and a stored task:verify spec never reaches the check catalog)."""
    from benchtape.core.results import CheckSpec
    from benchtape.replay.grading import GradingContext, StoredSnapshot, build_checks, grade_session

    task = made["task"]
    store = Store(tmp_path / "s.db")
    sid = record_task_cell(store, task, _workspace(made, tmp_path), git_apply(task.reference()), recipe=made["recipe"])
    session = store.load_session(sid)
    for value, outcome, status in (("Edit", "failed", "fail"), (None, "passed", "pass")):
        checks = build_checks([CheckSpec(type="session:tool-used", value=value)]) if value else []
        verdicts = grade_session(session, checks, StoredSnapshot(store, session), GradingContext())
        assert [v.check_path for v in verdicts] == [*(["checks[0]"] if value else []), TASK_VERIFY]
        assert verdicts[-1].result.evidence["outcome"] == "passed"
        assert decide(session, verdicts, None).outcome == outcome and scenario_status(verdicts, session) == status


def test_a_read_only_store_grades_a_task_cell_without_writing(made: dict[str, Any], tmp_path: Path):
    from benchtape.replay.grading import GradingContext, StoredSnapshot, grade_session

    task = made["task"]
    store = Store(tmp_path / "s.db")
    sid = record_task_cell(store, task, _workspace(made, tmp_path), git_apply(task.reference()), recipe=made["recipe"])
    store.close()
    readonly = Store(tmp_path / "s.db", readonly=True)
    session = readonly.load_session(sid)
    (verdict,) = grade_session(session, [], StoredSnapshot(readonly, session), GradingContext())
    assert verdict.result.status == "PASS" and readonly.get_blob(verdict.result.evidence["candidate"]["sha256"]) is None


def test_a_container_session_of_a_project_without_an_image_is_verified_where_it_was_validated(made: dict[str, Any], tmp_path: Path):
    """No Dockerfile.benchtape and no wheelhouse: benchtape's base image has no pytest, so a
    container session is verified at level home (as `task validate --sandbox auto` would
    validate it), and the verdict says so, rather than failing every candidate."""
    task = made["task"]
    store = Store(tmp_path / "s.db")
    sid = record_task_cell(store, task, _workspace(made, tmp_path), git_apply(task.reference()), recipe=made["recipe"], sandbox="container")
    _, row = grade_live(store, sid)
    ev = row["evidence"]
    assert (ev["outcome"], ev["level"], ev["where"]) == ("passed", "home", "home"), row["reason"]
    assert any("no image to verify in" in n for n in ev["notes"])
