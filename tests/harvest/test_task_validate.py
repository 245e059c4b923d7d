"""`task validate` on real PRs at level home (pytest on this host): the hand-checked valid PRs
validate with the README's counts, 592 is `base_already_passes`, 476 `gold_still_fails`; each
phase is a session in the store; an edited task is stale; `doctor` reports it all by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.cli import benchtape
from harvestkit import FIVE, VALID, cli_env, validated_toolz, validation_report

from benchtape.spec.project import load_project
from benchtape.spec.task import load_task
from benchtape.store.database import Store

NOT_VALID = ("592", "476")
CREATED = [*FIVE, *NOT_VALID]


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The five valid PRs as the suite validated them once (harvestkit.validated_toolz: the same
    `task validate --sandbox home --json`, which four more modules build on; validating them
    again here was ~40 s of CPU for the same result), then 592 and 476 created and validated
    in a run of their own."""
    repo = validated_toolz(tmp_path_factory.mktemp("validate") / "toolz", FIVE)
    made = benchtape("task", "create", *NOT_VALID, cwd=repo)
    assert made.returncode == 0, made.stderr
    done = benchtape("task", "validate", *NOT_VALID, "--sandbox", "home", "--json", cwd=repo, env=cli_env(), timeout=900)
    assert done.returncode == 1, done.stderr  # 592 and 476 are no tasks
    docs = [validation_report(FIVE), json.loads(done.stdout)]
    return {"repo": repo, "docs": docs, "tasks": [t for doc in docs for t in doc["tasks"]]}


def _task(validated: dict[str, Any], task_id: str) -> dict[str, Any]:
    return next(t for t in validated["tasks"] if t["id"] == task_id)


@pytest.mark.parametrize("task_id", [t for t in CREATED if t in VALID])
def test_the_valid_prs_validate_with_the_readmes_counts(validated: dict[str, Any], task_id: str):
    failed, passed, total = VALID[task_id]
    report = _task(validated, task_id)
    base, ref = report["phases"]["base"], report["phases"]["reference"]
    assert report["validated"] and report["level"] == "home"
    assert (base["status"], base["runner"], base["failed"], base["passed"]) == ("failed", "pytest", failed, passed)
    assert (ref["status"], ref["passed"], ref["failed"]) == ("passed", total, 0)
    assert base["diagnosis"] == ref["diagnosis"] == "" and Path(base["log_path"]).read_text().startswith("$ python3 -m pytest")
    task = load_task(validated["repo"] / ".benchtape" / "tasks" / task_id)
    assert task.validation is not None and task.validation.base_failed and task.validation.reference_passed
    assert task.validation.base["failed"] == failed and task.validation.reference["passed"] == total
    assert task.validation.fingerprint == report["fingerprint"] == task.fingerprint(load_project(validated["repo"]).task_recipe(task.source.base_commit))


def test_592_already_passes_at_its_base(validated: dict[str, Any]):
    report = _task(validated, "592")
    base = report["phases"]["base"]
    assert not report["validated"] and base["status"] == "passed" and base["passed"] == 17 and base["diagnosis"] == "base_already_passes"
    assert "do not reproduce" in base["remedy"]
    assert load_task(validated["repo"] / ".benchtape" / "tasks" / "592").validation is None  # nothing written


def test_476s_reference_still_fails(validated: dict[str, Any]):
    report = _task(validated, "476")
    assert report["phases"]["base"]["diagnosis"] == "" and report["phases"]["base"]["failed"] == 1
    ref = report["phases"]["reference"]
    assert not report["validated"] and ref["status"] == "failed" and ref["diagnosis"] == "gold_still_fails"
    assert load_task(validated["repo"] / ".benchtape" / "tasks" / "476").validation is None


