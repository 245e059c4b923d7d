"""A base whose test takes the memory (marko #261: an unnormalized line break looped appending
without end): pytest's test failed with MemoryError at the box's cap, then pytest itself raised
MemoryError on its way out, before its summary, from its own frames. That read as a runner that
cannot start (`runner_broken`: "set env.python"), and the task was refused; it is the bug
reproduced. And the whole suite at the base, which holds the same test, ran to the cap again
(seven minutes on marko, for no baseline). Really validated: git, uv, pytest, the box's cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from repokit import git, init_repo, validate_one, write_files

LOOP = "def split(text):\n    parts = []\n    while text:\n        parts.append(text[:100000] * 10)\n{fix}    return parts\n"
FILES = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "grow"\nversion = "0.1"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n',
    "grow/__init__.py": LOOP.format(fix=""),
    "tests/test_other.py": "def test_other():\n    assert True\n",
    "tests/test_split.py": "from grow import split\n\n\ndef test_empty():\n    assert split('') == []\n",
}


def test_a_base_that_takes_the_memory_is_a_reproduction_and_its_suite_is_not_run_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.spec.project import load_project

    root = init_repo(tmp_path / "grow")
    write_files(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "grow: split")
    write_files(root, {"grow/__init__.py": LOOP.format(fix="        text = text[100000:]\n"), "tests/test_split.py": FILES["tests/test_split.py"] + "\n\ndef test_text():\n    assert len(split('ab')) == 1\n"})
    git(root, "commit", "-qam", "split ends on any text (#9)\n\nsplit() never consumed its input.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setenv("BENCHTAPE_MAX_BOX_MEMORY", "768m")
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    report = validate_one(load_project(root), "9")
    doc = report.to_dict()
    assert report.validated, doc
    base = doc["phases"]["base"]
    assert base["held"] and "ran out of memory" in base["detail"] and "fails as a whole" in base["detail"], base
    assert "base.suite" not in doc["phases"], doc["phases"].keys()  # the suite holds the same test: never run to the cap again
    assert any("the whole suite was not run at the base" in n and "ended its runner" in n for n in report.notes), report.notes
    assert "tests.test_split::test_text" in doc["tests"]["fail_to_pass"], doc["tests"]
