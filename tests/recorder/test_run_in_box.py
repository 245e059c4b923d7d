"""A setup command stopped at its marker line (the interactive probe's init line): one thread waits on it, so nothing races."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

from benchtape.app.api import load_benches
from benchtape.sandbox import local
from benchtape.sandbox.box_commands import run_in_box

DEMO = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"


def test_a_command_killed_at_its_marker_line_raises_in_no_thread_and_returns_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    scenario = load_benches([DEMO])[0].scenarios[0]
    with local.LocalLevel("home").open(scenario, None) as box:
        for _ in range(5):  # the race was a matter of timing: several rounds
            started = time.monotonic()
            ran = run_in_box(box, ["/bin/sh", "-c", "echo before; echo MARK-INIT; sleep 30"], dict(box.env), 60, until="MARK-INIT")
            assert time.monotonic() - started < 10
            assert ran.lines[:2] == ["before", "MARK-INIT"] and not ran.timed_out
    assert raised == [], f"a thread raised: {raised!r}"
