"""`benchtape tools install|list`: pinned agent CLIs in the project's tools folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from realagents import TOOLS, need


def benchtape(*args: str, tools: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHTAPE_TOOLS": str(tools)}
    return subprocess.run([sys.executable, "-m", "benchtape", *args], env=env, capture_output=True, text=True, timeout=600)


def test_list_names_each_harness_its_recipe_and_the_installed_versions() -> None:
    need("gemini-cli")
    rows = {r["harness"]: r for r in json.loads(benchtape("tools", "list", "--json", tools=TOOLS).stdout)}
    assert {"claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "mini-swe-agent", "aider", "command", "mock", "oracle"} <= set(rows)
    gemini = rows["gemini-cli"]
    assert gemini["install"] == {"package": "@google/gemini-cli", "version": "0.61.0", "kind": "npm"}
    found = {i["version"]: i for i in gemini["installed"]}
    assert found["0.61.0"]["verified"] and Path(found["0.61.0"]["path"]).name == "gemini"
    assert rows["aider"]["install"]["kind"] == "pypi" and "install" not in rows["command"]


def test_an_unknown_tool_and_a_version_the_registry_lacks_are_refused_leaving_nothing(tmp_path: Path) -> None:
    done = benchtape("tools", "install", "nope", tools=tmp_path)
    assert done.returncode == 2 and "no pinned binary for harness 'nope'" in done.stderr and "gemini-cli" in done.stderr
    done = benchtape("tools", "install", "mini-swe-agent@0.0.1.999", tools=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "could not install mini-swe-agent==0.0.1.999" in done.stderr and "pip index versions mini-swe-agent" in done.stderr
    assert not (tmp_path / "mini-swe-agent").exists()  # nothing half-written, not even the tool's folder
    done = benchtape("tools", "install", "codex@9.9.9", tools=tmp_path)  # npm's: not even the tool's folder is left
    assert done.returncode == 2 and "npm could not install @openai/codex@9.9.9" in done.stderr, done.stdout + done.stderr
    assert not (tmp_path / "codex").exists(), list((tmp_path / "codex").rglob("*"))
