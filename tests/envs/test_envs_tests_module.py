"""A project whose tests live in one module named tests.py (itsdangerous, a Django app): pytest
collects it only when named, so the task's verify command names it (its folder, `pytest -q .`,
collected nothing and every such task was tests_not_collected), and the base's whole suite,
whose discovery finds none of its tests, is said and left out rather than read as a baseline
of nothing. Really validated: git, uv, pytest from the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from repokit import git, init_repo, validate_one, write_files

PYPROJECT = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "doubler"\nversion = "0.1"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n\n[tool.pytest.ini_options]\n'
FILES = {
    "pyproject.toml": PYPROJECT,
    "doubler/__init__.py": "def double(x):\n    return x + x\n",
    "tests.py": "from doubler import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
}


def test_a_tests_module_is_named_to_pytest_and_a_suite_that_finds_none_of_it_is_no_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.spec.project import load_project

    root = init_repo(tmp_path / "doubler")
    write_files(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "doubler")
    write_files(root, {"doubler/__init__.py": "def double(x, times=2):\n    return x * times\n", "tests.py": FILES["tests.py"] + "\n\ndef test_times():\n    assert double(2, times=3) == 6\n"})
    git(root, "commit", "-qam", "double takes how many times (#7)")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    report = validate_one(load_project(root), "7")
    done = report.to_dict()
    assert report.validated and done["tests"]["fail_to_pass"] == ["tests::test_times"] and done["tests"]["pass_to_pass"] == 1, done
    assert any("whole suite" in n and "ran no test" in n and "its baseline is not used" in n for n in report.notes), report.notes
