"""Stores for the viewer's tests and screenshots, recorded for real: the mock agent as a process
through `benchtape run`, an evaluation over the mock harness, a regrade with a changed check.

Each function writes a project folder and returns what a test needs of it; every session in
them was recorded by the real CLI, nothing is inserted by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
from evalkit import CALC, MOCK_BENCH, MOCK_EVALUATION

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures-red" / "demo" / "bench.yaml"
HOSTILE = "<script>window.__xss = 1; alert('xss')</script>"
HOSTILE_IMG = '<img src="x" onerror="window.__xss = 2; alert(2)">'


def _j(text: str) -> str:
    """A string as YAML reads it back exactly (JSON is YAML's flow syntax)."""
    return orjson.dumps(text).decode()


# a session with a subagent (nested, with its own tool calls), thinking, an error result and a
# planted script in its prompt and in a tool's result
RICH = f"""
description: the viewer's rich session
harness: mock
defaults: {{sandbox: home, interactive: false, timeout: 60s}}
scenarios:
  - name: delegates
    prompt: {_j("Fix calc.py; then tell me " + HOSTILE)}
    testdata: calc
    checks:
      - {{type: exec, args: {{cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}}}
      - {{type: contains, value: "fixed"}}
    mock:
      steps:
        - {{think: "Look around first, with a helper."}}
        - subagent:
            agent: Explore
            prompt: "find the bug in calc.py"
            steps:
              - {{tool: Read, input: {{file_path: calc.py}}}}
              - {{tool: Grep, input: {{pattern: "return", path: "."}}}}
              - {{say: "add() subtracts"}}
        - {{tool: Edit, input: {{file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}}}
        - {{tool: WebFetch, input: {{url: "http://example.invalid/"}}, result: {_j(HOSTILE_IMG + " " + HOSTILE)}, is_error: true}}
        - {{tool: Bash, input: {{command: "python3 -c 'import calc; print(calc.add(2, 3))'"}}}}
        - {{say: "fixed: add() adds now"}}
      metrics: {{cost_usd: 0.02, tokens_in: 1500, tokens_out: 300}}
"""

# a run that takes its time: a test watches its sessions appear and finish
SLOW = """
description: a slow bench, watched live
harness: mock
defaults: {sandbox: workspace, interactive: false, timeout: 60s}
scenarios:
"""
SLOW_SCENARIO = """  - name: slow-{n}
    prompt: "wait, then answer"
    checks: [{{type: contains, value: done}}]
    mock: {{steps: [{{say: "thinking it over"}}, {{sleep: {sleep}}}, {{say: "done {n}"}}]}}
"""

def env(project: Path) -> dict[str, str]:
    """A user config folder of the project's own: nothing of the machine's leaks in."""
    return {**os.environ, "NO_COLOR": "1", "XDG_CONFIG_HOME": str(project / "xdg")}


def benchtape(*args: object, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env=env(cwd), capture_output=True, text=True, timeout=timeout, check=False)


def popen(*args: object, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env=env(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def ok(done: subprocess.CompletedProcess, *codes: int) -> subprocess.CompletedProcess:
    assert done.returncode in (codes or (0,)), f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@dataclass
class Project:
    root: Path

    @property
    def db(self) -> Path:
        return self.root / ".benchtape" / "benchtape.db"

    def cli(self, *args: object, timeout: float = 180) -> subprocess.CompletedProcess:
        return benchtape(*args, cwd=self.root, timeout=timeout)

    def json(self, *args: object) -> object:
        return orjson.loads(ok(self.cli(*args, "--json")).stdout)


def rich(root: Path) -> Project:
    """The demo run, then a session with a subagent, thinking, an errored tool call and scripts
    planted in its prompt and a tool's result."""
    p = Project(root)
    write(root / "calc" / "calc.py", CALC)
    ok(p.cli("demo", "--db", p.db))
    ok(p.cli("run", write(root / "rich.yaml", RICH), "--db", p.db, "--plain"), 0, 1)
    return p


def evaluation(root: Path) -> Project:
    """An evaluation of two setups (the scripted mock and the no-op) over three tasks, two
    attempts each; then a regrade with one check changed (two verdicts flip)."""
    p = Project(root)
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", MOCK_BENCH)
    write(root / ".benchtape" / "evaluations" / "base.yaml", MOCK_EVALUATION)
    ok(p.cli("run", "base", "--yes"))
    changed = write(root / "changed.yaml", MOCK_BENCH.replace('{type: contains, value: "calc"}', '{type: contains, value: "subtracts"}'))
    ok(p.cli("regrade", "--bench", changed, "--all", "--db", p.db))
    return p


def slow_bench(root: Path, scenarios: int = 3, sleep: float = 1.5) -> Path:
    return write(root / "slow.yaml", SLOW + "".join(SLOW_SCENARIO.format(n=n, sleep=sleep) for n in range(1, scenarios + 1)))


@contextmanager
def serving(project: Project) -> Iterator[str]:
    """The viewer over the project's store (from the project folder, as `benchtape view` run there): its base URL."""
    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    with running(Viewer(project.db, project.root)) as base:
        yield base
