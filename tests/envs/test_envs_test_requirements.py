"""Where a Python project keeps its tests' dependencies, beside the places every project uses:
a requirements file in the tests' own folder (tomli's tests/requirements.txt, whatever its
name) and tox's `[testenv]` written into pyproject.toml as `[tool.tox] legacy_tox_ini` (tomli's
until 2024). Both were missed ("test dependencies: none declared"), and a valid tomli task
failed with `missing_dependency: dateutil`."""

from __future__ import annotations

from pathlib import Path

from benchtape.envs.detect import detect
from benchtape.spec.project_tree import FolderTree

SETUP = '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n[project]\nname = "tomli"\nversion = "1.0"\n'


def _tree(root: Path, files: dict[str, str]) -> FolderTree:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return FolderTree(root)


def test_a_requirements_file_in_the_tests_folder_is_the_tests(tmp_path: Path) -> None:
    det = detect(_tree(tmp_path, {"pyproject.toml": SETUP, "tomli/__init__.py": "", "tests/requirements.txt": "pytest\npython-dateutil\n", "tests/test_x.py": ""}))
    assert det.requirements == ("tests/requirements.txt",) and det.test_deps_from == "tests/requirements.txt"


def test_tox_in_pyproject_as_legacy_tox_ini_gives_its_deps(tmp_path: Path) -> None:
    legacy = '[tool.tox]\nlegacy_tox_ini = """\n[tox]\nenvlist = py39\n\n[testenv]\ndeps =\n    -r requirements/test.lock\n    python-dateutil\n    py39: something-for-39-only\ncommands = pytest\n"""\n'
    det = detect(_tree(tmp_path, {"pyproject.toml": SETUP + legacy, "tomli/__init__.py": ""}))
    assert det.install == ("python-dateutil",) and det.requirements == ("requirements/test.lock",)
    assert det.test_deps_from == "pyproject.toml ([tool.tox] legacy_tox_ini)"


def test_a_project_that_names_its_test_requirements_keeps_them_first(tmp_path: Path) -> None:
    det = detect(_tree(tmp_path, {"pyproject.toml": SETUP, "tomli/__init__.py": "", "requirements-test.txt": "pytest\n", "tests/requirements.txt": "other\n"}))
    assert det.requirements == ("requirements-test.txt",)


def test_a_venvs_interpreter_is_its_base_so_the_cache_holds_one_environment(tmp_path: Path) -> None:
    """With benchtape's (or any) venv first on PATH, `python3` is the venv's: the project's
    environment was keyed by that path and built again for the same interpreter without it."""
    import subprocess
    import sys

    from benchtape.envs.recipe import interpreter

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    inside, base = interpreter(str(tmp_path / "venv" / "bin" / "python3")), interpreter(sys.executable)
    assert inside is not None and inside == base and "venv" not in inside[0]
