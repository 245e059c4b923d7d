"""The REAL Harbor 0.25 (PyPI `harbor`), which needs Python 3.12, from a venv of its own:
BENCHTAPE_HARBOR names its `harbor` script, else `.benchtape/venvs/harbor` under the checkout
(`make receivers` makes it; `.ci/run` does). A test that needs it skips naming what is missing,
and fails instead under CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def harbor_script() -> Path:
    given = os.environ.get("BENCHTAPE_HARBOR")
    script = Path(given) if given else ROOT / ".benchtape" / "venvs" / "harbor" / "bin" / "harbor"
    if not script.is_file():
        why = f"Harbor 0.25 is not installed at {script} (it needs Python 3.12: `make receivers` installs it in a venv of its own; or set BENCHTAPE_HARBOR)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return script


def harbor(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "HARBOR_TELEMETRY": "0", "DO_NOT_TRACK": "1"}
    return subprocess.run([str(harbor_script()), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def compose_v2() -> str | None:
    """Why Harbor's Docker environment cannot run here (None when it can): it drives `docker compose` (v2)."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    done = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if done.returncode != 0:
        return "the `docker compose` v2 plugin is missing (Debian bookworm and PyPI ship only docker-compose 1.29, which Harbor does not drive)"
    return None
