"""Tests that fail with the fix too, all with one error of this Python (backoff #65: its async
tests use `asyncio.coroutine`, gone in 3.11): they are in neither list, as before, and the
validation now names the shared error and `env.python`, where it dropped them silently.
Really validated: git, uv, pytest on this host's Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from repokit import git, init_repo, validate_one, write_files

PYPROJECT = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "retry"\nversion = "0.1"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n'
OLD_ASYNC = "".join(f"\n\ndef test_async_{n}():\n    asyncio.coroutine(lambda: None)\n" for n in range(3))
TESTS = "import asyncio\n\nfrom retry import tries\n\n\ndef test_tries():\n    assert tries(0) == 1\n" + OLD_ASYNC


def test_tests_that_fail_with_the_fix_on_one_error_of_this_python_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.spec.project import load_project

    root = init_repo(tmp_path / "retry")
    write_files(root, {"pyproject.toml": PYPROJECT, "retry/__init__.py": "def tries(n):\n    return max(n, 1)\n", "tests/test_retry.py": TESTS})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "retry")
    write_files(root, {"retry/__init__.py": "def tries(n):\n    if n < 0:\n        raise ValueError(n)\n    return max(n, 1)\n", "tests/test_retry.py": TESTS + "\n\ndef test_negative():\n    import pytest\n    with pytest.raises(ValueError):\n        tries(-1)\n"})
    git(root, "commit", "-qam", "tries refuses a negative count (#5)")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    report = validate_one(load_project(root), "5")
    assert report.validated, report.to_dict()
    assert report.to_dict()["tests"]["fail_to_pass"] == ["tests.test_retry::test_negative"]
    [note] = [n for n in report.notes if "fail with the same error" in n]
    assert note.startswith("3 of the 3 test(s) that fail with the fix too (in neither list) fail with the same error") and "coroutine" in note and "`env.python`" in note, note
