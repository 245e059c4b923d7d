"""An evaluation's preflight asks the host once per probe, not once per setup.

`run NAME --dry-run` preflights every setup; for interactive Claude Code scenarios each asked
`claude --version` (and `tmux -V`) again, so 100 setups of one tool spent 4 s in 200
subprocesses before the preview (benchmarks/compare.py, issue 48's `run --dry-run` on 100
setups). A real `claude` stand-in on disk logs each time it is run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import CALC, write

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="interactive scenarios need tmux (.ci/run installs it)")

BENCH = """
description: probes
harness: claude-code
harness_config: {{binary: {binary}}}
scenarios:
  - {{name: one, prompt: "fix add", testdata: calc, checks: [{{type: contains, value: fixed}}]}}
  - {{name: two, prompt: "fix add again", testdata: calc, checks: [{{type: contains, value: fixed}}]}}
"""
CLAUDE = "#!/bin/sh\necho \"$@\" >> \"$CLAUDE_LOG\"\n{answer}\n"


def project(tmp_path: Path, answer: str) -> Path:
    root = tmp_path / "proj"
    binary = root / "bin" / "claude"
    write(binary, CLAUDE.format(answer=answer))
    binary.chmod(0o755)
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", BENCH.format(binary=binary))
    write(root / ".benchtape" / "evaluations" / "one.yaml", "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: low}\n")
    write(root / ".benchtape" / "evaluations" / "many.yaml", "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, opus-4.6, haiku-4.5], effort: [low, high]}\n")
    return root


def preview(root: Path, name: str) -> tuple[int, str, int]:
    """(exit code, output, how many times the binary was run)."""
    log = root / f"{name}.log"
    out = benchtape("run", name, "--dry-run", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg"), "ANTHROPIC_API_KEY": "sk-unused-by-a-preview", "CLAUDE_LOG": str(log)})
    return out.returncode, out.stdout + out.stderr, len(log.read_text().splitlines()) if log.exists() else 0


def test_six_setups_ask_the_binary_as_often_as_one(tmp_path):
    root = project(tmp_path, "echo '2.1.328 (Claude Code)'")
    code_one, _, runs_one = preview(root, "one")
    code_many, out, runs_many = preview(root, "many")
    assert code_one == code_many == 0, out
    assert len(orjson.loads(out)["setups"]) == 6
    assert 1 <= runs_one == runs_many  # the version is asked, once per probe, whatever the number of setups


def test_a_binary_that_names_no_version_still_blocks_once(tmp_path):
    """A failed probe is remembered too: the evaluation is still refused, the finding said once."""
    root = project(tmp_path, "echo 'no version here'")
    code, out, runs = preview(root, "many")
    assert code == 3, out
    assert out.count("does not say which version it is") == 1, out
    _, _, runs_one = preview(root, "one")
    assert runs == runs_one
