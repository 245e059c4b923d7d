"""Issue 35, done when: a folder of Harbor-format tasks (fixtures-red/harbor/) runs through
`benchtape run` with the oracle, the no-op agent and the REAL Claude Code against the scripted
model; the oracle passes and the no-op fails; those sessions export as ATIF (valid by the `atif`
package and Harbor's rules) and as Inspect logs, which the real `inspect view` on loopback lists
and serves with each task's verdict as a score."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from formatskit import ROOT, benchtape, cli
from inspectview import inspect_view
from realagents import TOOLS, need

from benchtape.formats.harbor_rules import problems
from benchtape.sandbox.harbor_env import can_map_paths
from benchtape.store.database import Store
from benchtape.tools.binaries import resolve

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed: pip install 'benchtape[inspect]'")
pytestmark = pytest.mark.skipif(not can_map_paths(), reason="Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")

FIXTURES = ROOT / "fixtures-red" / "harbor"
TASKS = sorted(p.name for p in FIXTURES.iterdir() if (p / "task.toml").is_file())
AGENTS = {"oracle": ["--harness", "oracle"], "noop": ["--harness", "mock", "--model", "noop"], "claude": ["--harness", "claude-code", "--model", "scripted"]}
VERIFY = "task:verify"


def _pin_claude(project: Path) -> dict[str, str]:
    """The pinned real binary, not npm's `latest`: a project overlay pins the tool's version to
    the one installed in the shared tools folder, which BENCHTAPE_TOOLS names (no registry asked)."""
    version = resolve("claude-code", root=TOOLS).version
    tools = project / ".benchtape" / "tools"
    tools.mkdir(parents=True)
    (tools / "claude-code.yaml").write_text(f'apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: claude-code\nextends: builtin\nversion: "{version}"\n')
    return {"BENCHTAPE_TOOLS": str(TOOLS)}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    need("claude-code")
    top = tmp_path_factory.mktemp("harbor-formats")
    folder = top / "harbor"
    shutil.copytree(FIXTURES, folder)
    env = _pin_claude(top)
    db = top / "t.db"
    runs = {}
    for name, args in AGENTS.items():
        done = benchtape("run", folder, *args, "--yes", "--json", "--db", db, cwd=top, env=env, timeout=300)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
        runs[name] = json.loads(done.stdout)["run_id"]
    return {"top": top, "db": db, "runs": runs}


def _outcomes(db: Path, run_id: str) -> dict[str, str]:
    """Task id → the cell outcome its latest grading decided."""
    store = Store(db, readonly=True)
    try:
        rows = list(store.session_rows(run_id=run_id))
        found = store.outcomes([r.id for r in rows])
        return {r.scenario: found[r.id][-1]["outcome"] for r in rows}
    finally:
        store.close()


def test_the_oracle_passes_the_noop_fails_and_the_real_claude_is_graded(ran: dict[str, Any]) -> None:
    outcomes = {name: _outcomes(ran["db"], run) for name, run in ran["runs"].items()}
    assert outcomes["oracle"] == dict.fromkeys(TASKS, "passed")
    assert outcomes["noop"] == dict.fromkeys(TASKS, "no_changes")
    assert set(outcomes["claude"]) == set(TASKS) and "passed" not in outcomes["claude"].values()  # the scripted model has no script for a task: it only answers


def test_the_sessions_export_as_valid_atif_with_their_verdicts(ran: dict[str, Any]) -> None:
    for name, run in ran["runs"].items():
        out = cli("export", "--format", "atif", "--run", run, "-o", ran["top"] / "atif" / name, "--db", ran["db"])
        assert out.code == 0, out.stderr
        docs = [json.loads(p.read_text()) for p in (ran["top"] / "atif" / name).glob("*.json")]
        assert len(docs) == len(TASKS)
        for doc in docs:
            assert problems(doc) == [], (name, problems(doc))  # the atif package's validator, then Harbor's rules
            ours = doc["extra"]["benchtape"]
            assert ours["task"]["kind"] == "harbor" and ours["task"]["id"] in TASKS and ours["task"]["fingerprint"].startswith("sha256:")
            assert ours["grading"]["scores"][VERIFY] == (1.0 if name == "oracle" else 0.0)
            assert ours["grading"]["verdicts"][-1]["facts"]["fingerprint"] == ours["task"]["fingerprint"]
        if name == "claude":
            assert {d["agent"]["name"] for d in docs} == {"claude-code"} and all(d["agent"]["version"] != "unknown" for d in docs)
        if name == "oracle":  # benchtape's own agent: benchtape's version (issue 44: it said the Python's, "Python 3.11.7")
            from benchtape.core.version import VERSION

            assert {d["agent"]["version"] for d in docs} == {VERSION}


def test_inspect_view_serves_the_runs_with_each_tasks_score(ran: dict[str, Any]) -> None:
    logs = ran["top"] / "logs"
    for run in ran["runs"].values():
        out = cli("export", "--format", "inspect", "--run", run, "-o", logs, "--db", ran["db"])
        assert out.code == 0, out.stderr
    with inspect_view(logs) as viewer:
        files = viewer.log_files()
        assert len(files) == len(ran["runs"])
        by_run = {}
        for f in files:
            header = viewer.headers(f["name"])
            by_run[header["eval"]["run_id"]] = {s["id"].removesuffix("@attempt-1"): s for s in viewer.sample_summaries(f["name"])}  # TASK@attempt-N
        assert set(by_run) == set(ran["runs"].values())
        for name, run in ran["runs"].items():
            samples = by_run[run]
            assert set(samples) == set(TASKS)
            want = 1.0 if name == "oracle" else 0.0
            assert {t: (s["scores"][VERIFY]["value"], s["scores"]["scenario"]["value"]) for t, s in samples.items()} == dict.fromkeys(TASKS, (want, want))
        claude = next(f["name"] for f in files if viewer.headers(f["name"])["eval"]["run_id"] == ran["runs"]["claude"])
        sample = viewer.sample(claude, "hello-file@attempt-1")
        assert sample["metadata"]["harness"] == "claude-code" and sample["metadata"]["task"]["id"] == "hello-file"
        assert [m["role"] for m in sample["messages"]][:2] == ["user", "assistant"]
