"""While a run records, a thread woken by the harness's exit gets the GIL within SWITCH_INTERVAL;
the process's own interval is back when the run returns, whatever way it ends."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from benchtape.api import load_benches, run_benches
from recorder import runner
from recorder.runner import RunOptions
from recorder.store import Store

DEMO = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"


def test_a_run_hands_the_gil_over_within_its_interval_and_puts_the_process_interval_back(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = sys.getswitchinterval()
    seen: list[float] = []

    def on_event(kind: str, data: dict) -> None:
        if kind == "session.started":
            seen.append(sys.getswitchinterval())

    outcome = run_benches(load_benches([DEMO]), Store(tmp_path / "x.db"), RunOptions(repeat=2, concurrency=1, scenarios=["fixes-the-bug"]), on_event=on_event)
    outcome.close()
    assert seen and all(s <= runner.SWITCH_INTERVAL for s in seen)
    assert sys.getswitchinterval() == before


def test_a_run_that_fails_puts_the_process_interval_back_too(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = sys.getswitchinterval()

    def boom(self, *args, **kwargs):
        raise RuntimeError("a session could not start")

    monkeypatch.setattr(runner.Runner, "_one", boom)
    with pytest.raises(RuntimeError):
        run_benches(load_benches([DEMO]), Store(tmp_path / "x.db"), RunOptions(repeat=1, concurrency=1, scenarios=["fixes-the-bug"]))
    assert sys.getswitchinterval() == before
