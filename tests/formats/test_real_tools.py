"""The real Claude Code and Codex (against the scripted model) recorded by `benchtape run`, then
exported: ATIF trajectories Harbor's rules accept, imported back as the same sessions, and an
Inspect log whose scores are the run's outcomes (the fix passes, the wrong fix fails)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formatskit import ROOT, benchtape, views
from realagents import need

from benchtape.formats.harbor_rules import problems
from benchtape.store.database import Store

inspect_log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed: pip install 'benchtape[inspect]'")


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_a_real_tools_run_exports_as_atif_and_as_an_inspect_log(tool: str, tmp_path: Path) -> None:
    need(tool)
    db = tmp_path / "s.db"
    ran = benchtape("run", ROOT / "fixtures-red" / "scripted" / f"{tool}.yaml", "--db", db, cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # one scenario fails, as the bench means it to
    out = benchtape("export", "--format", "atif", "--run", "latest", "-o", tmp_path / "atif", "--db", db)
    assert out.returncode == 0, out.stderr
    docs = [json.loads(p.read_text()) for p in (tmp_path / "atif").glob("*.json")]
    assert len(docs) == 2 and all(problems(d) == [] for d in docs)
    assert {d["agent"]["name"] for d in docs} == {tool} and all(d["agent"]["version"] != "unknown" for d in docs)
    assert benchtape("import", "atif", tmp_path / "atif", "--db", tmp_path / "back.db").returncode == 0
    original, back = Store(db), Store(tmp_path / "back.db")
    theirs = {r.scenario: r.id for r in back.session_rows()}
    for row in original.session_rows():
        assert views(back.load_session(theirs[row.scenario])) == views(original.load_session(row.id))
    logged = benchtape("export", "--format", "inspect", "--run", "latest", "-o", tmp_path / "run.eval", "--db", db)
    assert logged.returncode == 0, logged.stderr
    log = inspect_log.read_eval_log(str(tmp_path / "run.eval"))
    assert {s.id: s.scores["scenario"].value for s in log.samples} == {"fixes-the-bug@attempt-1": 1.0, "breaks-it-differently@attempt-1": 0.0}
    assert all(any(m.role == "tool" for m in s.messages) for s in log.samples)
    # the scripted model spent nothing, as `sessions` and `compare` price it, whatever the tool printed
    assert all(d["final_metrics"].get("total_cost_usd") in (0.0, None) for d in docs), [d["final_metrics"] for d in docs]
    assert all(u.total_cost in (0.0, None) for s in log.samples for u in (s.model_usage or {}).values())
    assert all(u.total_cost in (0.0, None) for u in (log.stats.model_usage or {}).values())
