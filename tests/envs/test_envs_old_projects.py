"""Projects of 2016–2019 that today's tools no longer build as they were written (tenacity's
history): pbr versioning, a tox `.[doc]` dep, a setup.cfg whose build setuptools now refuses,
and code that imports only on an older Python. Tried on jd/tenacity, where three valid tasks of
six were refused: pbr stopped the build without git ("Versioning for this project requires
either an sdist tarball, or access to an upstream git repository"), the fallback then built the
project again through tox's `.[doc]` and failed, and the fallback read `[project]` alone, so
`six` (setup.cfg's install_requires, pbr's requirements.txt) was missing. Each environment here is
really built (uv, PyPI), into this module's own cache."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from benchtape.envs.build import ensure_env
from benchtape.envs.detect import detect, project_dependencies
from benchtape.envs.recipe import EnvError, find_python, interpreter, pretend_variables, recipe_for
from benchtape.spec.project import EnvConfig
from benchtape.spec.project_tree import FolderTree


def _tree(root: Path, files: dict[str, str]) -> FolderTree:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return FolderTree(root)


PBR_PROJECT = {
    "setup.py": "import setuptools\n\nsetuptools.setup(setup_requires=['pbr'], pbr=True)\n",
    "setup.cfg": "[metadata]\nname = pbrdemo\nsummary = a pbr project\n\n[files]\npackages = pbrdemo\n",
    "requirements.txt": "six>=1.7.0\nfutures>=3.0;python_version=='2.7'\n",
    "pbrdemo/__init__.py": "import six\n",
    "pbrdemo/tests/test_it.py": "def test_it():\n    import pbrdemo\n",
    "tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest\n",
}

# setup.cfg for setuptools alone, pbr's `[files]` left behind: today's setuptools finds two
# top-level packages in its flat layout and refuses to build it at all
FLAT_PROJECT = {
    "setup.py": "import setuptools\n\nsetuptools.setup()\n",
    "setup.cfg": "[metadata]\nname = flatdemo\n\n[options]\ninstall_requires =\n    six>=1.9.0\n\n[options.extras_require]\ndoc =\n    iniconfig\n\n[files]\npackages = flatdemo\n",
    "flatdemo/__init__.py": "import six\n",
    "releasenotes/notes/x.yaml": "---\n",
    "releasenotes/__init__.py": "",
    "tox.ini": "[testenv]\ndeps =\n    .[doc]\n    pytest\ncommands = pytest\n",
}


def test_a_pbr_project_is_told_its_version_and_installs(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", PBR_PROJECT)
    recipe = recipe_for(tree)
    assert recipe.detection.scm == "pbr" and pretend_variables(recipe)["PBR_VERSION"] == recipe.version
    assert "PBR_VERSION" not in pretend_variables(recipe_for(_tree(tmp_path / "flat", FLAT_PROJECT)))  # read by every pbr build: only a pbr project's
    env = ensure_env(recipe, tree.root, cache=tmp_path / "cache")
    assert env.project_installed, env.notes
    assert any(d.startswith("six==") for d in env.installed) and f"pbrdemo=={recipe.version}" in env.installed, env.installed


def test_toxs_dot_extra_is_the_projects_extra_and_a_project_that_does_not_build_gets_what_it_declares(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", FLAT_PROJECT)
    det = detect(tree)
    assert det.extras == ("doc",) and det.install == ("pytest",), (det.extras, det.install)  # `.[doc]`: never a second build of the project
    assert project_dependencies(tree, det, det.extras) == ["six>=1.9.0", "iniconfig"]
    env = ensure_env(recipe_for(tree), tree.root, cache=tmp_path / "cache")
    assert not env.project_installed and any("did not install" in n and "flat-layout" in n for n in env.notes), env.notes
    names = {d.split("==")[0].lower() for d in env.installed}
    assert {"six", "iniconfig", "pytest"} <= names and "flatdemo" not in names, env.installed


def test_a_python_a_version_manager_installed_off_the_path_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyenv's shim on the PATH refuses a version not selected (`python3.10: command not found`
    with 3.10.13 installed): `env.python: "3.10"` found none and the verifier ran without an
    environment. Its versions folder is looked in too."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    real = interpreter(sys.executable)
    assert real is not None
    binary = tmp_path / "pyenv" / "versions" / f"{version}.99" / "bin" / f"python{version}"
    binary.parent.mkdir(parents=True)
    binary.symlink_to(real[0])
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no asdf, no uv installs
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_python(version) == real
    assert find_python("2.1") == (None, None)


def test_an_env_python_that_is_not_here_is_refused_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on another Python than the one asked for is no answer: the build is refused with
    where it looked and how to get it."""
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "none"))
    tree = _tree(tmp_path / "tree", FLAT_PROJECT)
    recipe = recipe_for(tree, EnvConfig(python="2.1"))
    assert recipe.python is None and not any("found on this host" in n for n in recipe.notes)
    with pytest.raises(EnvError) as refused:
        ensure_env(recipe, tree.root, cache=tmp_path / "cache")
    assert "`env.python: 2.1` names no interpreter on this host" in str(refused.value) and "pyenv install 2.1" in str(refused.value)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())



# dateutil of 2019-2021: `use_scm_version` in setup.py, the name in setup.cfg; setuptools-scm
# reads SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME> only once it knows the name, which setup.cfg
# gives too late: "unable to detect version", and the project was never installed
SCM_SETUP_CFG_NAME = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools", "wheel", "setuptools_scm"]\nbuild-backend = "setuptools.build_meta"\n',
    "setup.py": "from setuptools import setup\n\nsetup(use_scm_version={'write_to': 'scmdemo/_version.py'})\n",
    "setup.cfg": "[metadata]\nname = scm-demo\n\n[options]\npackages = scmdemo\ninstall_requires =\n    six\n",
    "scmdemo/__init__.py": "",
    "tests/test_it.py": "def test_it():\n    import scmdemo\n",
}


def test_a_setup_py_scm_version_with_its_name_in_setup_cfg_is_told_its_version(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", SCM_SETUP_CFG_NAME)
    # resolved as a commit of 2019-2021 is on Python 3.11 (setuptools-scm 7.1; today's reads setup.cfg itself)
    recipe = dataclasses.replace(recipe_for(tree), resolved_at="2023-04-24")
    assert recipe.detection.scm == "setuptools-scm" and recipe.detection.name == "scm-demo", recipe.detection
    env = ensure_env(recipe, tree.root, cache=tmp_path / "cache")
    assert env.project_installed, env.notes
    assert f"scm-demo=={recipe.version}" in env.installed, env.installed
