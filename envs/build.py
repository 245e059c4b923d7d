"""Build (or reuse) a project's environment: a venv with the tree installed, cached by recipe.

Built once per recipe key (envs/recipe.py) under the cache (`BENCHTAPE_ENV_CACHE`, else
`~/.cache/benchtape/envs/`), with the network, on this host: a copy of the base tree, a venv of
the recipe's Python, then one install: the tree editable with its test extras
(`-e 'tree[tests]'`), its dependency groups, requirements files and further specifiers, and
pytest when nothing declared it; a pretend version for VCS-versioned backends. `uv` when it is
installed (it is one of benchtape's dependencies), pip otherwise. When the project itself does
not build, its declared dependencies are installed without it and the environment says so.

The verifier never runs in the copy: each phase's fresh tree comes first on PYTHONPATH (its
import roots: `src/` or the top), so the code under test is the tree's own, while the venv
holds the dependencies, the project's metadata, and what the build generated (hatch-vcs's
`_version.py`: copied into each fresh tree that lacks it). A second task of the same recipe finds
`manifest.json` and reuses the venv (a cache hit reads one small file). A lock file serialises
two builders of one key; a half-built folder (a killed build) is removed and built again.
Each use is stamped and held until the process exits (envs/cache.py: what `task envs --prune` reads).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson

from benchtape.core.errors import BenchtapeError
from benchtape.core.filelock import locked
from benchtape.envs.cache import MANIFEST, hold, stamp
from benchtape.envs.detect import distribution, project_dependencies
from benchtape.envs.host_env import build_host_env
from benchtape.envs.node import build_modules, describe, install_argv, installed, leave_out, link_modules, link_npm, modules_digest, node_folder
from benchtape.envs.recipe import EnvError, Recipe, pretend_variables
from benchtape.spec.project_tree import FolderTree

BUILD_TIMEOUT = 1200.0
EXTENSION = re.compile(r"\.(?:so|pyd)$")  # a compiled extension module (cpython-311-x86_64-linux-gnu.so, abi3.so, .pyd)
NOT_GENERATED = re.compile(r"(?:^|/)(?:__pycache__|[^/]*\.egg-info|\.eggs|build|dist|\.pytest_cache)(?:/|$)|\.py[co]$")
Progress = Callable[[str], None]


def default_cache() -> Path:
    explicit = os.environ.get("BENCHTAPE_ENV_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchtape" / "envs"


@dataclass
class ProjectEnv:
    """A built environment (or none: `folder` None, the host's tools as they are)."""

    recipe: Recipe
    folder: Path | None = None
    installer: str | None = None
    project_installed: bool = False
    generated: tuple[str, ...] = ()
    installed: tuple[str, ...] = ()  # name==version of every distribution in the venv
    built: bool = False  # made by this call (False: a cache hit, or no environment)
    modules_digest: str | None = None  # a Node project's node_modules as built (envs/node.py modules_digest)
    rebuild_with: str | None = None  # how a verifier tree's compiled extensions are rebuilt: `setup.py`, `-` (setuptools' setup()), None: never (_extension_rebuild)
    native: dict[str, str] = field(default_factory=dict)  # path → sha256 of each native source as the build compiled it (REBUILD compares)
    scripts: tuple[str, ...] = ()  # command-line scripts written for a project that did not install (_console_scripts)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def venv(self) -> Path | None:
        """A Python project's venv (None: no environment, or a Node project's)."""
        return self.folder / "venv" if self.folder is not None and self.recipe.detection.language == "python" else None

    @property
    def node_modules(self) -> bool:
        """A Node project's installed dependencies: `generated` names its node_modules folders."""
        return self.folder is not None and self.recipe.detection.language == "node"

    @property
    def packages(self) -> tuple[str, ...]:
        """The import names of the package under test (what the import check looks for)."""
        return self.recipe.packages if self.recipe.detection.language == "python" else ()

    @property
    def setup(self) -> tuple[str, ...]:
        """Commands the verifier runs after the patches, before `verify.setup`: the compiled
        extensions rebuilt where a patch changed their sources, then `env.setup`."""
        if self.rebuild_with is None:
            return self.recipe.config.setup
        # told its version as the build was: a verifier tree has no .git for setuptools-scm to ask
        told = " ".join(f"{name}={shlex.quote(value)}" for name, value in sorted(pretend_variables(self.recipe).items()))
        rebuild = f"{told} " + shlex.join(["python", "-c", REBUILD, self.rebuild_with, orjson.dumps(self.native).decode(), *(g for g in self.generated if EXTENSION.search(g))])
        return (rebuild, *self.recipe.config.setup)

    def run_env(self, tree: str, path: str) -> dict[str, str]:
        """The variables a verifier command runs with, the tree at `tree` where it runs and
        `path` the box's own PATH: the venv first, the tree's import roots on PYTHONPATH."""
        env = dict(self.recipe.config.variables)
        if self.node_modules:
            assert self.folder is not None
            # `npx vitest` runs the project's own, never a download; npm and npx from the
            # environment's bin/ (in a container too, where the image has none)
            node = node_folder()
            env["PATH"] = f"{tree}/node_modules/.bin:{self.folder / 'bin'}:" + (f"{node}:" if node else "") + path
            return env
        if self.venv is None:
            return env
        roots = self.recipe.detection.roots or (".",)
        env["PYTHONPATH"] = ":".join(tree if r == "." else f"{tree}/{r}" for r in roots)
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = f"{self.venv / 'bin'}:{path}"
        return env

    def materialize(self, work: Path) -> list[str]:
        """Copy what the build generated (a VCS version file; a Node project's node_modules,
        linked) into a fresh tree that lacks it."""
        copied: list[str] = []
        if self.folder is None:
            return copied
        if self.node_modules:
            if self.modules_digest and modules_digest(self.folder / "tree", self.generated) != self.modules_digest:
                raise EnvError(f"the cached node_modules in {self.folder} was changed in place by an earlier run: remove it (`benchtape task envs --prune --unused-for 0d`) and run again; it is built anew")
            return link_modules(self.folder / "tree", work, self.generated)
        for rel in self.generated:
            src, dest = self.folder / "tree" / rel, work / rel
            if src.is_file() and not dest.exists() and not dest.is_symlink():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
                if EXTENSION.search(rel):
                    os.utime(dest)  # newer than the tree's sources: setuptools rebuilds only what a patch touches after this
                copied.append(rel)
        return copied

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.recipe.to_dict(),
            "folder": str(self.folder) if self.folder else None,
            "installer": self.installer,
            "project_installed": self.project_installed,
            "generated": list(self.generated),
            "installed": list(self.installed),
            "built": self.built,
            "seconds": round(self.seconds, 3),
            "notes": [*self.recipe.notes, *self.notes],
        }


