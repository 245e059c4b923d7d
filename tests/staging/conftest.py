"""Fixtures for the staging tests (the helpers live in stagekit.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from stagekit import git  # noqa: F401 - used by the fixture below


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Any]:
    """A local git repo with two commits: {path, first, second} (shas)."""
    r = tmp_path / "upstream"
    (r / "sub").mkdir(parents=True)
    git(r, "init", "-q", "-b", "main")
    (r / "a.txt").write_text("version one\n")
    (r / "sub" / "b.txt").write_text("inside sub\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "first")
    first = git(r, "rev-parse", "HEAD")
    git(r, "tag", "v1")
    (r / "a.txt").write_text("version two\n")
    (r / "later.txt").write_text("only in the second commit\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "second")
    return {"path": r, "first": first, "second": git(r, "rev-parse", "HEAD")}
