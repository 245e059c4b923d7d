"""An environment's recipe: everything that determines it, and its key.

The key is a hash of the dependency declarations' bytes (pyproject.toml, setup.py/cfg,
requirements files, tox.ini, noxfile.py, lock files) at the base commit, the Python's
major.minor, what the project config's `env:` adds, and this recipe's format. Two tasks of the
same base (or of bases whose declarations are byte-identical) share one environment; a changed
declaration builds a new one and makes the tasks bound to the old one stale. The installer (uv
or pip) is not part of it: the same recipe on a host without uv is the same environment.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchtape.envs.detect import Detection, detect, fix_requirements
from benchtape.envs.node import dependency_changes, install_digest, node_version
from benchtape.spec.project import EnvConfig
from benchtape.spec.project_tree import RECIPE_FORMAT, GitTree, Tree, declarations, environment_recipe

# How an environment is built from its recipe (envs/build.py): bumped when that changes what a
# build makes, so every cached one is built anew; keyed, never part of a task's fingerprint.
# 2: packages resolved as of the commit (resolution_date), setuptools-scm told the version of
# the project alone (pretend_variables), compiled extensions rebuildable in a verifier tree.
# 3: the venv's packages compiled to bytecode when installed (uv's --compile-bytecode).
# 4: pbr told its version; tox's `.[extra]` read as the project's extras, not a second build of it.
# 5: setuptools-scm told the version by the plain variable when the per-distribution one went unread.
BUILD_FORMAT = 5
PRETEND_VERSION = "0.0.0"  # when the base commit has no release tag before it (or the tree is a plain folder)
# An export has no .git: every VCS-versioning backend is told the version instead of asking git.
PRETEND_VARIABLES = (
    "SETUPTOOLS_SCM_PRETEND_VERSION",  # setuptools-scm, hatch-vcs (it is setuptools-scm underneath)
    "PDM_BUILD_SCM_VERSION",  # pdm-backend's scm source
    "POETRY_DYNAMIC_VERSIONING_BYPASS",  # poetry-dynamic-versioning
    "VERSIONINGIT_VERSION_OVERRIDE",
)
# pbr's is read by every package pbr builds, and it has no per-distribution form: set only for a
# pbr project, whose build otherwise stops (tenacity's of 2016: "Versioning for this project
# requires either an sdist tarball, or access to an upstream git repository")
PBR_VARIABLE = "PBR_VERSION"


def pretend_variables(recipe: Recipe) -> dict[str, str]:
    """The variables that tell the project's build its version. setuptools-scm's is the one for
    the project's own distribution (`SETUPTOOLS_SCM_PRETEND_VERSION_FOR_INFLECT`): the plain one
    reaches every package built from source in the same install, and pytest-black 0.3.12 (an
    sdist, versioned by setuptools-scm) then called itself inflect's 6.0.4, and uv refused the
    whole install for its inconsistent metadata."""
    out = dict.fromkeys(PRETEND_VARIABLES, recipe.version)
    if recipe.detection.scm == "pbr":
        out[PBR_VARIABLE] = recipe.version
    name = recipe.detection.name
    if name and recipe.detection.scm == "setuptools-scm":  # hatch-vcs names no distribution to setuptools-scm: it reads the plain one only
        del out["SETUPTOOLS_SCM_PRETEND_VERSION"]
        out["SETUPTOOLS_SCM_PRETEND_VERSION_FOR_" + re.sub(r"[-_.]+", "_", name).upper()] = recipe.version
    return out


class EnvError(Exception):
    """The environment could not be made: the message says what failed and the fix."""


@dataclass(frozen=True)
class Recipe:
    detection: Detection
    config: EnvConfig
    python: str | None  # the interpreter to build with (None: none found, or not a Python project)
    python_version: str | None  # its major.minor
    declarations: tuple[tuple[str, str], ...] = ()  # (path, sha256 of its bytes)
    environment: str = ""  # spec.project_tree.environment_recipe: what a task's fingerprint binds
    notes: tuple[str, ...] = field(default_factory=tuple)
    version: str = PRETEND_VERSION  # what a VCS-versioned build is told it is: the base commit's newest release tag (project_tree.GitTree.release); recorded, not keyed (a tag changes no declaration)
    node: str | None = None  # a Node project's node version (its node_modules is bound to it)
    added: tuple[str, ...] = ()  # requirements the task's fix commit declares that the base does not (detect.fix_requirements): installed too, and keyed
    overrides: tuple[str, ...] = ()  # requirements installed in place of what the project declares (uv's --override): the fix's raised bounds, then `env.overrides`; keyed
    overlay: tuple[tuple[str, bytes], ...] = ()  # a Node project's package.json and lock file as the task's fix commit has them, when it changes the dependencies: installed from, and keyed
    resolved_at: str | None = None  # YYYY-MM-DD: a Python project's packages resolved as published by then (resolution_date), keyed

    @property
    def buildable(self) -> bool:
        """Whether there is an environment to build: a venv (a Python project, an interpreter)
        or a node_modules (a Node project whose manager benchtape installs, with node and npm
        here); `env.build` on."""
        det = self.detection
        if not self.config.build:
            return False
        if det.language == "node":
            return det.unbuilt is None and det.toolchain is not None and self.node is not None
        return det.language == "python" and self.python is not None

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.config.package,) if self.config.package else self.detection.packages

    def requirements(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.detection.requirements, *self.config.requirements]))

    def key(self) -> str:
        """The cache's key: the environment recipe on this interpreter (a venv is bound to its
        interpreter's path; the task fingerprint binds `environment`, which is host-independent)."""
        doc: dict[str, Any] = {"format": RECIPE_FORMAT, "build": BUILD_FORMAT, "environment": self.environment, "python": self.python_version, "interpreter": self.python, "language": self.detection.language}
        if self.detection.language == "node":  # package.json and its lock file are no Python declaration: keyed here
            doc.update(node=self.node, declarations=dict(self.declarations), manager=[self.detection.manager, self.detection.manager_version])
        if self.added:  # only then: every other recipe keeps the key it had
            doc["added"] = list(self.added)
        if self.overrides:
            doc["overrides"] = list(self.overrides)
        if self.resolved_at:
            doc["resolved_at"] = self.resolved_at
        if self.overlay:
            doc["overlay"] = {path: hashlib.sha256(data).hexdigest() for path, data in self.overlay}
        return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """What a validation or a graded cell records about the environment it ran in."""
        return {"key": self.key(), "recipe": self.environment, "python": self.python_version, **({"node": self.node} if self.detection.language == "node" else {}), "version": self.version, "detected": self.detection.to_dict(), "env": self.config.bound(), "declarations": dict(self.declarations), **({"added": list(self.added)} if self.added else {}), **({"overrides": list(self.overrides)} if self.overrides else {}), **({"from_fix": [path for path, _ in self.overlay]} if self.overlay else {})}


