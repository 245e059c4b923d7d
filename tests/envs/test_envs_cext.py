"""A project with a compiled extension (markupsafe's `_speedups.c` shape): the environment's
build compiles it from the base's sources, and each verifier tree gets a copy of that binary.
A fix in C (markupsafe #109, a NULL check in `_speedups.c`) was then tested against the base's
binary: its reference segfaulted as the base did, and a candidate's C was never compiled. Now
the verifier rebuilds, after the patches, the extensions whose sources a patch changed, and
only those. Really built: uv, PyPI's setuptools, the host's C compiler."""

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


SCM_PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61", "setuptools-scm>=8"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "cext"\ndynamic = ["version"]\n\n[tool.setuptools_scm]\n'
)


@pytest.mark.parametrize("versioning", ["static", "setuptools-scm"])
def test_a_fix_in_c_is_compiled_in_the_verifiers_tree_and_graded_as_written(tmp_path: Path, monkeypatch, versioning: str):
    """With setuptools-scm too: the rebuild runs setup.py in a tree without .git, told the
    version the build was told, or setuptools-scm stops it ("unable to detect version")."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this host")
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task

    root = init_repo(tmp_path / "cext")
    write_files(root, {**FILES, **({"pyproject.toml": SCM_PYPROJECT} if versioning == "setuptools-scm" else {})})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cext: a fast value")
    git(root, "tag", "v1.0.0")
    write_files(root, {"cext/_fast.c": C_SOURCE % 2, "tests/test_value.py": FILES["tests/test_value.py"] + "\n\ndef test_two():\n    assert value() == 2\n"})
    git(root, "commit", "-qam", "The fast value is two (#7)\n\nvalue() returned 1.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    report = validate_one(project, "7")
    task_id = report.id
    assert report.validated, report.to_dict()  # the reference's C compiled: before, it ran the base's binary and failed
    assert any("rebuilt in each verifier tree" in n for n in report.notes), report.notes
    task = load_task(find_task(root, task_id))
    assert task.validation is not None and list(task.validation.fail_to_pass) == ["tests.test_value::test_two"]
    assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"
    three = (task.reference() or b"").replace(b"PyLong_FromLong(2)", b"PyLong_FromLong(3)")
    assert three != task.reference() and grade_candidate(project, task, three).outcome == "failed"  # the candidate's own C is what runs


def test_a_binary_the_rebuild_could_not_replace_is_removed_and_named(tmp_path: Path):
    """markupsafe's setup.py falls back to pure Python when nothing compiles (a container
    without a compiler) and exits 0: the base's binary must not stay to be tested."""
    import os
    import subprocess
    import sys
    import time

    from benchtape.envs.build import REBUILD, not_rebuilt

    tree = tmp_path / "tree"
    write_files(tree, {"pkg/_fast.c": "int x;\n", "pkg/_fast.cpython-311-x86_64-linux-gnu.so": "base binary", "setup.py": "print('no compiler: pure Python it is')\n"})
    binary = tree / "pkg" / "_fast.cpython-311-x86_64-linux-gnu.so"
    old = time.time() - 60
    os.utime(tree / "pkg" / "_fast.c", (old, old))  # the sources as exported, then the binary copied in after them
    run = lambda: subprocess.run([sys.executable, "-c", REBUILD, "setup.py", "pkg/_fast.cpython-311-x86_64-linux-gnu.so"], cwd=tree, capture_output=True, text=True, timeout=60)  # noqa: E731
    untouched = run()
    assert untouched.returncode == 0 and binary.exists() and "no compiler" not in untouched.stdout  # no native source changed: nothing built
    (tree / "pkg" / "_fast.c").write_text("int x = 2;\n")  # a patch changed it
    done = run()
    assert done.returncode == 0 and "no compiler" in done.stdout and not binary.exists()
    assert not_rebuilt(f"$ python -c '{REBUILD}'\n" + done.stdout) == ["pkg/_fast.cpython-311-x86_64-linux-gnu.so"]  # the line, never the script's text
