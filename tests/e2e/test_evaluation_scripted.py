"""An evaluation that compares the real Claude Code against the real Codex, offline: both
pinned binaries run the fixtures-red tasks against benchtape's scripted model server (no
key, no spend), and `compare` ranks them from what the store holds."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import orjson
import pytest
from cli import ROOT, benchtape

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realagents import TOOLS, need, npm_global  # noqa: E402

EVALUATION = ROOT / "fixtures-red" / "scripted" / "claude-vs-codex.yaml"
pytestmark = pytest.mark.xdist_group("real-claude")


def test_claude_code_against_codex_through_the_scripted_model(tmp_path):
    need("claude-code")
    need("codex")
    before = npm_global()
    env = {"BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    db = tmp_path / "cells.db"
    out = benchtape("run", EVALUATION, "--db", db, "--yes", cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 session(s) started, 4 cell(s) measured now" in out.stdout

    compared = orjson.loads(benchtape("compare", "claude-vs-codex", "--db", db, "--json", cwd=tmp_path, env=env).stdout)
    ranked = {r["label"]: r for r in compared["ranked"]}
    assert set(ranked) == {"claude-code@2.1.328 scripted permission_mode=bypass", "codex@0.169.0 scripted"}
    for row in ranked.values():
        assert row["outcomes"] == {"passed": 1, "failed": 1}, row
        assert row["cost_per_cell"] == 0.0 and row["priced"]  # the scripted model spends nothing: known, not unknown
        assert row["tokens_per_cell"]  # the script's usage numbers, as each tool reported them
        assert row["lines_per_cell"] is not None
    assert compared["pairs"][0]["tasks"] == 2
    # the real binaries against the scripted model: both setups are scripts, so the comparison says
    # it measured the pipeline (the tools' wiring, staging, grading), not agents
    assert compared["measured"] == "pipeline" and all(r["kind"] == "scripted" for r in compared["ranked"])

    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT s.harness, json_extract(a.data, '$.binary.version'), json_extract(a.data, '$.cell.versions'), json_extract(a.data, '$.model_endpoint.kind') FROM sessions s JOIN actions a ON a.session_id = s.id AND a.seq = 1").fetchall()
        diffs = [orjson.loads(d) for (d,) in c.execute("SELECT json_extract(data, '$.diff') FROM outcomes")]
    versions = {"claude-code": "2.1.328", "codex": "0.169.0"}
    for harness, binary_version, cell_versions, endpoint in rows:
        assert binary_version == versions[harness] and orjson.loads(cell_versions) == {harness: versions[harness]} and endpoint == "scripted"
    assert not [p for d in diffs for p in d["paths"] if p.startswith((".claude", ".codex"))]  # the tools' own state is not the agent's change

    again = benchtape("run", EVALUATION, "--db", db, "--yes", cwd=tmp_path, env=env, timeout=600)
    assert "0 session(s) started, 0 cell(s) measured now, 4 re-graded" in again.stdout, again.stdout + again.stderr
    assert npm_global() == before  # nothing installed or updated outside benchtape's folders
