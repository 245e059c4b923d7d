"""A folder import is all or nothing: every file is checked before any is written, and the
refusal of one says so (the user saw one file named and thought the rest were imported)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e.cli import benchtape

from benchtape.store.database import Store

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
if not REALDATA.is_dir():
    REALDATA = Path("/work/shared/realdata")


def test_one_bad_file_in_a_folder_imports_nothing_and_says_so(tmp_path: Path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(REALDATA / "codex-rollout" / "codemie__rollout-2026-05-11T11-26-55-019e1625__cli-0.125.0.jsonl", folder / "a.jsonl")
    (folder / "b.jsonl").write_text("")
    db = tmp_path / "s.db"
    done = benchtape("import", "codex", folder, "--db", db)
    assert done.returncode == 2 and "b.jsonl" in done.stderr and "nothing was imported: each of the 2 files is checked before any is written" in done.stderr, done.stderr
    assert not db.exists() or list(Store(db, readonly=True).session_rows()) == []
    (folder / "b.jsonl").unlink()
    assert benchtape("import", "codex", folder, "--db", db).returncode == 0


CODEX_ROLLOUT = REALDATA / "codex-rollout" / "codemie__rollout-2026-05-11T11-26-55-019e1625__cli-0.125.0.jsonl"


@pytest.mark.parametrize("content", ["empty", "binary", "another harness's"])
def test_a_refused_import_creates_no_store(tmp_path: Path, content: str):
    """A refused import (exit 2) had still created an empty store file at --db."""
    transcript = tmp_path / "t.jsonl"
    if content == "another harness's":
        shutil.copy(CODEX_ROLLOUT, transcript)
    else:
        transcript.write_bytes(b"" if content == "empty" else bytes(range(256)) * 8)
    db = tmp_path / "new.db"
    done = benchtape("import", "claude-code", transcript, "--db", db)
    assert done.returncode == 2 and "t.jsonl" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not db.exists() and list(tmp_path.iterdir()) == [transcript]  # no store, no -wal or -shm beside it