def recipe_for(tree: Tree, config: EnvConfig | None = None, *, python: str | None = None, fix: Tree | None = None) -> Recipe:
    """The recipe of the tree (a base commit's, or a folder) under the project's `env:`.
    `python`: the interpreter to build with instead of the project's (a container's: the base
    image holds this host's system Python at the same path). `fix`: the task's fix commit, whose
    newly declared requirements are installed too, and its raised bounds in place of the base's
    (detect.fix_requirements)."""
    config = config or EnvConfig()
    detection = detect(tree)
    notes: list[str] = []
    declared = declarations(tree, config.requirements)
    notes += [f"`env.requirements` names {p}, which is not in the tree at this commit" for p in config.requirements if p not in declared]
    wanted = python or config.python
    python, version = (None, None)
    if detection.language == "python" and config.build:
        python, version = find_python(wanted)
        if python is None and not wanted:  # one asked for and missing is refused when the environment is built (ensure_env)
            notes.append("no Python 3 found on this host: the verifier runs without a project environment")
    node = None
    if detection.language == "node":
        python_only = [f"env.{k}" for k in ("python", "extras", "groups", "install", "overrides") if getattr(config, k)]
        if python_only:
            notes.append(f"`{'`, `'.join(python_only)}` apply to Python projects and change nothing here: a Node project's dependencies are its package.json's and lock file's (`env.exclude` leaves one out; `env.variables` and `env.setup` apply)")
        node = node_version()
        for path in detection.declarations:  # package.json and its lock file
            data = tree.read(path)
            if data is not None:
                declared[path] = install_digest(path, data)
        if config.build and detection.unbuilt is None and (node is None or detection.toolchain is None):
            notes.append("no node and npm on this host: the Node dependencies are not installed, the verifier runs the toolchain as it is")
    release = tree.release() if detection.scm and isinstance(tree, GitTree) else None
    added, raised = fix_requirements(tree, fix) if fix is not None and config.build else ((), ())
    if added:
        notes.append(f"the fix declares requirements its base does not, installed too: {', '.join(added)}")
    if raised:
        notes.append(f"the fix changes the bounds of requirements its base declares, installed as the fix declares them: {', '.join(raised)}")
    overrides = tuple(dict.fromkeys([*raised, *config.overrides]))
    overlay: tuple[tuple[str, bytes], ...] = ()
    changed = dependency_changes(tree, fix, detection.lock) if fix is not None and config.build and detection.language == "node" else []
    if fix is not None and changed:
        overlay = tuple((path, data) for path in ("package.json", *([detection.lock] if detection.lock else [])) for data in [fix.read(path)] if data is not None)
        notes.append(f"the fix changes the Node dependencies, installed as it declares them: {', '.join(changed)}")
    resolved_at = resolution_date(fix if fix is not None else tree, version) if detection.language == "python" and config.resolve == "commit" else None
    if resolved_at:
        notes.append(f"packages resolved as published before {resolved_at} (`env.resolve: commit`, the default: the month of the {'fix' if fix is not None else 'commit'}, or when Python {version or '3'} was established if later), not today's")
    return Recipe(detection, config, python, version, tuple(sorted(declared.items())), environment_recipe(tree, config.bound()), tuple(notes), release or PRETEND_VERSION, node, added, overrides, overlay, resolved_at)