def ensure_env(recipe: Recipe, tree: Path, *, cache: Path | None = None, progress: Progress | None = None) -> ProjectEnv:
    """The environment of `recipe`, built from `tree` (the exported base tree) when not cached."""
    t0 = time.monotonic()
    if not recipe.buildable:
        why = []
        if not recipe.config.build:
            why.append("`env.build: false` in the project config: the verifier runs the host's tools as they are")
        elif recipe.detection.language == "python" and recipe.config.python:  # asked for: never a verdict from another Python's run
            raise EnvError(f"`env.python: {recipe.config.python}` names no interpreter on this host (looked on the PATH and among pyenv's, asdf's and uv's installs): install it (`pyenv install {recipe.config.python}`, `uv python install {recipe.config.python}`), or give its path (`env.python: /usr/bin/python{recipe.config.python}`)")
        elif recipe.detection.language == "python":
            why.append("no Python interpreter to build with")
        return ProjectEnv(recipe, notes=why)
    cache = cache or default_cache()
    key = recipe.key()[:20]
    folder = cache / key
    hold(cache, key)  # first: a prune under way finishes before the entry is looked at
    found = _load(recipe, folder)
    if found is not None:
        stamp(folder)
        found.seconds = time.monotonic() - t0
        return found
    with locked(cache / f"{key}.lock"):
        found = _load(recipe, folder)
        if found is not None:
            stamp(folder)
            found.seconds = time.monotonic() - t0
            return found
        changed = _changed_in_place(folder)
        if folder.exists():
            shutil.rmtree(folder)  # a build that did not finish, or changed since
        folder.mkdir(parents=True)
        try:
            env = (_build_node if recipe.detection.language == "node" else _build)(recipe, tree, folder, progress or (lambda text: None))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        env.seconds = time.monotonic() - t0
        env.built = True
        manifest = {k: v for k, v in env.to_dict().items() if k in ("installer", "project_installed", "generated", "installed")}
        manifest["rebuild_with"] = env.rebuild_with
        manifest["native"] = env.native
        manifest["scripts"] = list(env.scripts)
        if env.modules_digest is not None:
            manifest["modules_digest"] = env.modules_digest
        if env.venv is not None:
            manifest["venv_digest"] = venv_digest(folder)
        manifest["notes"] = env.notes
        manifest["project"], manifest["python"] = recipe.detection.name, recipe.python_version  # what `task envs` lists
        if recipe.node is not None:
            manifest["node"] = recipe.node
        tmp = folder / f".{MANIFEST}.tmp"
        tmp.write_bytes(orjson.dumps(manifest))
        os.replace(tmp, folder / MANIFEST)
        stamp(folder)
        if changed:  # this build's reason, not the entry's: said now, not kept in its manifest
            env.notes.append(changed)
        return env


