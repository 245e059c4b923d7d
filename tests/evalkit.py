"""A project folder for evaluation tests: a bench with red-state testdata, overlays that add
the spec's model names (sonnet-5, opus-5, gpt-5.6-terra), and an isolated user config dir."""

from __future__ import annotations

import textwrap
from pathlib import Path

BENCH = """
description: evaluation test bench
harness: mock
scenarios:
  - name: fix-add
    prompt: "make add() return the sum"
    testdata: calc
    checks:
      - {type: exec, args: {cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}
  - name: fix-sub
    prompt: "make sub() return the difference"
    testdata: calc
    checks:
      - {type: exec, args: {cmd: [python3, -c, "import calc; assert calc.sub(5, 3) == 2"]}}
  - name: explain
    prompt: "say what calc does"
    testdata: calc
    checks:
      - {type: contains, value: "calc"}
"""

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n"

# The same bench with scripted agents (the mock harness really edits) and an evaluation of the
# scripted mock against the no-op one over it: what an end-to-end evaluation runs.
MOCK_BENCH = """
description: evaluation e2e
harness: mock
defaults: {sandbox: home, interactive: false, timeout: 30s}
scenarios:
  - name: fix-add
    prompt: "make add() return the sum"
    testdata: calc
    checks:
      - {type: exec, args: {cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}
    mock: {steps: [{tool: Edit, input: {file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}, {say: done}]}
  - name: fix-sub
    prompt: "make sub() return the difference"
    testdata: calc
    checks:
      - {type: exec, args: {cmd: [python3, -c, "import calc; assert calc.sub(5, 3) == 2"]}}
    mock: {steps: [{tool: Edit, input: {file_path: calc.py, old_string: "return a + b", new_string: "return a * b"}}, {say: done}]}
  - name: explain
    prompt: "say what calc does"
    testdata: calc
    checks:
      - {type: contains, value: "calc"}
    mock: {steps: [{say: "calc adds and subtracts"}]}
"""
MOCK_EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
attempts: 2
tools:
  - tool: mock
    model: [scripted, noop]
"""

CLAUDE_OVERLAY = """
apiVersion: bench.ber.run/v1alpha1
kind: Tool
tool: claude-code
extends: builtin
models:
  sonnet-5: {id: claude-sonnet-5, effort: [low, medium, high]}
  opus-5: {id: claude-opus-5, effort: [low, medium, high, max]}
"""

CODEX_OVERLAY = """
apiVersion: bench.ber.run/v1alpha1
kind: Tool
tool: codex
extends: builtin
models:
  gpt-5.6-terra: {id: gpt-5.6-terra, effort: [low, medium, high]}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def make_project(root: Path, bench: str = BENCH, overlays: bool = True) -> Path:
    """The project folder: madbench.yaml, calc/ testdata, .benchtape/tools overlays."""
    write(root / "madbench.yaml", bench)
    write(root / "calc" / "calc.py", CALC)
    if overlays:
        write(root / ".benchtape" / "tools" / "claude-code.yaml", CLAUDE_OVERLAY)
        write(root / ".benchtape" / "tools" / "codex.yaml", CODEX_OVERLAY)
    return root


def evaluation(root: Path, name: str, body: str, api: str = "bench.ber.run/v1alpha1") -> Path:
    """Write .benchtape/evaluations/NAME.yaml (header added)."""
    text = f"apiVersion: {api}\nkind: Evaluation\n" + textwrap.dedent(body).lstrip()
    path = root / ".benchtape" / "evaluations" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
