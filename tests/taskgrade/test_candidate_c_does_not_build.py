"""A candidate whose C does not compile fails, and its reason says so: on markupsafe #477 a
candidate with a syntax error in `_speedups.c` failed with the reason "setup step `<1.5 kB of
benchtape's own rebuild script>` exited 1", naming neither the file nor why. Really built: uv,
PyPI's setuptools, the host's C compiler."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from repokit import git, init_repo, validate_one, write_files

C_SOURCE = """#include <Python.h>

static PyObject *value(PyObject *self, PyObject *args) { return PyLong_FromLong(%d); }
static PyMethodDef methods[] = {{"value", value, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
"""
FILES = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "cext"\nversion = "0.1"\n',
    "setup.py": 'from setuptools import Extension, setup\n\nsetup(packages=["cext"], ext_modules=[Extension("cext._fast", ["cext/_fast.c"])])\n',
    "cext/__init__.py": "from cext._fast import value\n",
    "cext/_fast.c": C_SOURCE % 1,
    "tests/test_value.py": "from cext import value\n\n\ndef test_imports():\n    assert value() > 0\n",
}


def test_a_candidate_whose_c_does_not_build_fails_naming_the_binary(tmp_path: Path, monkeypatch):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this host")
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task

    root = init_repo(tmp_path / "cext")
    write_files(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cext: a fast value")
    write_files(root, {"cext/_fast.c": C_SOURCE % 2, "tests/test_value.py": FILES["tests/test_value.py"] + "\n\ndef test_two():\n    assert value() == 2\n"})
    git(root, "commit", "-qam", "The fast value is two (#7)\n\nvalue() returned 1.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    report = validate_one(project, "7")
    assert report.validated, report.to_dict()
    task = load_task(find_task(root, report.id))
    broken = (task.reference() or b"").replace(b"PyLong_FromLong(2);", b"PyLong_FromLong(2) this is no C;")
    assert broken != task.reference()
    verdict = grade_candidate(project, task, broken)
    assert verdict.outcome == "failed", (verdict.outcome, verdict.reason)
    assert "cext/_fast.cpython" in verdict.reason and "did not build" in verdict.reason, verdict.reason
    assert "import hashlib" not in verdict.reason and len(verdict.reason) < 600, verdict.reason