def test_each_phase_is_a_session_in_the_store(validated: dict[str, Any]):
    store = Store(validated["repo"] / ".benchtape" / "benchtape.db", readonly=True)
    rows = {}
    for doc in validated["docs"]:  # each validation is a run of kind validate
        run = store.run(doc["run"])
        assert run is not None and run["kind"] == "validate"
        # the level and why it was chosen are said (the JSON) and kept with the run (issue 44: auto moved under a user)
        assert doc["level_why"] == "--sandbox home, as asked"
        params = run["params"] if isinstance(run["params"], dict) else json.loads(run["params"])
        assert (params["level"], params["level_why"]) == ("home", "--sandbox home, as asked")
        rows.update({r.scenario: r for r in store.session_rows(run_id=run["id"])})
    health = ("reference.2", "reference.3", "base.suite")  # a valid task's reference run 3 times and its base's whole suite
    assert set(rows) == {f"{t}:{p}" for t in CREATED for p in ("base", "reference")} | {f"{t}:{p}" for t in CREATED if t in VALID for p in health} | {"476:reference.2", "476:reference.3", "476:reference.suite"}  # gold_still_fails: a flip? run again, it fails alike; does it fail alone? the suite says no
    session = store.load_session(rows["592:base"].id)
    summary = json.loads(session.final_output or "{}")
    assert summary["diagnosis"] == "base_already_passes" and summary["passed"] == 17
    assert [c.tool for c in session.calls] == ["shell"] and "python3 -m pytest" in session.calls[0].input["command"]
    assert any("17 passed" in line for line in store.raw_lines(rows["592:base"].id))
    query = benchtape("query", "final_output", "--scenario", "603:reference", cwd=validated["repo"])
    assert query.returncode == 0, query.stderr
    found = json.loads(json.loads(query.stdout.splitlines()[0])["result"])
    assert (found["status"], found["passed"], found["held"]) == ("passed", 50, True)
    # a phase keeps its log and evidence, never its throwaway tree: said so, not "it failed" or "it never finished"
    phase = rows["592:base"].id
    diff = benchtape("show", phase, "--diff", cwd=validated["repo"])
    assert "is a validation's verifier run (592:base)" in diff.stdout + diff.stderr and "or it failed" not in diff.stdout + diff.stderr, diff.stdout + diff.stderr
    exported = benchtape("export", phase, str(validated["repo"].parent / "phase-tree"), cwd=validated["repo"])
    assert exported.returncode == 2 and "is a validation's verifier run (592:base)" in exported.stderr and "never finished" not in exported.stderr, exported.stderr
    assert not (validated["repo"].parent / "phase-tree").exists()
    # its evidence (every test's outcome, as JSON) is shortened by `show` as any long text is
    longest = max(rows.values(), key=lambda r: len(store.load_session(r.id).final_output or ""))
    evidence = store.load_session(longest.id).final_output or ""
    assert len(evidence) > 4000, len(evidence)
    shown = benchtape("show", longest.id, cwd=validated["repo"]).stdout
    assert f"[+{len(evidence) - 4000} chars, --full shows it whole]" in shown and len(shown) < len(evidence), shown[-500:]
    assert evidence in benchtape("show", longest.id, "--full", cwd=validated["repo"]).stdout.replace("\n", "")


def test_list_shows_each_state_and_an_edited_task_is_stale(validated: dict[str, Any]):
    repo = validated["repo"]
    listed = json.loads(benchtape("task", "list", "--json", cwd=repo).stdout)
    states = {t["id"]: t["state"] for t in listed["tasks"]}
    assert states == {"398": "valid", "434": "valid", "476": "unvalidated", "534": "valid", "551": "valid", "592": "unvalidated", "603": "valid"}
    assert listed["counts"] == {"valid": 5, "unvalidated": 2}
    tests_patch = repo / ".benchtape" / "tasks" / "434" / "tests.patch"
    original = tests_patch.read_bytes()
    tests_patch.write_bytes(original + b"\n")  # any byte of a bound input
    try:
        row = next(t for t in json.loads(benchtape("task", "list", "--json", cwd=repo).stdout)["tasks"] if t["id"] == "434")
        assert row["state"] == "stale" and row["next"] == "benchtape task validate 434"
        text = benchtape("task", "list", cwd=repo).stdout
        assert "stale" in text and "next: benchtape task validate 434" in text
        assert " ".join(row["why"].split()) in " ".join(text.split())  # the whole reason, wrapped (it was cut at 80: "… base comm")
    finally:
        tests_patch.write_bytes(original)
    assert next(t for t in json.loads(benchtape("task", "list", "--json", cwd=repo).stdout)["tasks"] if t["id"] == "434")["state"] == "valid"


