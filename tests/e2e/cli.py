"""Running the real `benchtape` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures-red" / "demo" / "bench.yaml"


def benchtape(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def popen(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env={**os.environ, "NO_COLOR": "1", **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_only(folder: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`benchtape ARGS` with `folder` (and what is in it) read-only, as a user meets it.

    A user who is not root gets the folder's mode taken away. Root writes through modes, so
    as root the folder is bind-mounted read-only in a private mount namespace (unshare -m):
    a real read-only filesystem for this one process, nobody else sees it."""
    import shutil

    import pytest

    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            return benchtape(*args, cwd=cwd)
        finally:
            folder.chmod(mode)
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: no way to make a folder read-only for root")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$PWD" && shift && exec "$@"'  # cd: re-enter the cwd through the new mount
    env = {**os.environ, "NO_COLOR": "1"}
    probe = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"root cannot make a read-only mount here: {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def on_a_full_tmpdir(folder: Path, *args: str, free_pages: int = 16) -> subprocess.CompletedProcess:
    """`benchtape ARGS` with TMPDIR a 3 MiB tmpfs at `folder` holding `free_pages` free pages,
    in a private mount namespace (unshare -m, as root): a real full disk that nobody else sees."""
    import shutil

    import pytest

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a private tmpfs needs root and unshare")
    script = 'mount -t tmpfs -o size=3m tmpfs "$1" && dd if=/dev/zero of="$1/fill" bs=4096 count="$2" 2>/dev/null; shift 2 && exec "$@"'
    env = {**os.environ, "NO_COLOR": "1", "TMPDIR": str(folder)}
    probe = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), "0", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"root cannot mount a tmpfs here: {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), str(768 - free_pages), sys.executable, "-m", "benchtape", *map(str, args)], env=env, capture_output=True, text=True, timeout=120)
