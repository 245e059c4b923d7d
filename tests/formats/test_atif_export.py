"""`benchtape export --format atif`: a stored session as an ATIF trajectory that the `atif`
package's validator and Harbor's stricter rules accept, for imported real Claude Code and Codex
sessions and for mock runs, subagents (nested) included; and the CLI around it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formatskit import benchtape, cli, real_session, session_params, views, write_mock_bench

from benchtape.formats.atif_export import trajectory
from benchtape.formats.harbor_rules import VERSIONS, problems
from benchtape.recorder.importer import import_files
from benchtape.store.database import Store


def _walk(doc: dict) -> list[dict]:
    """The document and every embedded subagent trajectory, depth first."""
    return [doc] + [t for sub in doc.get("subagent_trajectories") or [] for t in _walk(sub)]


def _calls(doc: dict) -> list[dict]:
    return [c for t in _walk(doc) for s in t["steps"] for c in s.get("tool_calls") or []]


def _results(doc: dict) -> list[dict]:
    return [r for t in _walk(doc) for s in t["steps"] for r in (s.get("observation") or {}).get("results") or []]


@pytest.mark.parametrize("path", session_params())
def test_an_imported_real_session_exports_a_trajectory_harbor_accepts(path: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    harness = "codex" if "codex" in path.parent.name else "claude-code"
    (result,) = import_files(store, harness, [path])
    session = store.load_session(result.session_id)
    doc = trajectory(session)
    assert problems(doc) == []
    assert doc["schema_version"] in VERSIONS and doc["session_id"] == session.id and doc["agent"]["name"] == harness
    assert {t.get("trajectory_id") for t in _walk(doc)} - {"main"} == set(session.subagents)
    spawns = sum(1 for a in session.actions if a.kind == "subagent.spawned")
    assert len(_calls(doc)) == len(session.calls) + spawns  # every call, and each delegation as the call it was
    answered = {(c.call_id) for c in session.calls if c.has_result}
    assert answered <= {r.get("source_call_id") for r in _results(doc)}
    errors = {c.call_id for c in session.calls if c.is_error}
    assert errors == {r["source_call_id"] for r in _results(doc) if r.get("extra", {}).get("benchtape", {}).get("is_error")}
    m, final = session.metrics, doc["final_metrics"]
    if m.tokens_in is not None:
        assert final["total_prompt_tokens"] == m.tokens_in + (m.cache_read_tokens or 0) + (m.cache_write_tokens or 0)
    assert final.get("total_cached_tokens") == m.cache_read_tokens and final.get("total_cost_usd") == m.cost_usd
    last_agent = [s for s in doc["steps"] if s["source"] == "agent"][-1]
    assert session.final_output is None or last_agent["message"] == session.final_output  # what ATIF readers take as the answer


def test_the_harbor_rules_refuse_what_harbor_refuses_and_the_atif_package_lets_through() -> None:
    good = trajectory(real_session(next(iter(p for p in (Path(__file__).parents[1] / "realdata").glob("claude-stream-json/*subagent*")))))
    assert problems(good) == []
    sub = good["subagent_trajectories"][0]

    def broken(change) -> list[str]:
        doc = json.loads(json.dumps(good))
        change(doc)
        return problems(doc)

    assert "is not one of" in broken(lambda d: d.update(schema_version="ATIF-v9"))[0]
    assert "at least one step" in broken(lambda d: d["subagent_trajectories"][0].update(steps=[]))[0]
    dangling = {"step_id": len(sub["steps"]) + 1, "source": "agent", "message": "", "observation": {"results": [{"source_call_id": "nope", "content": "x"}]}}
    assert "names no tool call" in broken(lambda d: d["subagent_trajectories"][0]["steps"].append(dangling))[0]
    assert "negative" in broken(lambda d: d["final_metrics"].update(total_steps=-1))[0]
    assert broken(lambda d: d.update(bogus=1))[0].startswith("atif: bogus")  # the package's own validator first


@pytest.fixture(scope="module")
def mock_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mock")
    db = folder / "r.db"
    assert benchtape("run", write_mock_bench(folder), "--db", db, cwd=folder).returncode == 1  # says-little fails its check
    return db


def test_a_mock_run_exports_imports_and_reparses_as_itself(mock_db: Path, tmp_path: Path) -> None:
    """Through the CLI: a run with nested subagents, a failing tool, a skill and metrics; its
    sessions exported to a folder, valid; imported back (as any import: raw lines, reparse)
    with the same calls, threads, errors and metrics."""
    db, out = mock_db, tmp_path / "atif"
    exported = benchtape("export", "--format", "atif", "--run", "latest", "-o", out, "--db", db)
    assert exported.returncode == 0 and "wrote 2 ATIF trajectories" in exported.stdout, exported.stderr
    docs = {json.loads(p.read_text())["extra"]["benchtape"]["started"]["scenario"]: json.loads(p.read_text()) for p in out.glob("*.json")}
    doc = docs["delegates"]
    assert problems(doc) == [] and doc["agent"]["name"] == "mock"
    (explore,) = doc["subagent_trajectories"]
    (plan,) = explore["subagent_trajectories"]
    assert explore["agent"]["name"] == "Explore" and plan["agent"]["name"] == "Plan" and plan["steps"][0]["message"] == "plan the fix"
    lint = next(r for r in _results(doc) if r.get("content") == "3 warnings")
    assert lint["extra"]["benchtape"]["is_error"] is True
    assert doc["final_metrics"] == {"total_prompt_tokens": 1240, "total_completion_tokens": 120, "total_cached_tokens": 300, "total_cost_usd": 0.02, "total_steps": len(doc["steps"]), "extra": {"total_cache_creation_input_tokens": 40, "benchtape": {"duration_ms": 1500, "turns": 4}}}
    assert doc["steps"][-1]["message"] == "All reviewed: no bugs."

    again = tmp_path / "again.db"
    imported = benchtape("import", "atif", out, "--db", again)
    assert imported.returncode == 0, imported.stderr
    original, back = Store(db), Store(again)
    by_scenario = {r.scenario: r.id for r in back.session_rows()}
    for row in original.session_rows():
        theirs = back.load_session(by_scenario[row.scenario])
        assert views(theirs) == views(original.load_session(row.id))
        assert theirs.harness == "mock" and theirs.status == "ok" and theirs.imported_from
        # the snapshots' bytes stayed in the first store: said, not claimed
        assert theirs.snapshot is None and any("workspace.snapshot recorded where the session was exported from" in w["what"] for w in theirs.warnings)
    sid = by_scenario["delegates"]
    file = next(p for p in out.glob("*.json") if json.loads(p.read_text())["extra"]["benchtape"]["started"]["scenario"] == "delegates")
    assert back.raw_lines(sid) == [line for line in file.read_text().split("\n") if line.strip()]  # the file's lines, as they are
    reparsed = benchtape("reparse", sid, "--db", again)
    assert reparsed.returncode == 0, reparsed.stderr
    new = back.load_session(reparsed.stdout.split()[0])
    assert [(a.kind, a.thread, a.data) for a in new.actions if a.kind != "session.started"] == [(a.kind, a.thread, a.data) for a in back.load_session(sid).actions if a.kind != "session.started"]


def test_one_session_goes_to_stdout_or_a_file(mock_db: Path, tmp_path: Path) -> None:
    db = mock_db
    shown = cli("export", "latest", "--format", "atif", "--db", db)
    assert shown.code == 0 and problems(json.loads(shown.stdout)) == []
    written = cli("export", "latest", "-f", "atif", "-o", tmp_path / "one.json", "--db", db)
    assert written.code == 0 and json.loads((tmp_path / "one.json").read_text()) == json.loads(shown.stdout)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["latest", "--format", "yaml"], "unknown export format 'yaml'"),
        (["--run", "latest", "--format", "harbor", "-o", "x"], "a task goes to Harbor as a task folder: benchtape task export ID --format harbor -o FOLDER"),
        (["--run", "latest", "--format", "workspace", "-o", "x"], "a workspace export is of one session"),
        (["latest"], "a workspace export needs a folder"),
        (["--run", "latest", "--format", "atif"], "needs a folder to write them into"),
        (["latest", "--run", "latest", "--format", "atif"], "export takes one of SESSION, --run or --all"),
        (["latest", "--format", "atif", "--staged"], "--staged is for a workspace export"),
        (["--all", "--format", "inspect", "-o", "x.eval"], "holds one run's sessions"),
        (["--run", "latest", "--format", "atif", "-o", "full"], "exists and is not an empty folder"),
    ],
)
def test_export_refuses_what_it_cannot_do_and_writes_nothing(mock_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str) -> None:
    db = mock_db
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    out = cli("export", *args, "--db", db)
    assert out.code == 2 and says in out.stderr, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before and (tmp_path / "full" / "keep.txt").read_text() == "mine"
