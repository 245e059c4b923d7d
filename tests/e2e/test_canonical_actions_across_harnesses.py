"""The newcomer's case (issue 34): a bench whose session checks name canonical actions
(`action:read`, `action:edit`, `action:shell`) grades the real Claude Code and the real Codex
alike for the same scripted behaviour (read calc.py, edit it, run the tests), though Claude
calls Read/Edit/Bash and Codex runs `cat` and apply_patch as command_execution/file_change;
the same bench in Claude Code's native names is warned of before any spend."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from cli import ROOT, benchtape

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realagents import TOOLS, need  # noqa: E402

SCRIPTED = ROOT / "fixtures-red" / "scripted"
pytestmark = pytest.mark.xdist_group("real-claude")


def test_canonical_checks_give_claude_code_and_codex_the_same_verdicts(tmp_path):
    need("claude-code")
    need("codex")
    env = {"BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    db = tmp_path / "cells.db"
    checked = benchtape("evaluation", "validate", SCRIPTED / "claude-vs-codex-canonical.yaml", cwd=tmp_path, env=env)
    assert checked.returncode == 0 and "warning:" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    out = benchtape("run", SCRIPTED / "claude-vs-codex-canonical.yaml", "--db", db, "--yes", cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT s.harness, v.type, v.pass, v.reason FROM verdicts v JOIN sessions s ON s.id = v.session_id ORDER BY v.check_path").fetchall()
        calls = c.execute("SELECT s.harness, c.tool, c.action FROM calls c JOIN sessions s ON s.id = c.session_id ORDER BY c.seq").fetchall()
    by_harness: dict[str, dict[str, tuple[int, str]]] = {}
    for harness, type_, passed, reason in rows:
        by_harness.setdefault(harness, {})[type_] = (passed, reason)
    assert set(by_harness) == {"claude-code", "codex"}
    # every check passes for both: the same verdicts, though the tools differ
    for harness, verdicts in by_harness.items():
        assert {t: p for t, (p, _) in verdicts.items()} == dict.fromkeys(verdicts, 1), (harness, verdicts)
    assert set(by_harness["claude-code"]) == set(by_harness["codex"]) >= {"session:tool-sequence", "session:file-read", "session:tools-only", "session:tool-used", "session:tool-args-match"}
    tools = {h: [(t, a) for hh, t, a in calls if hh == h] for h in by_harness}
    assert ("Read", "read") in tools["claude-code"] and ("Edit", "edit") in tools["claude-code"]
    assert ("command_execution", "read") in tools["codex"] and ("file_change", "edit") in tools["codex"] and ("command_execution", "shell") in tools["codex"]


def test_native_names_are_warned_of_in_validate_and_dry_run(tmp_path):
    evaluation = SCRIPTED / "claude-vs-codex-native.yaml"
    env = {"BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    checked = benchtape("evaluation", "validate", evaluation, cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    said = checked.stderr
    assert "native-tasks.yaml:11: session:tool-sequence names the tool 'Edit', which setup codex@0.169.0 scripted (codex) never emits" in said, said
    assert "write 'action:edit'" in said and "write 'action:read'" in said and "write 'action:shell'" in said
    assert "claude-code@2.1.328" not in said  # Claude Code emits every name the checks use
    need("claude-code")
    need("codex")
    dry = benchtape("run", evaluation, "--dry-run", "--db", tmp_path / "d.db", cwd=tmp_path, env=env)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "session:tools-only names the tool 'Read', which setup codex@0.169.0 scripted (codex) never emits" in dry.stdout + dry.stderr
    pre = benchtape("preflight", SCRIPTED / "native-tasks.yaml", "--harness", "codex", cwd=tmp_path, env=env)
    assert "native-tasks.yaml:14: session:tool-used names the tool 'Edit', which harness codex never emits, so it can never match there; write 'action:edit'" in pre.stdout + pre.stderr
    assert "never emits" not in benchtape("preflight", SCRIPTED / "native-tasks.yaml", "--harness", "claude-code", cwd=tmp_path, env=env).stdout
    assert not (tmp_path / "d.db").exists() or not sqlite3.connect(tmp_path / "d.db").execute("SELECT name FROM sqlite_master WHERE name = 'sessions'").fetchall()


def test_an_outcome_claude_code_never_records_is_warned_of_before_the_run(tmp_path):
    """Claude Code records no outcome for a good Read, Grep or Glob (madbench's rule: unknown is
    neither ok nor error): `action:read` counted with `outcome: ok` is ERROR there where those
    calls could change the verdict, so preflight says so before any spend; Codex records them."""
    bench = tmp_path / "b.yaml"
    bench.write_text("description: outcomes\nscenarios:\n  - name: s\n    prompt: read it\n    checks:\n      - {type: session:tool-used, value: 'action:read', args: {outcome: ok}}\n      - {type: session:tool-used, value: 'action:read'}\n")
    env = {"BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    said = benchtape("preflight", bench, "--harness", "claude-code", cwd=tmp_path, env=env)
    out = said.stdout + said.stderr
    assert "b.yaml:6: session:tool-used counts 'action:read' calls with outcome ok" in out and "count attempts (drop `outcome:`)" in out, out
    assert out.count("with outcome ok") == 1  # the check without `outcome:` is not warned of
    codex = benchtape("preflight", bench, "--harness", "codex", cwd=tmp_path, env=env)
    assert "with outcome ok" not in codex.stdout + codex.stderr


def test_an_action_a_harness_never_performs_is_warned_of_and_advice_never_promises_it(tmp_path):
    """A newcomer followed the advice "write 'action:edit' to match every harness", and
    `action:edit` still failed under mini-swe-agent, whose edits are shell commands (`python3 -
    <<EOF`: action:shell); aider never reads or runs anything. Before any spend, a check on an
    action the harness never performs is named, and the advice names where its spelling cannot
    match either."""
    bench = tmp_path / "b.yaml"
    bench.write_text(
        "description: actions\nscenarios:\n  - name: s\n    prompt: fix it\n    checks:\n"
        "      - {type: session:tool-used, value: 'action:edit'}\n"
        "      - {type: session:tool-used, value: 'action:shell'}\n"
        "      - {type: session:tool-used, value: Edit}\n"
    )
    mini = benchtape("preflight", bench, "--harness", "mini-swe-agent", cwd=tmp_path)
    said = mini.stdout + mini.stderr
    assert "session:tool-used names 'action:edit', an action harness mini-swe-agent never performs: its calls only ever read as action:read, action:search, action:shell" in said, said
    assert "'action:shell', an action" not in said  # it does run commands
    assert "write 'action:edit' to match every harness but aider" not in said  # aider edits
    assert "write 'action:edit' to match every harness but mini-swe-agent (whose calls never read as action:edit)" in said, said
    aider = benchtape("preflight", bench, "--harness", "aider", cwd=tmp_path)
    assert "names 'action:shell', an action harness aider never performs" in aider.stdout + aider.stderr
    claude = benchtape("preflight", bench, "--harness", "claude-code", cwd=tmp_path)
    assert "never performs" not in claude.stdout + claude.stderr and "never emits" not in claude.stdout + claude.stderr
