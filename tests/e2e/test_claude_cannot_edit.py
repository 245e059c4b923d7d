"""A Claude Code setup that cannot edit is said so before any spend, and its cells say why.

marko's tasks through the real Claude Code (the scripted solver) ended `no_changes`, every one:
the CLI's default permission mode asks before each edit, and in --print mode nobody answers
("Claude requested permissions to write ..., but you haven't granted it yet"). The preview now
notes it with the fix (`options: {permission_mode: bypass}`), and a `no_changes` verdict whose
every edit call failed quotes the first failure."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import CALC, write

from benchtape.adapters.claude_code import edits_allowed
from benchtape.core.model import Action, project_rows
from benchtape.replay.grading import _failed_edits

BENCH = """
description: edits
harness: claude-code
harness_config: {{binary: {binary}}}
scenarios:
  - {{name: one, prompt: "fix add", testdata: calc, checks: [{{type: contains, value: fixed}}]}}
"""


def _preview(tmp_path: Path, block: str) -> dict:
    root = tmp_path / "proj"
    binary = root / "bin" / "claude"
    write(binary, "#!/bin/sh\necho '2.1.328 (Claude Code)'\n")
    binary.chmod(0o755)
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", BENCH.format(binary=binary))
    write(root / ".benchtape" / "evaluations" / "e.yaml", f"apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {block}\n")
    out = benchtape("run", "e", "--dry-run", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg"), "ANTHROPIC_API_KEY": "sk-unused-by-a-preview"})
    assert out.returncode == 0, out.stdout + out.stderr
    return orjson.loads(out.stdout)


@pytest.mark.parametrize(("block", "noted"), [("{tool: claude-code, model: sonnet-4.6}", True), ("{tool: claude-code, model: sonnet-4.6, options: {permission_mode: bypass}}", False)])
def test_the_preview_says_a_setup_that_cannot_edit_will_change_nothing(tmp_path: Path, block: str, noted: bool):
    notes = [n for n in _preview(tmp_path, block)["notes"] if "permission mode" in n]
    assert bool(notes) is noted, notes
    if noted:
        assert "no_changes" in notes[0] and "options: {permission_mode: bypass}" in notes[0]


def test_which_args_let_the_agent_edit():
    assert not edits_allowed([]) and not edits_allowed(["--permission-mode", "default"]) and not edits_allowed(["--permission-mode", "plan"])
    assert edits_allowed(["--permission-mode", "bypassPermissions"]) and edits_allowed(["--permission-mode=acceptEdits"]) and edits_allowed(["--dangerously-skip-permissions"])
    assert edits_allowed(["--allowedTools", "Read,Edit"]) and edits_allowed(["--allowed-tools", "Write(src/**)"]) and not edits_allowed(["--allowedTools", "Read Grep"])


def _session(results: list[tuple[str, bool | None, str]]):
    rows = [Action("session.started", {"harness": "claude-code", "prompt": "fix"})]
    for i, (tool, is_error, output) in enumerate(results):
        rows.append(Action("tool.call", {"call_id": f"c{i}", "tool": tool, "input": {"file_path": "a.py", "old_string": "x", "new_string": "y", "content": "y"}}))
        rows.append(Action("tool.result", {"call_id": f"c{i}", "output": output, "is_error": is_error}))
    return project_rows([(n, 0.0, "main", a.kind, a.data) for n, a in enumerate(rows, 1)])


def test_a_verdict_of_no_changes_quotes_why_every_edit_failed():
    refused = "Claude requested permissions to write to /w/a.py, but you haven't granted it yet."
    said = _failed_edits(_session([("Read", False, "x"), ("Edit", True, refused)]))
    assert said == f' (its 1 edit call(s) all failed: "{refused}")' or said == f" (its 1 edit call(s) all failed: {refused!r})", said
    assert _failed_edits(_session([("Edit", True, refused), ("Write", False, "ok")])) == ""  # one went through: the agent undid it, or wrote nothing new
    assert _failed_edits(_session([("Read", False, "x")])) == ""  # it never tried


@pytest.mark.parametrize(("config", "noted"), [("{binary: BIN}", True), ("{binary: BIN, args: [--permission-mode, bypassPermissions]}", False), ("{binary: BIN, args: [--allowedTools, 'Read,Edit']}", False)])
def test_a_bench_preflight_says_print_mode_will_refuse_every_edit(tmp_path: Path, config: str, noted: bool):
    """A madbench bench for Claude Code in print mode without a permission to edit passed
    preflight, then every Edit was refused and its file checks failed: said before any spend,
    with the fix, at the bench's harness_config line."""
    root = tmp_path / "proj"
    binary = root / "bin" / "claude"
    write(binary, "#!/bin/sh\necho '2.1.328 (Claude Code)'\n")
    binary.chmod(0o755)
    write(root / "calc" / "calc.py", CALC)
    bench = BENCH.replace("harness_config: {{binary: {binary}}}", "harness_config: " + config.replace("{", "{{").replace("}", "}}").replace("BIN", "{binary}")).replace("{{name: one,", "{{name: one, interactive: false,")
    write(root / "madbench.yaml", bench.format(binary=binary))
    out = benchtape("preflight", "madbench.yaml", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg"), "ANTHROPIC_API_KEY": "sk-unused-by-preflight"})
    said = out.stdout + out.stderr
    assert ("asks before every edit and nobody answers" in said) is noted, said
    if noted:
        assert "madbench.yaml:3" in said and "args: [--permission-mode, bypassPermissions]" in said and "'one'" in said, said
