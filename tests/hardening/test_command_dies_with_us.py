"""A command benchtape runs dies with it: killed (SIGKILL, or SIGTERM, whose default ends Python
at once), benchtape runs no `finally`, so the command's group was never killed. A `task
validate` killed while its base hung (tomlkit #470: a parser that loops for ever) left that
pytest spinning for good, reparented to init. Each command now gets SIGKILL when the thread that
started it dies, and a fenced one takes its whole PID namespace with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from benchtape.core.command_runner import _setpriv


def _running(marker: str) -> list[int]:
    """Processes whose command line holds `spinning-<marker>`: the command, never its starter."""
    marker = "spinning-" + marker
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


STARTER = """
import sys
from benchtape.core.command_runner import run_local
from benchtape.sandbox.pidfence import fence
argv = [sys.executable, "-c", "import time; time.sleep(300)", "spinning-" + sys.argv[1]]
if sys.argv[2] == "fenced":
    argv = fence().wrap(argv)
print("started", flush=True)
run_local(argv, "/tmp", timeout=600, file_limit=1 << 30 if sys.argv[3] == "limited" else None)
"""


@pytest.mark.parametrize(("fenced", "limited", "sig"), [("fenced", "plain", signal.SIGKILL), ("plain", "limited", signal.SIGKILL), ("fenced", "limited", signal.SIGTERM)])
def test_a_command_dies_with_the_benchtape_that_started_it(fenced: str, limited: str, sig: int):
    if _setpriv() is None:
        pytest.skip("no util-linux setpriv with --pdeathsig here")
    marker = f"benchtape-orphan-{uuid.uuid4().hex}"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, marker, fenced, limited], stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None and starter.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not _running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _running(marker), "the command never started"
        starter.send_signal(sig)
        starter.wait(30)
        deadline = time.monotonic() + 10
        while _running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(marker), f"the command outlived its starter: {_running(marker)}"
    finally:
        starter.kill()
        for pid in _running(marker):
            os.kill(pid, signal.SIGKILL)
