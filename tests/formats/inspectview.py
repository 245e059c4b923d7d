"""The REAL `inspect view` (inspect_ai's own server, from the venv) on loopback, and its sample
list read as its front end reads it.

The viewer's front end (inspect_ai/_view/dist) lists logs with `/api/log-files`, reads each
log's header with `/api/log-headers`, and reads an `.eval` log's samples by fetching the file's
size (`/api/log-info/<file>`) and its bytes (`/api/log-bytes/<file>?start&end`), then opening
the zip for `summaries.json` (and `samples/<id>_epoch_<n>.json` for one sample). `Viewer` asks
the same endpoints, so a log it reads is a log the browser shows.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

START_LIMIT = 60.0  # seconds to wait for the server's first answer (~2-3 s on an idle machine)


class Viewer:
    def __init__(self, base: str, output: list[str]):
        self.base, self.output = base, output

    def get(self, path: str, timeout: float = 30) -> bytes:
        with urllib.request.urlopen(f"{self.base}{path}", timeout=timeout) as r:
            data: bytes = r.read()
            return data

    def json(self, path: str) -> Any:
        return json.loads(self.get(path))

    def log_files(self) -> list[dict[str, Any]]:
        """The log listing (what the viewer's left pane shows)."""
        files: list[dict[str, Any]] = self.json("/log-files")["files"]
        return files

    def headers(self, name: str) -> dict[str, Any]:
        headers: list[dict[str, Any]] = self.json(f"/log-headers?{urllib.parse.urlencode({'file': name})}")
        return headers[0]

    def _zip(self, name: str) -> zipfile.ZipFile:
        quoted = urllib.parse.quote(name, safe="")
        size = int(self.json(f"/log-info/{quoted}")["size"])
        return zipfile.ZipFile(io.BytesIO(self.get(f"/log-bytes/{quoted}?start=0&end={size - 1}")))

    def sample_summaries(self, name: str) -> list[dict[str, Any]]:
        """The log's sample list, as the front end reads it: summaries.json of the served bytes."""
        with self._zip(name) as z:
            summaries: list[dict[str, Any]] = json.loads(z.read("summaries.json"))
            return summaries

    def sample(self, name: str, sample_id: str, epoch: int = 1) -> dict[str, Any]:
        with self._zip(name) as z:
            sample: dict[str, Any] = json.loads(z.read(f"samples/{sample_id}_epoch_{epoch}.json"))
            return sample


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def inspect_view(log_dir: Path) -> Iterator[Viewer]:
    """`inspect view --log-dir LOG_DIR` on 127.0.0.1 and a free port, until it answers; stopped
    (its whole process group) and its output reader joined on the way out."""
    script = Path(sys.executable).with_name("inspect")  # the console script; its module when the venv borrows another's packages
    viewer = [str(script)] if script.exists() else [sys.executable, "-m", "inspect_ai"]
    port = _free_port()
    proc = subprocess.Popen(
        [*viewer, "view", "--log-dir", str(log_dir), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output: list[str] = []
    assert proc.stdout is not None
    stream = proc.stdout
    reader = threading.Thread(target=lambda: output.extend(line.decode(errors="replace") for line in stream), daemon=True)
    reader.start()
    server = Viewer(f"http://127.0.0.1:{port}/api", output)
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            try:
                server.get("/app-config", timeout=5)
                break
            except OSError:
                if proc.poll() is not None:
                    reader.join(timeout=5)
                    raise AssertionError(f"inspect view exited {proc.returncode} before answering:\n{''.join(output)}") from None
                if time.monotonic() > deadline:
                    raise AssertionError(f"inspect view did not answer within {START_LIMIT:.0f} s:\n{''.join(output)}") from None
                time.sleep(0.1)
        yield server
    finally:
        _stop(proc)
        reader.join(timeout=10)
        stream.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