def discard(folder: Path) -> None:
    """Take the cached environment at `folder` out of use (an agent changed it in place): its
    manifest removed, its next use builds it anew, as after a build that never finished (which
    `task envs --prune` removes too). A process using it now keeps its files until then."""
    try:
        (folder / MANIFEST).unlink()
    except FileNotFoundError:
        pass


def _load(recipe: Recipe, folder: Path) -> ProjectEnv | None:
    try:
        doc = orjson.loads((folder / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if recipe.detection.language == "node":
        # the links to npm's scripts lead somewhere (an npm upgraded since leaves them dangling), and every node_modules is there
        if not (folder / "bin").is_dir() or not all(link.exists() for link in (folder / "bin").iterdir()) or not all((folder / "tree" / rel).is_dir() for rel in doc.get("generated", [])):
            return None
        if doc.get("modules_digest") != modules_digest(folder / "tree", tuple(doc.get("generated", []))):
            return None  # changed in place since it was built: built anew (the trees linked from it keep their files)
    elif not (folder / "venv" / "bin" / "python").exists():
        return None
    elif "venv_digest" in doc and doc["venv_digest"] != venv_digest(folder):
        return None  # changed in place since it was built (an agent at a level with no mount namespace, a verifier's install): built anew
    elif ("rebuild_with" not in doc or (doc["rebuild_with"] and "native" not in doc)) and any(EXTENSION.search(g) for g in doc.get("generated", [])):
        return None  # built before extensions were rebuilt in each tree (it tested the base's binaries whatever a patch changed), or by their mtimes
    elif "scripts" not in doc and not doc.get("project_installed") and _declared_scripts(folder / "tree"):
        return None  # a project that did not install, built before its scripts were written: its commands were missing
    return ProjectEnv(recipe, folder, doc.get("installer"), bool(doc.get("project_installed")), tuple(doc.get("generated", [])), tuple(doc.get("installed", [])), notes=list(doc.get("notes", [])), modules_digest=doc.get("modules_digest"), rebuild_with=doc.get("rebuild_with"), native=dict(doc.get("native") or {}))


def venv_digest(folder: Path) -> str:
    """A cached Python environment's venv and tree (paths, sizes, mtimes; bytecode left out):
    kept in its manifest at the build and compared at every use (~10 ms), so a verdict is never
    computed in an environment something wrote into after it was built. An agent's own is
    bound read-only where the host allows a mount namespace, but the cache holds every
    project's entries, and a host without one, or any other program, can still write there."""
    return modules_digest(folder, ("venv", "tree"), skip_bytecode=True)


def _changed_in_place(folder: Path) -> str | None:
    """Why a complete entry is being built anew, when it is because its files changed."""
    try:
        doc = orjson.loads((folder / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if "venv_digest" in doc and (folder / "venv").is_dir() and doc["venv_digest"] != venv_digest(folder):
        return f"the cached environment {folder.name} was changed in place after it was built (a file of its venv or tree written, added or removed): it was built anew, so no verdict is computed in what something installed there"
    return None


def uv_binary() -> str | None:
    """uv, from benchtape's own dependencies or the PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


SCM_UNTOLD = "setuptools-scm was unable to detect version"


def _build(recipe: Recipe, tree: Path, folder: Path, say: Progress) -> ProjectEnv:
    det = recipe.detection
    work = folder / "tree"
    shutil.copytree(tree, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    before = _files(work)
    venv = folder / "venv"
    uv = uv_binary()
    env = {**build_host_env(), **pretend_variables(recipe), **dict(recipe.config.variables), "UV_PYTHON_DOWNLOADS": "never", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    python = recipe.python or "python3"
    say(f"building the environment ({'uv' if uv else 'pip'}, Python {recipe.python_version}) in {folder}")
    if uv:
        _run([uv, "venv", "--quiet", "--python", python, str(venv)], work, env, "creating the venv")
        # --compile-bytecode, as pip does by default: nothing else compiles the venv where
        # PYTHONDONTWRITEBYTECODE is set or the venv is mounted read-only (a container), and every
        # test run recompiled pytest from source (0.83 s of CPU for a toolz test file, 0.35 compiled)
        install = [uv, "pip", "install", "--compile-bytecode", "--python", str(venv / "bin" / "python"), *(["--exclude-newer", recipe.resolved_at] if recipe.resolved_at else []), *_override_args(recipe, folder)]
    else:
        _run([python, "-m", "venv", str(venv)], work, env, "creating the venv")
        if recipe.config.overrides:  # a fix's raised bounds alone are left to the base's, as before uv
            raise EnvError(f"`env.overrides` ({', '.join(recipe.config.overrides)}) needs uv, which replaces a declared requirement; pip cannot: install uv (`pip install uv`) where benchtape runs")
        install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    others = _other_specs(recipe, work)
    notes: list[str] = []
    scripts: tuple[str, ...] = ()
    project_installed = False
    if det.installable:
        target = str(work) + (f"[{','.join(det.extras + recipe.config.extras)}]" if det.extras or recipe.config.extras else "")
        failed = _try([*install, "-e", target, *others], work, env)
        if failed is not None and SCM_UNTOLD in failed and "SETUPTOOLS_SCM_PRETEND_VERSION" not in env:
            # setuptools-scm reads `_FOR_<NAME>` only once it knows the name, and a setup.py's
            # `use_scm_version` is read before setup.cfg's `name =` (dateutil of 2019-2021): the
            # plain variable then, for this install alone
            failed = _try([*install, "-e", target, *others], work, {**env, "SETUPTOOLS_SCM_PRETEND_VERSION": recipe.version})
        if failed is None:
            project_installed = True
        else:
            notes.append(f"the project itself did not install ({_last_line(failed)}); its declared dependencies were installed without it, its code imported from the tree")
            deps = project_dependencies(FolderTree(work), det, det.extras + recipe.config.extras)
            _run([*install, *deps, *others], work, env, "installing the declared dependencies")
            scripts = tuple(_console_scripts(work, venv))
            if scripts:
                notes.append(f"its command-line scripts ({', '.join(scripts)}) were written into the venv, running its code from the tree")
    else:
        _run([*install, *others], work, env, "installing the test dependencies")
    generated = tuple(sorted(f for f in _files(work) - before if not NOT_GENERATED.search(f)))
    rebuild_with = _extension_rebuild(recipe, work, install, env, generated, notes) if project_installed else None
    native = {**native_sources(tree), **native_sources(work, [g for g in generated if Path(g).suffix in NATIVE])} if rebuild_with else {}  # as a verifier tree holds them: the base's, and what materialize copies
    # -I: the venv's own distributions, never a `*.egg-info` in the caller's working directory
    # (benchtape's own checkout listed `benchtape==0.1.0` in toolz's environment) or PYTHONPATH's
    listed = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", "import importlib.metadata as m; print('\\n'.join(sorted(f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions())))"], capture_output=True, text=True, timeout=120)
    installed = tuple(line for line in listed.stdout.splitlines() if line.strip())
    return ProjectEnv(recipe, folder, "uv" if uv else "pip", project_installed, generated, installed, notes=notes, rebuild_with=rebuild_with, native=native, scripts=scripts)


def _extension_rebuild(recipe: Recipe, work: Path, install: list[str], env: dict[str, str], generated: tuple[str, ...], notes: list[str]) -> str | None:
    """How a setuptools project's compiled extensions are rebuilt in a verifier tree (REBUILD's
    first argument: `setup.py`, or `-` for setuptools' own setup()), with what that needs
    installed into the venv now (the build's requirements, with the network); None: never.

    The build compiled them from the base's sources into its tree, and each verifier tree gets
    a copy (`materialize`): a fix in C (markupsafe #109, a NULL check in `_speedups.c`) was
    tested against the base's binary, and its reference segfaulted as the base did. After the
    patches REBUILD compiles them only when a patch changed a native source (a compiler is
    needed only then), and fails the run where it could not replace a binary."""
    if not any(EXTENSION.search(g) for g in generated):
        return None
    if recipe.detection.backend != "setuptools":
        notes.append(f"compiled extensions were built from the base's sources ({recipe.detection.backend}): a patch to their sources is not rebuilt in the verifier's tree")
        return None
    build = _pyproject(work).get("build-system") or {}
    requires = [str(r) for r in build.get("requires", [])] if isinstance(build, dict) else []
    failed = _try([*install, *(requires or ["setuptools", "wheel"])], work, env)
    if failed is not None:
        notes.append(f"the build's requirements did not install into the venv ({_last_line(failed)}): a patch to a compiled extension's sources is not rebuilt")
        return None
    built = [g for g in generated if EXTENSION.search(g)]
    notes.append(f"compiled extensions ({', '.join(built[:3])}) are rebuilt in each verifier tree where a patch changed their sources")
    return "setup.py" if (work / "setup.py").is_file() else "-"


# Run in a verifier tree after the patches (argv: setup.py or -, the sha256 of each native
# source as the build compiled it (JSON), then the binaries `materialize` copied): when a native
# source's content differs from the build's, every extension is rebuilt (--force: one a patch did
# not touch is the same either way). Content, not mtimes: Harbor's verifier receives the tree
# with its times cut to the second, and a C fix exported in the same second as its binary was
# never rebuilt (markupsafe #109's reference segfaulted there as the base did). Where no compiler
# is found it stops (exit 3) and where the build leaves a base binary it fails: the tests then
# run neither against the base's C nor without it (markupsafe's setup.py falls back to pure
# Python, its C tests skip, and a comment added to _speedups.c passed).
NOT_REBUILT = "was not rebuilt from the changed sources"  # what REBUILD prints of each binary it could not rebuild (validation notes it)
NO_COMPILER = "no C compiler here"  # ... and why, where there is none (the verifier could not test: never the candidate's fault)


def not_rebuilt(log: str) -> list[str]:
    """The binaries REBUILD could not rebuild in a run, from its log (the line it prints, never
    the script's own text, which the log also shows as the command)."""
    return re.findall(rf"(?m)^benchtape: (\S+) {NOT_REBUILT}", log)


def no_compiler(log: str) -> bool:
    """Whether REBUILD stopped for want of a compiler (its line, not the script's text)."""
    return re.search(rf"(?m)^benchtape: \S+ {NOT_REBUILT}: {NO_COMPILER}", log) is not None


NATIVE = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".pyx", ".pxd", ".pxi", ".f", ".f90")


def native_sources(tree: Path, paths: list[str] | None = None) -> dict[str, str]:
    """path → sha256 of each native source under `tree` (or of these `paths` of it), as REBUILD
    reads a verifier tree."""
    import hashlib

    found = [tree / rel for rel in paths] if paths is not None else [p for p in tree.rglob("*") if p.suffix in NATIVE and ".git" not in p.relative_to(tree).parts]
    return {p.relative_to(tree).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in found if p.is_file() and not p.is_symlink()}


REBUILD = (
    "import hashlib,json,os,shlex,shutil,subprocess,sys,sysconfig\n"
    "from pathlib import Path\n"
    "script,built,bins=sys.argv[1],json.loads(sys.argv[2]),[Path(b) for b in sys.argv[3:]]\n"
    f"native={NATIVE!r}\n"
    "now={p.as_posix():hashlib.sha256(p.read_bytes()).hexdigest() for p in Path('.').rglob('*') if p.suffix in native and p.is_file() and not p.is_symlink() and '.git' not in p.parts}\n"
    "if now==built:sys.exit(0)\n"
    "cc=(shlex.split(os.environ.get('CC') or sysconfig.get_config_var('CC') or 'cc') or ['cc'])[0]\n"
    "if shutil.which(cc) is None:\n"
    " [print(f'benchtape: {b} " + NOT_REBUILT + ": " + NO_COMPILER + " ({cc}): its tests are not run, neither against the base binary nor without it',flush=True) for b in bins]\n"
    " sys.exit(3)\n"
    "stamp={b:b.stat().st_mtime_ns for b in bins if b.exists()}\n"
    "run=[sys.executable,script] if script!='-' else [sys.executable,'-c','from setuptools import setup; setup()']\n"
    "done=subprocess.run([*run,'--quiet','build_ext','--inplace','--force'])\n"
    "left=[b for b,t in stamp.items() if b.exists() and b.stat().st_mtime_ns==t]\n"
    "[print(f'benchtape: {b} " + NOT_REBUILT + ": the build left the base binary',flush=True) for b in left]\n"
    "sys.exit(done.returncode or (1 if left else 0))\n"
)


def _build_node(recipe: Recipe, tree: Path, folder: Path, say: Progress) -> ProjectEnv:
    """A Node project's dependencies installed into a copy of the tree (envs/node.py)."""
    det = recipe.detection
    work = folder / "tree"
    shutil.copytree(tree, work, symlinks=True, ignore=shutil.ignore_patterns(".git", "node_modules"))
    for path, data in recipe.overlay:  # the dependencies as the task's fix declares them (recipe_for)
        (work / path).write_bytes(data)
    cache = folder.parent
    say(f"installing the Node dependencies ({describe(det.manager, det.manager_version, det.lock)}, node {recipe.node}) in {folder}")
    left_out = leave_out(work, recipe.config.exclude)
    try:
        argv = install_argv(det.manager or "npm", det.manager_version, det.lock, folder, cache, pruned=bool(left_out))
    except BenchtapeError as exc:
        raise EnvError(f"installing {det.manager} {det.manager_version} failed: {exc}") from exc
    modules = build_modules(work, argv, dict(recipe.config.variables), cache, _run)
    if not modules:
        raise EnvError(f"`{' '.join(argv[:2])}` made no node_modules in {work}")
    link_npm(folder / "bin")
    shutil.rmtree(folder / "pnpm-store", ignore_errors=True)  # node_modules holds its files (hard links): the store's index only takes room
    shutil.rmtree(folder / "yarn-cache", ignore_errors=True)
    notes = [] if det.lock else [describe(det.manager, det.manager_version, None)]  # `npm (no lock file: the versions the registry resolves today)`
    if left_out:
        notes.append(f"left out as `env.exclude` says: {', '.join(left_out)} (removed from package.json; the lock file's other versions kept)")
    installer = f"{det.manager} {det.manager_version}" if det.manager_version else (det.manager or "npm")
    return ProjectEnv(recipe, folder, installer, False, modules, installed(work / "node_modules"), notes=notes, modules_digest=modules_digest(work, modules))


def _override_args(recipe: Recipe, folder: Path) -> list[str]:
    """uv's `--override FILE` for the recipe's overrides (a fix's raised bounds, `env.overrides`):
    each replaces every requirement on its distribution that the project declares, where
    installing both would be unsatisfiable (boltons' requirements-test.txt pins pytest==3.0.7,
    which does not start on Python 3.11)."""
    if not recipe.overrides:
        return []
    path = folder / "overrides.txt"
    path.write_text("".join(f"{r}\n" for r in recipe.overrides), encoding="utf-8")
    return ["--override", str(path)]


def _other_specs(recipe: Recipe, work: Path) -> list[str]:
    """Everything but the project: requirements files, groups, specifiers, pytest when unnamed."""
    specs: list[str] = []
    for req in recipe.requirements():
        if (work / req).is_file():
            specs += ["-r", str(work / req)]
    grouped = _group_specs(work, (*recipe.detection.groups, *recipe.config.groups))
    left_out = {distribution(d) for d in recipe.config.exclude}
    named = [s for s in [*grouped, *recipe.detection.install, *recipe.added] if distribution(s) not in left_out] + list(recipe.config.install)
    specs += named
    mentioned = " ".join(named + [(work / r).read_text(errors="replace") for r in recipe.requirements() if (work / r).is_file()])
    extras_text = ""
    if recipe.detection.extras:
        extras_text = " ".join(project_dependencies(FolderTree(work), recipe.detection, recipe.detection.extras))
    if recipe.detection.runner == "pytest" and not re.search(r"(?:^|[\s,\[\"'])pytest(?:[\s<>=!~;\[,]|$)", mentioned + " " + extras_text, re.MULTILINE):
        specs.append("pytest")
    return specs


def _console_scripts(work: Path, venv: Path) -> list[str]:
    """The project's declared command-line scripts ([project.scripts], [tool.poetry.scripts]),
    written into the venv's bin/ for a project that did not install: each imports its function
    as the tests' own imports do (the verifier's tree first on PYTHONPATH). An old Poetry backend
    (`poetry.masonry.api`, before editable installs) left dunamai's `dunamai` command missing,
    and the tests that run it failed in every phase. Returns the names written."""
    declared = _declared_scripts(work)
    written = []
    for name, target in sorted(declared.items()):
        spec = target.get("callable") or target.get("reference") if isinstance(target, dict) else target
        if not isinstance(spec, str) or not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", spec) or not re.fullmatch(r"[\w.-]+", name):
            continue
        module, attr = spec.split(":")
        script = venv / "bin" / name
        if script.exists():
            continue
        script.write_text(f"#!{venv / 'bin' / 'python'}\nimport importlib, sys\nfound = importlib.import_module({module!r})\nfor part in {attr!r}.split('.'):\n    found = getattr(found, part)\nsys.exit(found())\n")
        script.chmod(0o755)
        written.append(name)
    return written


def _declared_scripts(work: Path) -> dict[str, Any]:
    """name → target of the scripts pyproject.toml declares ([tool.poetry.scripts], [project.scripts])."""
    doc = _pyproject(work)
    poetry = ((doc.get("tool") or {}).get("poetry") or {}).get("scripts")
    project = (doc.get("project") or {}).get("scripts")
    return {**(poetry if isinstance(poetry, dict) else {}), **(project if isinstance(project, dict) else {})}


def _pyproject(work: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((work / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _group_specs(work: Path, groups: tuple[str, ...]) -> list[str]:
    """PEP 735 groups resolved (`{include-group = …}` followed), as plain specifiers."""
    declared = _pyproject(work).get("dependency-groups") or {}
    out: list[str] = []
    seen: set[str] = set()

    def walk(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for item in declared.get(name, []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and "include-group" in item:
                walk(str(item["include-group"]))

    for g in groups:
        walk(g)
    return out


def _try(argv: list[str], cwd: Path, env: dict[str, str]) -> str | None:
    """None when it worked, else its output."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"timed out after {BUILD_TIMEOUT:g}s"
    return None if done.returncode == 0 else (done.stdout + done.stderr)


def _run(argv: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
    failed = _try(argv, cwd, env)
    if failed is not None:
        raise EnvError(f"{what} failed: `{shlex.join(argv)}`\n{failed[-1500:]}")  # whole: what was installed is in it (tenacity's `.[doc]` was cut off)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if "error" in line.lower():
            return line[:300]
    return lines[-1][:300] if lines else "no output"
