"""A module the tests import that only one of the project's own extras installs (cattrs #708:
`bson`, from its extra `bson` = pymongo): the remedy names `env.extras`, and following it
validates the task. "Name it in env.install" installed PyPI's unrelated `bson`, and the next
run blamed the Python version. Really validated: git, uv, pytest, a package from the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from repokit import git, init_repo, validate_one, write_files

PYPROJECT = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "joiner"\nversion = "0.1"\n\n[project.optional-dependencies]\ntest = ["pytest"]\nsix = ["six"]\n'
FILES = {
    "pyproject.toml": PYPROJECT,
    "joiner/__init__.py": "def join(parts):\n    return ''.join(parts)\n",
    "tests/test_join.py": "import six\n\nfrom joiner import join\n\n\ndef test_join():\n    assert join(['a', 'b']) == 'ab'\n",
}


def test_a_module_only_an_extra_provides_is_advised_as_that_extra_and_the_advice_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.spec.project import load_project

    root = init_repo(tmp_path / "joiner")
    write_files(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "joiner")
    write_files(root, {"joiner/__init__.py": "def join(parts, sep=''):\n    return sep.join(parts)\n", "tests/test_join.py": FILES["tests/test_join.py"] + "\n\ndef test_sep():\n    assert join(['a', 'b'], six.text_type('-')) == 'a-b'\n"})
    git(root, "commit", "-qam", "join takes a separator (#4)")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    report = validate_one(load_project(root), "4")
    base = report.phases["base"].judgement
    assert not report.validated and base.diagnosis == "missing_dependency" and "'six'" in base.detail, report.to_dict()
    assert "the project's own extra six provides 'six'" in base.remedy and "env: {extras: [six]}" in base.remedy, base.remedy
    (root / ".benchtape").mkdir(exist_ok=True)
    (root / ".benchtape" / "config.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nenv:\n  extras: [six]\n")
    from benchtape.spec.task import find_task, load_task
    from benchtape.store.database import Store
    from benchtape.tasks.validate import validate

    project = load_project(root)
    store = Store(root / ".benchtape" / "benchtape.db")
    try:
        [again] = validate(project, [load_task(find_task(root, "4")).id], store=store, level="home", logs=root / ".benchtape" / "validate").tasks
    finally:
        store.close()
    assert again.validated, again.to_dict()
    assert again.to_dict()["tests"]["fail_to_pass"] == ["tests.test_join::test_sep"]
