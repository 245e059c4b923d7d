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


@pytest.mark.docker  # its static variant also grades in benchtape's base image, which has no compiler
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
    if versioning == "static":  # benchtape's base image has no compiler: a candidate's C cannot be tested there, which is no verdict on it
        from benchtape.sandbox.container import available

        assert available()[0], available()[1]
        there = grade_candidate(project, task, task.reference() or b"", level="container")
        assert there.outcome == "infrastructure_error" and "no C compiler at level container" in there.reason, (there.outcome, there.reason)
        from benchtape.app.tasks import export_harbor

        [exported] = export_harbor(project, [task_id], tmp_path / "harbor")  # its verifier would stop there too: said at the export, before a harbor run scores the oracle 0
        assert "changes compiled sources (cext/_fast.c)" in exported.dependencies and "no C compiler" in exported.dependencies, exported.dependencies


def test_a_changed_native_source_is_told_by_its_content_and_a_binary_not_rebuilt_fails_the_run(tmp_path: Path):
    """markupsafe's setup.py falls back to pure Python when nothing compiles and exits 0: the
    base's binary must not be tested, nor the tests run without it (they skip its C, and a
    comment added to _speedups.c passed under Harbor). And a tree whose times were cut to the
    second (Harbor's verifier receives one so) still tells a changed source by its content: by
    mtimes, markupsafe #109's exported C fix was never rebuilt there."""
    import json
    import os
    import subprocess
    import sys

    from benchtape.envs.build import REBUILD, native_sources, no_compiler, not_rebuilt

    tree = tmp_path / "tree"
    write_files(tree, {"pkg/_fast.c": "int x;\n", "pkg/_fast.cpython-311-x86_64-linux-gnu.so": "base binary", "setup.py": "print('no compiler: pure Python it is')\n"})
    binary = tree / "pkg" / "_fast.cpython-311-x86_64-linux-gnu.so"
    built = native_sources(tree)
    assert built == {"pkg/_fast.c": native_sources(tree, ["pkg/_fast.c"])["pkg/_fast.c"]}

    def run(env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", REBUILD, "setup.py", json.dumps(built), "pkg/_fast.cpython-311-x86_64-linux-gnu.so"], cwd=tree, capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})

    for path in tree.rglob("*"):  # every time cut to the second, the sources' and the binary's alike
        whole = int(path.stat().st_mtime)
        os.utime(path, (whole, whole))
    untouched = run()
    assert untouched.returncode == 0 and untouched.stdout == "" and binary.exists()  # no native source changed: nothing built
    (tree / "pkg" / "_fast.c").write_text("int x = 2;\n")  # a patch changed it, in the same second
    os.utime(tree / "pkg" / "_fast.c", (int(binary.stat().st_mtime),) * 2)
    left = run()
    assert left.returncode == 1 and binary.read_text() == "base binary", left.stdout  # the build exited 0 and left the base's binary: the run fails
    assert not_rebuilt(f"$ python -c '{REBUILD}'\n" + left.stdout) == ["pkg/_fast.cpython-311-x86_64-linux-gnu.so"] and not no_compiler(left.stdout)  # the line, never the script's text
    bare = run({"CC": "benchtape-no-such-compiler"})
    assert bare.returncode == 3 and no_compiler(bare.stdout) and "no C compiler here (benchtape-no-such-compiler)" in bare.stdout, bare.stdout
