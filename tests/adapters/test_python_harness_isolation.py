"""A Python harness (aider, mini-swe-agent) given a history task's project environment starts
isolated from the project's PYTHONPATH, which the commands it runs still get: a project under
test named like one of the harness's own dependencies (jsonschema is aider's) would otherwise be
imported by the harness itself from the task's workspace. Played with the real command_agent
process and a real script whose first line names its interpreter, as pip writes them; the
workspace's package here shadows the standard library's `json`, which the harness imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchtape.adapters.base import Launch

HARNESS = f"""#!{sys.executable}
import json, subprocess, sys
print("harness json:", "shadow" if getattr(json, "SHADOW", False) else "stdlib", flush=True)
child = subprocess.run([sys.executable, "-c", "import json; print(getattr(json, 'SHADOW', False))"], capture_output=True, text=True)
print("child json:", "shadow" if child.stdout.strip() == "True" else "stdlib", flush=True)
"""


def _run(tmp_path: Path, *, python_harness: bool) -> list[str]:
    script = tmp_path / "harness"
    script.write_text(HARNESS)
    script.chmod(0o755)
    shadow = tmp_path / "workspace" / "json"
    shadow.mkdir(parents=True, exist_ok=True)
    (shadow / "__init__.py").write_text("SHADOW = True\n")
    job = {"argv": [str(script)], "env": {}, "prompt": "p", "cwd": str(tmp_path), "root": str(tmp_path), "timeout": 60, "stdin": False, "python_harness": python_harness}
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "workspace")}
    helper = Launch(prompt="p", work_dir=tmp_path, root=tmp_path).helper("command_agent.py")  # as every harness starts it: isolated itself
    done = subprocess.run(helper, input=json.dumps(job).encode(), env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    return [d["out"] for d in lines if "out" in d]


def test_a_python_harness_runs_isolated_and_its_commands_keep_the_projects_path(tmp_path: Path):
    assert _run(tmp_path, python_harness=True) == ["harness json: stdlib", "child json: shadow"]


def test_any_other_command_runs_as_it_is(tmp_path: Path):
    assert _run(tmp_path, python_harness=False) == ["harness json: shadow", "child json: shadow"]