def test_doctor_reports_everything_at_once_names_only(validated: dict[str, Any]):
    repo = validated["repo"]
    secret = "sk-ant-DOCTOR-MUST-NOT-PRINT-THIS"
    done = benchtape("doctor", "--json", "--tool", "claude-code", "--tool", "codex", cwd=repo, env={"ANTHROPIC_API_KEY": secret, "OPENAI_API_KEY": "", "HOME": str(repo.parent)})
    assert secret not in done.stdout and secret not in done.stderr
    doc = json.loads(done.stdout)
    checks = {c["check"]: c for c in doc["checks"]}
    assert checks["git"]["status"] == "ok" and "1230 commits" in checks["git"]["detail"]
    assert checks["tasks"]["status"] == "warn" and "5 valid" in checks["tasks"]["detail"] and "2 unvalidated" in checks["tasks"]["detail"]
    assert checks["credentials claude-code"]["status"] == "ok" and "ANTHROPIC_API_KEY" in checks["credentials claude-code"]["detail"]
    assert checks["credentials codex"]["status"] == "fail" and "OPENAI_API_KEY" in checks["credentials codex"]["detail"]
    assert checks["project image"]["status"] in ("ok", "warn") and "Dockerfile.benchtape" in checks["project image"]["detail"]
    assert {"engine", "store", "agent claude-code", "agent codex", "pricing", "tool registry"} <= set(checks)
    assert done.returncode == 1 and doc["failed"] == ["credentials codex"]
    assert all(c["next"] for c in doc["checks"] if c["status"] == "fail")
    offline = benchtape("doctor", "--tool", "mock", cwd=repo)  # the offline harness needs no credential: nothing fails
    assert offline.returncode == 0 and "credentials mock: needs none" in offline.stdout and "FAIL" not in offline.stdout, offline.stdout


def test_a_valid_task_validated_again_without_holding_is_unvalidated_everywhere(validated: dict[str, Any], tmp_path: Path):
    """prettytable's 344 was validated, then validated again of the same inputs at the same
    level and found its base passing (its environment had been changed under it): a failed
    validation writes no record, so the old one stood and `task list` and every evaluation kept
    calling it valid. Now the later conclusion is said, and the task is not run as valid."""
    import shutil

    from benchtape.spec.task_cells import load_task_folders
    from benchtape.tasks.listing import task_rows
    from benchtape.tasks.validate import TaskReport, write_outcome

    repo = tmp_path / "toolz"
    shutil.copytree(validated["repo"], repo, symlinks=True)
    project = load_project(repo)
    task_id = FIVE[0]
    task = load_task(repo / ".benchtape" / "tasks" / task_id)
    assert task.validation is not None
    [row] = [r for r in task_rows(project) if r.id == task_id]
    assert row.state == "valid"
    same = task.fingerprint(project.task_recipe(task.source.base_commit))
    failed = TaskReport(task_id, validated=False, refused="base: base_already_passes", next=f"benchtape task validate {task_id}", level=task.validation.level, fingerprint=same)
    write_outcome(repo / ".benchtape" / "validate", failed, task.validation.level or "home")
    outcome = repo / ".benchtape" / "validate" / task_id / "outcome.json"
    doc = json.loads(outcome.read_text())
    doc["at"] = "2999-01-01T00:00:00Z"  # after the record, whatever second this test runs in
    outcome.write_text(json.dumps(doc))
    [row] = [r for r in task_rows(project) if r.id == task_id]
    assert row.state == "unvalidated" and f"validated {task.validation.at}, but validated again 2999-01-01T00:00:00Z" in row.why and "base_already_passes" in row.why, row.why
    tasks, skipped = load_task_folders([task_id], repo, repo / "ev.yaml", None)
    assert tasks == [] and [(s.state, s.why) for s in skipped] == [("unvalidated", row.why)]
    # at another level, or of other inputs, that conclusion says nothing of this record
    outcome.write_text(json.dumps({**doc, "level": "container"}))
    assert [r.state for r in task_rows(project) if r.id == task_id] == ["valid"]
    outcome.write_text(json.dumps({**doc, "fingerprint": "other"}))
    assert [r.state for r in task_rows(project) if r.id == task_id] == ["valid"]


def test_from_a_folder_inside_the_project_the_projects_store_is_used(validated: dict[str, Any]):
    """From `src/` (here toolz's package folder) `task validate` made a second store there, wrote
    the hidden tests' logs into the source tree, and `sessions` found nothing: git finds its
    repository from any folder in it, and so does benchtape its store now."""
    repo = validated["repo"]
    inside = repo / "toolz" / "tests"
    at_top = benchtape("sessions", "--json", cwd=repo)
    below = benchtape("sessions", "--json", cwd=inside)
    assert below.returncode == 0 and json.loads(below.stdout) == json.loads(at_top.stdout) and json.loads(below.stdout), below.stdout + below.stderr
    listed = benchtape("task", "list", "--json", cwd=inside)
    assert listed.returncode == 0 and {t["id"] for t in json.loads(listed.stdout)["tasks"]} >= set(FIVE)
    assert not (inside / ".benchtape").exists() and not (repo / "toolz" / ".benchtape").exists()
    from benchtape.store.database import default_db_path

    assert default_db_path(inside) == repo / ".benchtape" / "benchtape.db"
    assert default_db_path(repo.parent) == repo.parent / ".benchtape" / "benchtape.db"  # outside it: here, as before
