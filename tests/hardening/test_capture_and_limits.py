"""The capture file a harness writes to, read line by line with bounded memory; the limits."""

from __future__ import annotations

import os
import threading
import time

import pytest

from benchtape.core.errors import BadInput
from benchtape.core.limits import OutputBudget, OutputLimits, output_limits, parse_size
from benchtape.sandbox.capture import CaptureTail, SessionFolder


def _lines(path, max_line: int, end: int | None = None) -> list:
    tail = CaptureTail(path, max_line)
    try:
        return list(tail.lines(lambda: end if end is not None else tail.size_now()))
    finally:
        tail.close()


def test_lines_are_split_on_newlines_only_and_a_last_partial_line_is_kept(tmp_path):
    path = tmp_path / "out"
    path.write_bytes('{"a": "x\u2028y"}\r\nsecond\n\nlast-without-newline'.encode())
    got = [c.text for c in _lines(path, 1 << 20)]
    assert got == ['{"a": "x\u2028y"}', "second", "", "last-without-newline"]


def test_a_line_over_the_limit_keeps_its_head_and_tail_in_bounded_memory(tmp_path):
    path = tmp_path / "out"
    with open(path, "wb") as f:
        f.write(b"H" * 100 + b"m" * 5_000_000 + b"T" * 100 + b"\nnext\n")
    first, second = _lines(path, 1000)
    assert first.size == 5_000_200 and first.cut == 5_000_200 - 1000
    assert first.text.startswith("H" * 100) and first.text.endswith("T" * 100) and "bytes cut from this 5000200-byte line" in first.text
    assert len(first.text) < 1200
    assert (second.text, second.cut) == ("next", 0)


def test_reading_stops_where_the_harness_output_ended_and_later_bytes_are_not_read(tmp_path):
    path = tmp_path / "out"
    path.write_bytes(b"mine\nalso mine\nLATE from a leftover\n")
    assert [c.text for c in _lines(path, 100, end=len(b"mine\nalso mine\n"))] == ["mine", "also mine"]


def test_lines_arrive_as_they_are_appended(tmp_path):
    path = tmp_path / "out"
    path.write_bytes(b"")
    done: list[int] = []

    def writer() -> None:
        with open(path, "ab", buffering=0) as f:
            for i in range(50):
                f.write(f"line {i}\n".encode())
                time.sleep(0.002)
        done.append(os.path.getsize(path))

    tail = CaptureTail(path, 100)
    thread = threading.Thread(target=writer)
    thread.start()
    got = [c.text for c in tail.lines(lambda: done[0] if done else None)]
    thread.join()
    assert got == [f"line {i}" for i in range(50)]


def test_a_capture_file_truncated_under_the_reader_is_read_again_and_counted(tmp_path):
    path = tmp_path / "out"
    path.write_bytes(b"first line\n")
    tail = CaptureTail(path, 100)
    it = tail.lines(lambda: ended[0] if ended else None)
    ended: list[int] = []
    assert next(it).text == "first line"
    path.write_bytes(b"rewritten from the start\n")  # what `> /proc/PID/fd/1` does to a file
    ended.append(path.stat().st_size)
    assert [c.text for c in it] == ["rewritten from the start"]
    assert tail.rewrites == 1


def test_the_session_budget_keeps_the_first_lines_then_only_the_last(tmp_path):
    class Line:
        def __init__(self, text: str):
            self.text, self.size, self.cut = text, len(text), 0

    budget = OutputBudget(OutputLimits(session=10_000, line=4096))
    stored = [n for n in range(1, 1001) if budget.admit(n, Line(f"{n:0100d}"))]
    assert stored == list(range(1, 101)) and budget.first_over == 101
    assert [n for n, _ in budget.tail] == list(range(961, 1001))  # the limits' tail: 4096 bytes of lines
    assert budget.dropped_lines == 1000 - 100 - 40 and budget.truncated
    assert "860 line(s), 86,000 bytes, from line 101 on were not stored; its last 40 line(s) follow" in budget.note()


def test_limits_come_from_the_environment_and_bad_values_are_bad_input():
    assert output_limits({}) == OutputLimits()
    assert output_limits({"BENCHTAPE_MAX_OUTPUT": "64m", "BENCHTAPE_MAX_LINE": "1m"}) == OutputLimits(64 << 20, 1 << 20)
    assert parse_size("1.5k", "x") == 1536 and parse_size(4096, "x") == 4096
    with pytest.raises(BadInput, match="BENCHTAPE_MAX_OUTPUT 'lots' is not a size"):
        output_limits({"BENCHTAPE_MAX_OUTPUT": "lots"})
    with pytest.raises(BadInput, match="out of range"):
        output_limits({"BENCHTAPE_MAX_LINE": "2g"})


def test_a_session_folder_is_claimable_only_once_its_owner_is_dead(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    folder = SessionFolder.create()
    try:
        folder.note(session_id="S1")
        assert SessionFolder.claim(folder.path) is None  # its owner (this process) holds it
    finally:
        folder.close()
    made = subprocess.run(
        [sys.executable, "-c", "import os; from benchtape.sandbox.capture import SessionFolder; f = SessionFolder.create(); f.note(session_id='S2'); print(f.path, flush=True); os._exit(0)"],
        capture_output=True, text=True, check=True, env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    orphan = Path(made.stdout.strip())
    claimed = SessionFolder.claim(orphan)
    assert claimed is not None and claimed.facts["session_id"] == "S2"
    assert SessionFolder.claim(orphan) is None  # one claimer at a time
    claimed.close()
    assert not orphan.exists()


def test_session_json_notes_are_appended_lines_and_a_line_cut_by_a_crash_is_skipped(tmp_path, monkeypatch):
    import tempfile

    from benchtape.sandbox.capture import MANIFEST, read_manifest

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = SessionFolder.create(level="home")
    folder.note(db="/x.db", session_id="s1")
    folder.note(harness_pid=42)
    path = folder.path
    assert read_manifest(path) == folder.facts and folder.facts["session_id"] == "s1" and folder.facts["harness_pid"] == 42
    with open(path / MANIFEST, "ab") as f:
        f.write(b'{"supervisor": 7, "sess')  # killed mid-write
    assert read_manifest(path) == folder.facts
    folder.close(remove=False)
    (path / MANIFEST).write_bytes(b'{"db": "/old.db", "session_id": "s0"}')  # an older benchtape's whole-file manifest
    assert read_manifest(path) == {"db": "/old.db", "session_id": "s0"}
