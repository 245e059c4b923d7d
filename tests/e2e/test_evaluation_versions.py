"""Tool versions in an evaluation: `latest` is resolved through npm before anything runs, the
preview says what would be installed, a run installs it only with consent (into benchtape's
version-keyed folder), and the resolved version is part of what each cell recorded.

npm is the stand-in of tests/npmkit.py (the registry is not reachable from tests); what it
installs is a program that reports its version, standing in for Claude Code.
"""

from __future__ import annotations

import sqlite3

import orjson
from cli import benchtape
from evalkit import write
from npmkit import fake_npm

BENCH = """
description: versions
defaults: {sandbox: home, interactive: false, timeout: 30s}
scenarios:
  - name: say
    prompt: "say hi"
    checks: [{type: contains, value: "hi"}]
    mock: {steps: [{say: hi}]}
"""
EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
tools:
  - tool: claude-code
    tool_version: latest
    model: scripted
  - tool: mock
    model: scripted
"""


def test_latest_resolves_through_npm_and_installs_only_with_consent(tmp_path, monkeypatch):
    fake_npm(tmp_path, monkeypatch)
    project = tmp_path / "proj"
    write(project / "madbench.yaml", BENCH)
    write(project / ".benchtape" / "evaluations" / "v.yaml", EVALUATION)
    tools = tmp_path / "tools"
    env = {"BENCHTAPE_TOOLS": str(tools), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

    preview = benchtape("run", "v", "--dry-run", cwd=project, env=env)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    folder = tools / "claude-code" / "2.1.999"
    assert f"tool claude-code latest → 2.1.999 (npm's latest; not installed: would install into {folder})" in preview.stdout
    assert "tool mock latest → 0.1.0 (benchtape's own; built in)" in preview.stdout
    assert f"would install claude-code 2.1.999 into {folder}" in preview.stdout
    assert not tools.exists()

    refused = benchtape("run", "v", cwd=project, env=env)
    assert refused.returncode == 2 and "and install tools" in refused.stderr
    assert not tools.exists()

    done = benchtape("run", "v", "--yes", cwd=project, env=env)
    assert (folder / "node_modules" / ".bin" / "claude").is_file(), done.stdout + done.stderr
    assert "2 session(s) started" in done.stdout
    with sqlite3.connect(project / ".benchtape" / "benchtape.db") as c:
        started = {h: orjson.loads(d) for h, d in c.execute("SELECT s.harness, a.data FROM sessions s JOIN actions a ON a.session_id = s.id AND a.seq = 1")}
    assert started["claude-code"]["cell"]["versions"] == {"claude-code": "2.1.999"}
    assert started["claude-code"]["binary"] == {"path": str(folder / "node_modules" / ".bin" / "claude"), "version": "2.1.999"}
    assert started["mock"]["cell"]["versions"] == {"mock": "0.1.0"}
    assert "not the version benchtape was verified with (2.1.328)" in done.stderr + done.stdout

    again = benchtape("run", "v", "--dry-run", "--json", cwd=project, env=env)
    doc = orjson.loads(again.stdout)
    assert doc["installs"] == []  # installed once, found since
    assert [line for line in doc["versions"] if line.startswith("claude-code")] == [f"claude-code latest → 2.1.999 (npm's latest; {folder / 'node_modules' / '.bin' / 'claude'})"]


def test_latest_without_npm_stops_before_anything_runs(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    write(project / "madbench.yaml", BENCH)
    write(project / ".benchtape" / "evaluations" / "v.yaml", EVALUATION)
    fake_npm(tmp_path, monkeypatch)
    out = benchtape("run", "v", "--dry-run", cwd=project, env={"NPM_FAILS": "1", "BENCHTAPE_TOOLS": str(tmp_path / "tools")})
    assert out.returncode == 3, out.stdout + out.stderr
    assert "claude-code: cannot resolve `latest`" in out.stderr and 'tool_version: "2.1.328"' in out.stderr
    assert not (project / ".benchtape" / "benchtape.db").exists()
    pinned = EVALUATION.replace("tool_version: latest", 'tool_version: "2.1.328"')
    write(project / ".benchtape" / "evaluations" / "v.yaml", pinned)
    out = benchtape("run", "v", "--dry-run", cwd=project, env={"NPM_FAILS": "1", "BENCHTAPE_TOOLS": str(tmp_path / "tools")})
    assert out.returncode == 0 and "claude-code 2.1.328 → 2.1.328 (pinned; not installed" in out.stdout  # a pin needs no registry


def test_a_pinned_version_the_registry_lacks_stops_the_preview(tmp_path, monkeypatch):
    """`tool_version: "9.9.9"` was "would install codex 9.9.9" in the preview, exit 0, and failed
    only at the install `--yes` started; the registry is asked before, and says no such version."""
    project = tmp_path / "proj"
    write(project / "madbench.yaml", BENCH)
    write(project / ".benchtape" / "evaluations" / "v.yaml", EVALUATION.replace("tool_version: latest", 'tool_version: "9.9.9"'))
    fake_npm(tmp_path, monkeypatch)
    out = benchtape("run", "v", "--dry-run", cwd=project, env={"BENCHTAPE_TOOLS": str(tmp_path / "tools")})
    assert out.returncode == 3, out.stdout + out.stderr
    assert "claude-code: tool_version 9.9.9 is no version the npm registry has of @anthropic-ai/claude-code" in out.stderr and "npm view @anthropic-ai/claude-code versions" in out.stderr
    assert not (tmp_path / "tools").exists() and not (project / ".benchtape" / "benchtape.db").exists()


def test_latest_of_a_pypi_tool_is_the_release_benchtape_pins_and_asks_npm_nothing(tmp_path, monkeypatch):
    """aider and mini-swe-agent come from PyPI: `latest` is the release benchtape pins (no
    registry is asked), and the preview says so (it said "npm's latest")."""
    from benchtape.tools.binaries import pins

    project = tmp_path / "proj"
    write(project / "madbench.yaml", BENCH)
    write(project / ".benchtape" / "evaluations" / "v.yaml", EVALUATION.replace("claude-code", "aider").replace("    tool_version: latest\n", ""))
    fake_npm(tmp_path, monkeypatch)
    out = benchtape("run", "v", "--dry-run", cwd=project, env={"NPM_FAILS": "1", "BENCHTAPE_TOOLS": str(tmp_path / "tools")})
    assert out.returncode == 0, out.stdout + out.stderr
    version = pins()["aider"].version
    assert f"tool aider latest → {version} (the PyPI release benchtape pins; not installed" in out.stdout and "npm" not in out.stdout
    assert f"would install aider {version} into {tmp_path / 'tools' / 'aider' / version} (pip into a venv, this folder only)" in out.stdout


def test_a_tool_still_to_install_is_checked_for_its_key_before_the_install(tmp_path, monkeypatch):
    """A real model with no key: the preview stopped on it only once the tool was installed, so
    `--yes` spent the install's minutes first. Everything but the binary is checked before."""
    fake_npm(tmp_path, monkeypatch)
    project = tmp_path / "proj"
    write(project / "madbench.yaml", BENCH)
    write(project / ".benchtape" / "evaluations" / "v.yaml", EVALUATION.replace("    model: scripted\n  - tool: mock", "    model: sonnet-4.6\n  - tool: mock", 1))
    tools = tmp_path / "tools"
    env = {"BENCHTAPE_TOOLS": str(tools), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "ANTHROPIC_API_KEY": "", "HOME": str(tmp_path / "home")}
    for argv in (["--dry-run"], ["--yes"]):
        out = benchtape("run", "v", *argv, cwd=project, env=env)
        assert out.returncode == 3 and "claude-code: no way to authenticate" in out.stderr, out.stdout + out.stderr
        assert "is not on PATH" not in out.stderr  # installed before the run: not a finding
    assert not tools.exists()  # nothing installed
