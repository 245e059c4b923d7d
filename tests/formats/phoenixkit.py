"""The REAL Arize Phoenix (`phoenix serve`, from PyPI's arize-phoenix) on loopback: an OTLP/HTTP
receiver whose REST API gives back the spans it stored, with their attributes and events.

Phoenix needs its own Python (it pins packages benchtape's venv does not want), so it lives in
a venv of its own: BENCHTAPE_PHOENIX names its `phoenix` script, else `.benchtape/venvs/phoenix`
under the checkout (`make phoenix` makes it; `.ci/run` does). Its telemetry and every request
it would make to the internet on its own are turned off; it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_LIMIT = 240.0  # seconds: its first start migrates a new SQLite database (~60 s on a busy 2-core machine)


def phoenix_script() -> Path:
    """The `phoenix` script, or a skip naming what is missing (a failure under CI=true)."""
    given = os.environ.get("BENCHTAPE_PHOENIX")
    script = Path(given) if given else ROOT / ".benchtape" / "venvs" / "phoenix" / "bin" / "phoenix"
    if not script.is_file():
        why = f"Arize Phoenix is not installed at {script} (`make phoenix` installs it in a venv of its own; or set BENCHTAPE_PHOENIX to a `phoenix` script)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return script


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Phoenix:
    def __init__(self, base: str, log: Path):
        self.base, self.log = base, log

    def get(self, path: str, **query: Any) -> Any:
        url = f"{self.base}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.loads(r.read())

    def spans(self, project: str, want: int, limit: float = 60.0) -> list[dict[str, Any]]:
        """The project's spans, once it holds `want` (Phoenix stores what it receives in batches)."""
        deadline = time.monotonic() + limit
        while True:
            found: list[dict[str, Any]] = []
            try:
                cursor = None
                while True:
                    page = self.get(f"/v1/projects/{urllib.parse.quote(project)}/spans", limit=500, **({"cursor": cursor} if cursor else {}))
                    found += page["data"]
                    cursor = page.get("next_cursor")
                    if not cursor:
                        break
            except urllib.error.HTTPError as exc:
                if exc.code != 404:  # the project appears with its first stored span
                    raise
            if len(found) >= want or time.monotonic() > deadline:
                return found
            time.sleep(0.5)


@contextmanager
def phoenix(workdir: Path) -> Iterator[Phoenix]:
    script = phoenix_script()
    port, grpc = _free_port(), _free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "phoenix.log"
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    with log.open("wb") as out:
        proc = subprocess.Popen([str(script), "serve"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    server = Phoenix(f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            try:
                with urllib.request.urlopen(f"{server.base}/healthz", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError(f"phoenix serve exited {proc.returncode} before answering:\n{log.read_text(errors='replace')[-3000:]}") from None
                if time.monotonic() > deadline:
                    raise AssertionError(f"phoenix serve did not answer within {START_LIMIT:.0f} s:\n{log.read_text(errors='replace')[-3000:]}") from None
                time.sleep(0.5)
        yield server
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
