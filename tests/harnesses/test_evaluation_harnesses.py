"""An evaluation takes the new harnesses like any tool: the real Gemini CLI (scripted model,
offline) against a shell-script agent defined as a project Tool on the `command` harness, over
the scripted benches' tasks; `compare` ranks them from the store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from realagents import TOOLS, need

pytestmark = pytest.mark.xdist_group("real-agents")  # real CLIs, a minute each: one worker, not two at once
ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "fixtures-red" / "scripted" / "tasks.yaml"

FIXER = "#!/bin/sh\nsed -i 's/return a - b/return a + b/' calc.py\necho 'fixed add()'\n"


def benchtape(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(cwd / "xdg")}
    return subprocess.run([sys.executable, "-m", "benchtape", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_gemini_cli_against_a_command_tool_in_one_evaluation(tmp_path: Path) -> None:
    need("gemini-cli")
    (tmp_path / "agent.sh").write_text(FIXER)
    tools = tmp_path / ".benchtape" / "tools"
    tools.mkdir(parents=True)
    (tools / "fixer.yaml").write_text(json.dumps({
        "apiVersion": "benchtape/v1alpha1", "kind": "Tool", "tool": "fixer", "extends": "command",
        "options": {"run": {"default": "default", "values": {"default": {"args": ["sh", str(tmp_path / "agent.sh"), "{prompt_file}"]}}}},
    }))
    (tmp_path / "eval.yaml").write_text(json.dumps({
        "apiVersion": "benchtape/v1alpha1", "kind": "Evaluation", "description": "gemini vs a script", "bench": str(TASKS), "attempts": 1,
        "tools": [{"tool": "gemini-cli", "tool_version": "0.61.0", "model": "scripted"}, {"tool": "fixer", "model": "default"}],
    }))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    db = tmp_path / "e.db"
    done = benchtape("run", "eval.yaml", "--db", str(db), "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 session(s) started, 4 cell(s) measured now" in done.stdout
    compared = json.loads(benchtape("compare", "eval", "--db", str(db), "--json", cwd=tmp_path).stdout)
    outcomes = {r["label"]: r["outcomes"] for r in compared["ranked"]}
    assert outcomes == {"gemini-cli@0.61.0 scripted": {"passed": 1, "failed": 1}, "fixer@latest default": {"passed": 2}}, outcomes
    with sqlite3.connect(db) as c:
        diffs = [json.loads(d) for (d,) in c.execute("SELECT json_extract(data, '$.diff') FROM outcomes")]
        versions = dict(c.execute("SELECT s.harness, json_extract(a.data, '$.binary.version') FROM sessions s JOIN actions a ON a.session_id = s.id AND a.seq = 1").fetchall())
    assert not [p for d in diffs for p in d["paths"] if p.startswith(".gemini")]  # the CLI's own state is not the agent's change
    assert versions["gemini-cli"] == "0.61.0"
