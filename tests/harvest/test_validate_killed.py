"""A `kill -9` of `task validate` mid-phase: its scratch folder (the exported base, each phase's
copies) is a locked folder naming no store, so `benchtape recover` (or any run's start, or the
next validation's) removes it and says what it was; before, it stayed in the temp dir for good.
Really killed: a real `benchtape task validate` process group, real git, uv and pytest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from repokit import git, init_repo, write_files

from benchtape.sandbox.capture import read_manifest, session_folders

SLOW = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
FILES = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "slowpkg"\nversion = "0.1"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n',
    "slowpkg/__init__.py": "def double(x):\n    return x + x\n",
    "tests/test_slow.py": SLOW,
}


def _benchtape(*args: str, cwd: Path, env: dict[str, str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtape", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_a_killed_validation_leaves_nothing_recover_cannot_remove(tmp_path: Path):
    from benchtape.spec.project import load_project
    from benchtape.tasks.create import create_task

    root = init_repo(tmp_path / "slowpkg")
    write_files(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "slowpkg")
    write_files(root, {"slowpkg/__init__.py": "def double(x):\n    return 2 * x\n", "tests/test_double.py": "from slowpkg import double\n\n\ndef test_double():\n    assert double(3) == 6\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "double multiplies (#9)")
    task_id = create_task(load_project(root), "9").id
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "BENCHTAPE_ENV_CACHE": str(tmp_path / "env-cache")}

    proc = _benchtape("task", "validate", task_id, "--sandbox", "home", cwd=root, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        scratch = None
        while scratch is None and time.monotonic() < deadline and proc.poll() is None:
            scratch = next((f for f in session_folders(temp) if (f / "export").is_dir()), None)
            time.sleep(0.2)
        assert scratch is not None, proc.communicate()[0] if proc.poll() is not None else "no scratch folder in 300 s"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert scratch.is_dir() and read_manifest(scratch)["purpose"] == f"task validate {task_id}"

    recovered = _benchtape("recover", cwd=root, env=env)
    out = recovered.communicate(timeout=120)[0]
    assert recovered.returncode == 0, out
    assert f"removed {scratch} (the scratch folder of `task validate {task_id}`, killed before it ended)" in out, out
    assert not scratch.exists() and session_folders(temp) == []
