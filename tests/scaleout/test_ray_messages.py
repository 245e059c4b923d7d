"""Ray's driver-side messages go to the file a run names while benchtape drives the cluster, and
everything is put back when it stops (recorder/ray_messages.py): a lost raylet's `[state-dump]`
lines had landed in the run's table and before `--json`'s document."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from benchtape.recorder.ray_messages import RayMessages  # noqa: E402


def test_the_cluster_s_words_go_to_the_file_and_come_back_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    import ray._private.worker as worker

    original = worker.print_to_stdstream
    messages = RayMessages(ray, tmp_path / "run.ray.log")
    try:
        worker.print_to_stdstream({"lines": ["[state-dump] NodeManager:", "node lost"], "pid": "raylet", "is_err": False}, ignore_prefix=False)
        logging.getLogger("ray").warning("a warning of Ray's")
    finally:
        messages.close()
    assert capsys.readouterr().out == ""
    text = (tmp_path / "run.ray.log").read_text()
    assert "(raylet) [state-dump] NodeManager:" in text and "(raylet) node lost" in text and "a warning of Ray's" in text
    assert worker.print_to_stdstream is original and logging.getLogger("ray").handlers != [messages._handler]
