"""What a failed session keeps of its harness's stderr: the head with the tail, so a CLI that
names the argument it refused and then prints its whole usage keeps the reason."""

from __future__ import annotations

from pathlib import Path

from benchtape.sandbox.capture import stderr_tail


def test_a_long_stderr_keeps_its_first_lines_and_its_end(tmp_path: Path):
    path = tmp_path / "stderr"
    path.write_text("Unknown argument: no-such-flag\n" + "  --option  what it does\n" * 400 + "exit now\n")
    kept = stderr_tail(path, 1000)
    assert kept.startswith("Unknown argument: no-such-flag\n") and kept.endswith("exit now\n")
    assert "bytes …]" in kept and len(kept) < 1100


def test_a_short_stderr_is_kept_whole(tmp_path: Path):
    path = tmp_path / "stderr"
    path.write_text("fatal: no key\n")
    assert stderr_tail(path, 1000) == "fatal: no key\n"
    assert stderr_tail(tmp_path / "missing", 1000) == ""
