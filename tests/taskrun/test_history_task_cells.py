"""An evaluation over tasks mined from the real toolz history (issue 33, "Run and grade", the
record side): five validated tasks and one unvalidated, three setups (the mock scripted agent,
the no-op negative control, the oracle), recorded through the real `benchtape run` at level
home. What is RECORDED is asserted here: each session names its task (kind, id, folder,
fingerprint), starts from the tree at base_commit as a fresh one-commit repository (nothing of
the history, the hidden tests or the reference fix), the oracle applies reference.patch as a
shell call, the controls are labelled; an unvalidated or edited (stale) task is skipped and
said, and an edited task revalidated is a new cell, not a re-graded one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import cli_env, validated_toolz  # noqa: E402
from taskrunkit import run_json, sessions, tree  # noqa: E402

from benchtape.spec.project import load_project  # noqa: E402
from benchtape.spec.task import load_task, task_dirs  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

VALID = ["603", "551", "534", "434", "398"]  # five of the shared README's hand-checked PRs
UNVALIDATED = "592"
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


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = validated_toolz(tmp_path_factory.mktemp("taskrun") / "toolz", tuple(VALID))
    done = benchtape("task", "create", UNVALIDATED, cwd=repo)
    assert done.returncode == 0, done.stderr
    (repo / ".benchtape" / "evaluations").mkdir(parents=True, exist_ok=True)
    (repo / ".benchtape" / "evaluations" / "tasks.yaml").write_text(EVALUATION)
    preview = run_json(benchtape("run", "tasks", "--dry-run", "--json", cwd=repo))
    ran = run_json(benchtape("run", "tasks", "--yes", "--json", cwd=repo, env=cli_env(), timeout=600))
    return {"repo": repo, "db": repo / ".benchtape" / "benchtape.db", "preview": preview, "ran": ran}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_the_preview_runs_the_valid_tasks_and_says_which_it_skips(project: dict[str, Any]):
    preview = project["preview"]
    assert sorted(preview["tasks"]) == sorted(VALID)
    assert preview["cells"] == 3 * len(VALID) and preview["to_run"] == 3 * len(VALID)
    skipped = {s["id"]: s for s in preview["skipped"]}
    assert set(skipped) == {UNVALIDATED} and skipped[UNVALIDATED]["state"] == "unvalidated"
    assert skipped[UNVALIDATED]["next"] == f"benchtape task validate {UNVALIDATED}"
    assert any(n.startswith(f"task {UNVALIDATED} skipped (unvalidated)") for n in preview["notes"])
    assert [s["id"] for s in project["ran"]["skipped"]] == [UNVALIDATED]  # the run's own --json says it too


def test_every_session_names_its_task_and_starts_from_the_base_tree(project: dict[str, Any]):
    repo, db = project["repo"], project["db"]
    loaded = load_project(repo)
    found = sessions(db, project["ran"]["run_id"])
    assert len(found) == 3 * len(VALID)
    for s in found:
        task = load_task(task_dirs(repo)[s["row"].scenario])
        assert s["started"]["task"] == {"kind": "history", "id": task.id, "folder": str(task.dir), "fingerprint": task.fingerprint(loaded.task_recipe(task.source.base_commit))}
        assert s["started"]["prompt"] == task.prompt()
        assert s["started"]["cell"]["baseline"] == s["baseline"]  # the snapshot before the agent
        files = tree(db, s["baseline"])
        tracked = set(_git(repo, "ls-tree", "-r", "--name-only", task.source.base_commit).split())
        assert tracked <= set(files)  # the base commit's tree, every file
        assert not {p for p in files if p.endswith(("tests.patch", "reference.patch")) or p.startswith(".benchtape/")}
        # the hidden tests are not in it: the file tests.patch adds is absent (or as at the base)
        assert files.get(_first_path(task.tests_patch())) == _at_base(repo, task.source.base_commit, _first_path(task.tests_patch()))


def test_the_oracle_applies_the_reference_patch_and_the_controls_are_labelled(project: dict[str, Any]):
    db = project["db"]
    by_setup: dict[str, list[dict[str, Any]]] = {}
    for s in sessions(db, project["ran"]["run_id"]):
        by_setup.setdefault(s["started"]["cell"]["label"], []).append(s)
    oracle, noop, scripted = by_setup["oracle@latest reference"], by_setup["mock@latest noop"], by_setup["mock@latest scripted"]
    assert len(oracle) == len(noop) == len(scripted) == len(VALID)
    for s in oracle:
        assert s["row"].harness == "oracle" and s["started"]["cell"]["control"] == "oracle"
        assert [c["input"]["command"] for c in s["calls"]] == ["git apply --whitespace=nowarn reference.patch"]
        assert s["results"][0]["is_error"] is False and s["finished"]["status"] == "ok"
        before, after = tree(db, s["baseline"]), tree(db, s["final"])
        task = load_task(task_dirs(project["repo"])[s["row"].scenario])
        changed = _first_path(task.reference())
        assert after[changed] != before.get(changed)  # the known fix is in the final workspace
    for s in noop:
        assert s["started"]["cell"]["control"] == "noop" and s["final"] == s["baseline"] and not s["calls"]
    for s in scripted:
        assert "control" not in s["started"]["cell"]  # a setup, not a control
    # graded live by the task's verifier (the grade side, merged from branch taskgrade): the controls hold
    outcomes = project["ran"]["outcomes"]
    assert outcomes["oracle@latest reference"] == {"passed": len(VALID)} and outcomes["mock@latest noop"] == {"no_changes": len(VALID)}


def test_the_workspace_is_a_fresh_repository_with_nothing_of_the_history(project: dict[str, Any], tmp_path: Path):
    """The agent's own view: a kept sandbox of a no-op cell, looked at with git."""
    repo = project["repo"]
    task = load_task(task_dirs(repo)["434"])
    done = run_json(benchtape("run", "tasks", "--yes", "--json", "--fresh", "--task", "434", "--keep-sandbox", cwd=repo, env=cli_env(), timeout=300))
    work = Path(next(s["started"]["work_dir"] for s in sessions(project["db"], done["run_id"]) if s["started"]["cell"].get("control") == "noop"))
    try:
        log = _git(work, "log", "--all", "--format=%H %s")
        assert len(log.splitlines()) == 1 and log.split()[1] == "base"
        assert task.source.base_commit not in log and str(task.source.fix_commit) not in log
        assert _git(work, "remote").strip() == "" and _git(work, "branch", "--format=%(refname:short)").split() == ["main"]
        original = [line for line in _git(repo, "log", "--all", "--format=%s").splitlines() if line.strip()]
        assert not any(line in log for line in original)
        assert not list(work.rglob("tests.patch")) and not list(work.rglob("reference.patch")) and not (work / ".benchtape").exists()
        text = subprocess.run(["grep", "-rIl", "--exclude-dir=.git", "pull/", "."], cwd=work, capture_output=True, text=True).stdout
        assert str(task.source.pull_request or "nothing") not in text
        assert _git(work, "rev-parse", "HEAD^{tree}").strip() == _git(repo, "rev-parse", f"{task.source.base_commit}^{{tree}}").strip()
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)


