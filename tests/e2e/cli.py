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


def popen(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env={**os.environ, "NO_COLOR": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
