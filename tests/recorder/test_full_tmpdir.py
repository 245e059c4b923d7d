"""A full temporary folder: `benchtape run` says where and what to do (exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.cli import DEMO, on_a_full_tmpdir


@pytest.mark.parametrize("free_pages", [2, 6, 16])  # the room runs out in a session's folder, its copy of the testdata, or the results spool
def test_a_full_tmpdir_is_exit_2_naming_it_and_the_fix(tmp_path: Path, free_pages: int) -> None:
    """TMPDIR on a full filesystem ended the run in `OSError: [Errno 28] No space left on device`
    (from replay/report.py's results spool, or a session folder's files, or shutil.Error from its copy)."""
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    done = on_a_full_tmpdir(tiny, "run", DEMO, "--db", tmp_path / "t.db", free_pages=free_pages)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {tiny}: no room to write " in done.stderr and "No space left on device" in done.stderr
    assert f"fix: free space in {tiny}, or point TMPDIR at a folder on a filesystem with room" in done.stderr