def test_an_edited_task_is_stale_and_skipped_then_a_new_cell_once_revalidated(project: dict[str, Any]):
    repo = project["repo"]
    prompt = repo / ".benchtape" / "tasks" / "398" / "prompt.md"
    prompt.write_text(prompt.read_text() + "\nKeep the change small.\n")
    stale = run_json(benchtape("run", "tasks", "--dry-run", "--json", cwd=repo))
    skipped = {s["id"]: s for s in stale["skipped"]}
    assert skipped["398"]["state"] == "stale" and "398" not in stale["tasks"]
    assert stale["to_run"] == 0 and stale["measured"] == 3 * (len(VALID) - 1)  # the others are measured: re-graded, not run
    refused = benchtape("run", "tasks", "--dry-run", "--task", "398", cwd=repo)
    assert refused.returncode == 2 and "stale" in refused.stderr and "benchtape task validate 398" in refused.stderr
    done = benchtape("task", "validate", "398", "--sandbox", "home", "--json", cwd=repo, env=cli_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = run_json(benchtape("run", "tasks", "--dry-run", "--json", cwd=repo))
    assert "398" in fresh["tasks"] and fresh["to_run"] == 3 and fresh["measured"] == 3 * (len(VALID) - 1)  # the edited task is new cells
    again = run_json(benchtape("run", "tasks", "--yes", "--json", "--task", "398", cwd=repo, env=cli_env(), timeout=300))
    started = [s["started"] for s in sessions(project["db"], again["run_id"])]
    first = [s["started"] for s in sessions(project["db"], project["ran"]["run_id"]) if s["row"].scenario == "398"]
    assert len(started) == 3 and {s["task"]["fingerprint"] for s in started}.isdisjoint({s["task"]["fingerprint"] for s in first})
    assert {s["cell"]["id"] for s in started}.isdisjoint({s["cell"]["id"] for s in first})


def test_a_dry_run_of_the_oracle_on_a_bench_scenario_is_refused_with_the_fix(tmp_path: Path):
    bench = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"
    done = benchtape("run", str(bench), "--harness", "oracle", "--db", str(tmp_path / "t.db"), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "a bench scenario has no known fix" in done.stderr and "--harness oracle" in done.stderr
    folder = tmp_path / "proj" / ".benchtape" / "evaluations"
    folder.mkdir(parents=True)
    shutil.copy(bench, tmp_path / "proj" / "madbench.yaml")
    shutil.copytree(bench.parent / "calc", tmp_path / "proj" / "calc")
    (folder / "o.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - tool: oracle\n    model: reference\n")
    refused = benchtape("run", "o", "--dry-run", cwd=tmp_path / "proj")
    assert refused.returncode == 3 and "a bench scenario has no known fix" in refused.stderr, refused.stderr


def _first_path(patch: bytes) -> str:
    line = next(ln for ln in patch.decode().splitlines() if ln.startswith("+++ b/"))
    return line[len("+++ b/"):]


def _at_base(repo: Path, commit: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True)
    return done.stdout if done.returncode == 0 else None


CHEAT_TOOL = """\
apiVersion: benchtape/v1alpha1
kind: Tool
tool: cheat
extends: command
options:
  run: {default: default, values: {default: {args: [sh, -c, "%s"]}}}
"""


def test_an_agent_at_level_home_finds_no_task_secret_in_the_project(project: dict[str, Any]):
    """The agent runs as you at level home, but the task's hidden tests, the reference patches,
    validation's logs, the store and the history holding the fix are covered in its own mount
    namespace: an agent that went looking for `reference.patch` applied it and was credited
    with the pass (berbench: the agent never gets them). The paths are still there outside."""
    repo = project["repo"]
    remote = _git(repo, "config", "remote.origin.url").strip()  # the clone's origin, on this machine: the whole history (attrs' agent read its mirror's)
    assert Path(remote).exists(), remote
    secrets = f"{repo}/.benchtape/tasks/434/reference.patch {repo}/.benchtape/tasks/434/tests.patch {repo}/.benchtape/benchtape.db {repo}/.git/HEAD {remote}"
    script = f"for p in {repo}/.benchtape/tasks/*/reference.patch; do git apply $p && echo APPLIED $p; done; for f in {secrets}; do test -s $f && echo READ $f; done; ls {repo}/.benchtape/validate; git -C {repo} log --oneline -1 && echo HISTORY; git bundle list-heads {remote} && echo MIRROR; echo looked"
    (repo / ".benchtape" / "tools").mkdir(exist_ok=True)
    (repo / ".benchtape" / "tools" / "cheat.yaml").write_text(CHEAT_TOOL % script)
    (repo / ".benchtape" / "evaluations" / "cheat.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: all\ntools:\n  - tool: cheat\n    model: default\n")
    done = run_json(benchtape("run", "cheat", "--yes", "--json", "--task", "434", cwd=repo, env=cli_env(), timeout=300))
    [session] = [s for s in sessions(project["db"], done["run_id"]) if s["started"]["harness"] == "command"]
    store = Store(project["db"], readonly=True)
    try:
        said = store.load_session(session["row"].id).final_output or ""
    finally:
        store.close()
    assert "looked" in said and "APPLIED" not in said and "READ" not in said and "HISTORY" not in said and "MIRROR" not in said, said
    assert "passed" not in str(done.get("outcomes") or done), done
    assert (repo / ".benchtape" / "tasks" / "434" / "reference.patch").stat().st_size > 0  # still there for benchtape