# When each Python was established: its release, and six months for the packages to catch up
# (pytest 7.2 came a week after 3.11; wheels of C extensions, plugins and pins took months).
ESTABLISHED = {"3.8": "2020-04-14", "3.9": "2021-04-05", "3.10": "2022-04-04", "3.11": "2023-04-24", "3.12": "2024-04-02", "3.13": "2025-04-07", "3.14": "2026-04-07"}


def resolution_date(tree: Tree, python_version: str | None) -> str | None:
    """The date a commit's Python packages are resolved as of (`uv pip install --exclude-newer`):
    the end of the commit's month, so a task's environment is what the project tested with then, not
    today's releases (inflect's tests of 2023 read `pydantic.typing.Annotated`, gone from the
    pydantic 2 that today's resolution picked, and its pytest-flake8 and pytest-black no longer
    load under pytest 9); never before the interpreter was established, or the tools of an older
    commit would predate this Python (pytest 6.2 does not import on 3.11). None for a folder."""
    committed = tree.committed() if isinstance(tree, GitTree) else None
    if committed is None:
        return None
    import datetime

    made = datetime.datetime.fromtimestamp(committed, datetime.UTC).date()
    month_after = (made.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)  # the commits of a month share one environment
    floor = ESTABLISHED.get(python_version or "")
    if floor is None and _newer_than_known(python_version):
        return None  # a Python newer than this table: when it was established is not known here, so today's releases
    return max(month_after.isoformat(), floor) if floor else month_after.isoformat()


def _newer_than_known(version: str | None) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split(".") if x.isdigit())

    return version is not None and parts(version) > max(parts(v) for v in ESTABLISHED)


def find_python(wanted: str | None) -> tuple[str | None, str | None]:
    """(the interpreter's path, its major.minor) for `env.python` (a version like 3.12, or a path); python3 by default."""
    if wanted and ("/" in wanted):
        candidates = [wanted]
    elif wanted and re.fullmatch(r"\d+(?:\.\d+)*", wanted):
        candidates = [f"python{wanted}", *_installed_pythons(wanted)]
    elif wanted:
        candidates = [wanted]
    else:
        candidates = ["python3", "python"]
    for name in candidates:
        exe = shutil.which(name) if "/" not in name else (name if Path(name).is_file() else None)
        if exe:
            found = interpreter(exe)
            if found:
                return found
    return None, None


def _installed_pythons(version: str) -> list[str]:
    """The interpreters of `version` that version managers installed off the PATH, newest patch
    first: pyenv's (whose shim on the PATH refuses a version not selected: `python3.10` failed
    where 3.10.13 was installed), asdf's, uv's own, the system's."""
    home = Path.home()
    folders = [Path(os.environ.get("PYENV_ROOT") or home / ".pyenv") / "versions", home / ".asdf" / "installs" / "python", Path(os.environ.get("UV_PYTHON_INSTALL_DIR") or home / ".local" / "share" / "uv" / "python")]
    found: list[Path] = []
    for folder in folders:
        found += [p / "bin" / f"python{version}" for p in folder.glob(f"*{version}*") if re.fullmatch(rf"(?:cpython-)?{re.escape(version)}(?:\.\d+)?(?:-.*)?", p.name)]
    found.sort(key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.parent.name)], reverse=True)
    return [str(p) for p in found if p.is_file()] + [f"{d}/python{version}" for d in ("/usr/bin", "/usr/local/bin") if Path(f"{d}/python{version}").is_file()]


@functools.lru_cache(maxsize=16)
def interpreter(exe: str) -> tuple[str, str] | None:
    """(the real executable behind `exe`, a shim's or a venv's, and its major.minor). A venv's
    `python3` is its base interpreter's: the project's environment is built on that either way,
    and keyed by it the cache holds one environment, not one per venv that was first on PATH
    when it was built (tomli's tasks were each built twice, with benchtape's venv active and not)."""
    ask = "import os, sys; print('%d.%d' % sys.version_info[:2]); print(os.path.realpath(getattr(sys, '_base_executable', None) or sys.executable))"
    try:
        done = subprocess.run([exe, "-c", ask], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2 or not lines[1].strip():
        return None
    return lines[1].strip(), lines[0].strip()
