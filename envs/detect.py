"""How a project installs and tests, read from its declarations (never run).

Python: the build backend (`[build-system]` of pyproject.toml: setuptools, hatchling, flit,
poetry, pdm, uv; or a bare setup.py/setup.cfg), whether its version comes from the VCS
(setuptools-scm, hatch-vcs, setuptools-git-versioning, versioneer, pdm/poetry dynamic
versioning: an export has no `.git`, so the build needs a pretend version), and its test
dependencies, first found wins:
  extras named test/tests/testing (`dev` when none), PEP 735 `[dependency-groups]` of the same
  names, poetry/pdm/uv dev groups, requirements files named for tests, then tox's `[testenv]`
  and nox's `session.install(...)` as a fallback.
The package under test (its import name), and the folders it imports from (`src/` or the top).
Node: the package manager and lock file (envs/node.py), whose install makes the environment.
Go and Rust projects are recognised, with whether their toolchain is on this host; their
environment is the toolchain as it is.
"""

from __future__ import annotations

import configparser
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from typing import Any

from benchtape.envs.node import CONFIGS as NODE_CONFIGS
from benchtape.envs.node import LOCKS as NODE_LOCKS
from benchtape.envs.node import describe, package_json, package_manager
from benchtape.spec.project_tree import LOCK_FILES, Tree, declaration_paths

TEST_NAMES = ("test", "tests", "testing")
DEV_NAMES = ("dev", "develop", "development")
REQUIREMENT_FOLDERS = ("", "requirements/", "requirements.d/", "reqs/", "ci/")
TEST_FOLDERS = ("tests/", "test/", "testing/")  # a requirements file in the tests' own folder is theirs, whatever its name (tomli's tests/requirements.txt)
NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "examples", "example", "bench", "benchmarks", "scripts", "tools", "build", "dist", "site-packages", "conftest"}
SCM_REQUIRES = {
    "setuptools-scm": "setuptools-scm",
    "setuptools_scm": "setuptools-scm",
    "hatch-vcs": "hatch-vcs",
    "setuptools-git-versioning": "setuptools-git-versioning",
    "versioneer": "versioneer",
    "pdm-backend": None,
    "poetry-dynamic-versioning": "poetry-dynamic-versioning",
    "dunamai": "dunamai",
    "versioningit": "versioningit",
    "pbr": "pbr",
}
BACKENDS = {
    "setuptools.build_meta": "setuptools",
    "setuptools.build_meta:__legacy__": "setuptools",
    "hatchling.build": "hatchling",
    "flit_core.buildapi": "flit",
    "flit.buildapi": "flit",
    "poetry.core.masonry.api": "poetry",
    "poetry.masonry.api": "poetry",
    "pdm.backend": "pdm",
    "pdm.pep517.api": "pdm",
    "uv_build": "uv",
    "maturin": "maturin",
    "scikit_build_core.build": "scikit-build-core",
    "mesonpy": "meson-python",
}
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Detection:
    """What the tree declares about installing and testing it."""

    language: str  # python, go, rust, node, or unknown
    name: str | None = None  # the distribution's name
    backend: str | None = None  # setuptools, hatchling, flit, poetry, pdm, uv, … (None: not installable)
    scm: str | None = None  # where its version comes from, when that is the VCS
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()  # PEP 735 dependency groups
    requirements: tuple[str, ...] = ()  # requirements files (paths in the tree)
    install: tuple[str, ...] = ()  # further specifiers (poetry/pdm/uv dev groups, tox, nox)
    test_deps_from: str | None = None  # where the test dependencies were found
    packages: tuple[str, ...] = ()  # import names of the package under test
    roots: tuple[str, ...] = (".",)  # where those import from, relative to the tree
    runner: str | None = None  # pytest, unittest, go, cargo, npm
    toolchain: str | None = None  # the non-Python toolchain's binary, when present here
    declarations: tuple[str, ...] = ()  # the files the recipe depends on
    notes: tuple[str, ...] = field(default_factory=tuple)
    manager: str | None = None  # a Node project's package manager: npm, pnpm, yarn, bun
    manager_version: str | None = None  # the version it is installed at (None: this host's npm)
    lock: str | None = None  # a Node project's lock file
    unbuilt: str | None = None  # why a Node project's dependencies are not installed

    @property
    def installable(self) -> bool:
        return self.backend is not None

    def lines(self) -> list[str]:
        """What was detected, for `benchtape doctor` and `task create`."""
        if self.language != "python":
            if self.language == "unknown":
                return ["no Python, Go, Rust or Node project recognised: the verifier runs this host's tools as they are"]
            there = f"{self.toolchain} found" if self.toolchain else f"no {self.runner} on this host"
            if self.language == "node" and self.unbuilt is None and self.toolchain:
                return [f"a node project ({there}): its dependencies installed with {describe(self.manager, self.manager_version, self.lock)} into a cached node_modules, linked into each verifier tree", *self.notes]
            why = f" ({self.unbuilt})" if self.language == "node" and self.unbuilt else ""
            return [f"a {self.language} project ({there}): its environment is the toolchain as it is{why}", *self.notes]
        out = [
            f"a Python project{f' ({self.name})' if self.name else ''}: "
            + (f"built with {self.backend}" + (f", its version from {self.scm} (a pretend version is set: an export has no .git)" if self.scm else "") if self.backend else "no build declaration (nothing to install; its requirements only)"),
            f"package under test: {', '.join(self.packages) or '(none found)'}, imported from {', '.join(r if r != '.' else 'the top' for r in self.roots)}",
        ]
        deps = [*(f"extra [{e}]" for e in self.extras), *(f"group {g}" for g in self.groups), *self.requirements, *self.install]
        out.append(f"test dependencies: {', '.join(deps)}" + (f" (from {self.test_deps_from})" if self.test_deps_from else "") if deps else "test dependencies: none declared (pytest is added)")
        out.extend(self.notes)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language, "name": self.name, "backend": self.backend, "scm": self.scm, "extras": list(self.extras),
            "groups": list(self.groups), "requirements": list(self.requirements), "install": list(self.install),
            "test_deps_from": self.test_deps_from, "packages": list(self.packages), "roots": list(self.roots),
            "runner": self.runner, "toolchain": self.toolchain, "declarations": list(self.declarations), "notes": list(self.notes),
            **({"manager": self.manager, "manager_version": self.manager_version, "lock": self.lock, "unbuilt": self.unbuilt} if self.language == "node" else {}),
        }


def detect(tree: Tree) -> Detection:
    top = tree.names()
    pyproject = _toml(tree, "pyproject.toml") if "pyproject.toml" in top else {}
    python_signs = {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini", "noxfile.py", "Pipfile"} & set(top)
    if not python_signs and not any(n.endswith(".py") for n in top):
        return _other(tree, top)
    cfg = _ini(tree, "setup.cfg") if "setup.cfg" in top else None
    name = _project_name(tree, pyproject, cfg, top)
    backend, scm = _backend(tree, pyproject, cfg, top)
    extras, groups, requirements, install, source = _test_deps(tree, pyproject, cfg, top)
    declarations = declaration_paths(tree, requirements)
    packages, roots = _packages(tree, pyproject, name, top)
    notes: list[str] = []
    if not packages:
        notes.append("no package under test found: the import check is skipped (name it with `env.package` in .benchtape/config.yaml)")
    runner = "pytest"
    return Detection("python", name, backend, scm, extras, groups, requirements, install, source, packages, roots, runner, None, tuple(declarations), tuple(notes))


def project_dependencies(tree: Tree, det: Detection, extras: tuple[str, ...]) -> list[str]:
    """What the project itself says it needs to run, and its `extras`' lists, read from its
    declarations without building it: pyproject's `[project]`, setup.cfg's `install_requires` and
    `extras_require`, and a pbr project's requirements.txt (pbr's install_requires). For a project
    whose own build fails here (tenacity of 2019: today's setuptools refuses its flat layout), so
    that its tests still import what it imports. None names the project itself."""
    top = tree.names()
    pyproject = _toml(tree, "pyproject.toml") if "pyproject.toml" in top else {}
    cfg = _ini(tree, "setup.cfg") if "setup.cfg" in top else None
    found = [str(d) for d in _get(pyproject, "project", "dependencies") or [] if isinstance(d, str)]
    if cfg is not None and cfg.has_option("options", "install_requires"):
        found += cfg.get("options", "install_requires").splitlines()
    if det.scm == "pbr":
        found += (tree.read("requirements.txt") or b"").decode("utf-8", "replace").splitlines()
    declared = _get(pyproject, "project", "optional-dependencies") or {}
    for extra in extras:
        listed = declared.get(extra) if isinstance(declared, dict) else None
        if isinstance(listed, list):
            found += [str(d) for d in listed if isinstance(d, str)]
        elif cfg is not None and cfg.has_option("options.extras_require", extra):
            found += cfg.get("options.extras_require", extra).splitlines()
    itself = distribution(det.name) if det.name else None
    wanted = (line.split(" #")[0].strip() for line in found)
    return list(dict.fromkeys(r for r in wanted if r and not r.startswith(("#", "-")) and _REQUIREMENT.fullmatch(r) and distribution(r) != itself))


def extras_providing(tree: Tree, module: str) -> list[str]:
    """The project's own extras that would provide `module`: an extra of that name, or one that
    lists a distribution of that name (pyproject's optional-dependencies, poetry's extras,
    setup.cfg's extras_require). cattrs #708's tests import `bson`, which its extra `bson`
    (pymongo) provides; `env.install: [bson]` installed PyPI's unrelated bson instead."""
    want = distribution(module)
    top = tree.names()
    pyproject = _toml(tree, "pyproject.toml") if "pyproject.toml" in top else {}
    cfg = _ini(tree, "setup.cfg") if "setup.cfg" in top else None
    lists: dict[str, list[str]] = {}
    for table in (_get(pyproject, "project", "optional-dependencies"), _get(pyproject, "tool", "poetry", "extras")):
        if isinstance(table, dict):
            for name, listed in table.items():
                if isinstance(listed, list):
                    lists.setdefault(str(name), []).extend(str(d) for d in listed if isinstance(d, str))
    if cfg is not None and cfg.has_section("options.extras_require"):
        for name in cfg.options("options.extras_require"):
            lists.setdefault(name, []).extend(cfg.get("options.extras_require", name).splitlines())
    return [name for name, listed in lists.items() if distribution(name) == want or any(d.strip() and distribution(d.strip()) == want for d in listed)]


def declared_requirements(tree: Tree, det: Detection) -> tuple[str, ...]:
    """Every requirement the tree declares for the project and the tests `det` found, as written:
    the project's dependencies, its test extras' and dependency groups' lists, the further
    specifiers (tox, nox, poetry/pdm/uv dev) and the requirements files' lines. Compared across a
    task's base and fix commits (fix_requirements), never installed as they are here."""
    if det.language != "python":
        return ()
    top = tree.names()
    pyproject = _toml(tree, "pyproject.toml") if "pyproject.toml" in top else {}
    found: list[str] = [str(d) for d in _get(pyproject, "project", "dependencies") or [] if isinstance(d, str)]
    extras = _get(pyproject, "project", "optional-dependencies") or {}
    cfg = _ini(tree, "setup.cfg") if "setup.cfg" in top else None
    for extra in det.extras:
        listed = extras.get(extra) if isinstance(extras, dict) else None
        if isinstance(listed, list):
            found += [str(d) for d in listed if isinstance(d, str)]
        elif cfg is not None and cfg.has_option("options.extras_require", extra):
            found += [line.strip() for line in cfg.get("options.extras_require", extra).splitlines() if line.strip()]
    groups = _get(pyproject, "dependency-groups") or {}
    for group in det.groups:
        listed = groups.get(group) if isinstance(groups, dict) else None
        found += [str(d) for d in listed or [] if isinstance(d, str)]
    found += det.install
    for path in det.requirements:
        for line in (tree.read(path) or b"").decode("utf-8", "replace").splitlines():
            line = line.split(" #")[0].strip()
            if line and not line.startswith(("#", "-")) and _REQUIREMENT.fullmatch(line):
                found.append(line)
    return tuple(dict.fromkeys(" ".join(r.split()) for r in found))


def fix_requirements(base: Tree, fix: Tree) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(added, raised): the requirements a task's fix commit declares for distributions its base
    does not (a pull request that adds the test dependency its new tests import: jsonschema's
    #1390 added jsonpath-ng to its noxfile with the test that imports it), and those whose
    bounds it changed (a Poetry `pytest = "^6.2"` raised to `"^7.0"`, which its tests may need).
    The task's environment installs the added ones too, and the raised ones in place of the
    base's (uv's `--override`: installing both would be unsatisfiable when they are disjoint);
    without them the reference's own tests fail on a missing module or an old API."""
    base_det, fix_det = detect(base), detect(fix)
    if base_det.language != "python" or fix_det.language != "python":
        return (), ()
    had = declared_requirements(base, base_det)
    names = {distribution(r) for r in had}
    declared = declared_requirements(fix, fix_det)
    added = tuple(r for r in declared if distribution(r) not in names)
    raised = tuple(r for r in declared if distribution(r) in names and r not in had)
    return added, raised


def distribution(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503): what tells a requirement the fix
    adds from one whose bounds it moves (fix_requirements)."""
    m = _REQ_NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else requirement


def _other(tree: Tree, top: list[str]) -> Detection:
    for marker, language, runner in (("go.mod", "go", "go"), ("Cargo.toml", "rust", "cargo"), ("package.json", "node", "npm")):
        if marker in top:
            locks = [n for n in (marker, "go.sum", "Cargo.lock", *NODE_LOCKS, *(NODE_CONFIGS if language == "node" else ()), *LOCK_FILES) if n in top]
            if language != "node":
                return Detection(language, runner=runner, toolchain=shutil.which(runner), declarations=tuple(locks))
            manager, version, lock, unbuilt = package_manager(tree, top)
            name = package_json(tree).get("name")
            return Detection(language, name if isinstance(name, str) else None, runner=runner, toolchain=shutil.which(runner), declarations=tuple(locks), manager=manager, manager_version=version, lock=lock, unbuilt=unbuilt)
    return Detection("unknown")


# ---------------------------------------------------------------- readers


def _text(tree: Tree, path: str) -> str | None:
    data = tree.read(path)
    return data.decode("utf-8", "replace") if data is not None else None


def _toml(tree: Tree, path: str) -> dict[str, Any]:
    text = _text(tree, path)
    try:
        return tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return {}


def _ini(tree: Tree, path: str) -> configparser.ConfigParser | None:
    text = _text(tree, path)
    return None if text is None else _ini_text(text)


def _ini_text(text: str) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _get(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def _project_name(tree: Tree, pyproject: dict[str, Any], cfg: configparser.ConfigParser | None, top: list[str]) -> str | None:
    name = _get(pyproject, "project", "name") or _get(pyproject, "tool", "poetry", "name")
    if isinstance(name, str):
        return name
    if cfg is not None and cfg.has_option("metadata", "name"):
        return cfg.get("metadata", "name").strip()
    if "setup.py" in top:
        m = re.search(r"""\bname\s*=\s*['"]([A-Za-z0-9._-]+)['"]""", _text(tree, "setup.py") or "")
        if m:
            return m.group(1)
    return None


def _backend(tree: Tree, pyproject: dict[str, Any], cfg: configparser.ConfigParser | None, top: list[str]) -> tuple[str | None, str | None]:
    build = _get(pyproject, "build-system") or {}
    api = build.get("build-backend") if isinstance(build, dict) else None
    requires = [str(r) for r in build.get("requires", [])] if isinstance(build, dict) else []
    backend = BACKENDS.get(str(api), str(api)) if api else ("setuptools" if {"setup.py", "setup.cfg"} & set(top) or requires else None)
    if backend is None and _get(pyproject, "project", "name"):
        backend = "setuptools"  # PEP 517's default backend
    scm = None
    for req in requires:
        m = _REQ_NAME.match(req)
        if m and m.group(1).lower() in SCM_REQUIRES and SCM_REQUIRES[m.group(1).lower()]:
            scm = SCM_REQUIRES[m.group(1).lower()]
    tool = _get(pyproject, "tool") or {}
    if scm is None and isinstance(tool, dict):
        if "setuptools_scm" in tool:
            scm = "setuptools-scm"
        elif _get(tool, "hatch", "version", "source") == "vcs":
            scm = "hatch-vcs"
        elif _get(tool, "pdm", "version", "source") == "scm":
            scm = "pdm-backend scm"
        elif _get(tool, "poetry-dynamic-versioning", "enable"):
            scm = "poetry-dynamic-versioning"
    if scm is None and "versioneer.py" in top:
        scm = "versioneer"
    setup_py = (_text(tree, "setup.py") or "") if "setup.py" in top else ""
    if scm is None and re.search(r"use_scm_version|setuptools_scm", setup_py):
        scm = "setuptools-scm"
    if scm is None and re.search(r"\bpbr\s*=\s*True|setup_requires\s*=\s*\[[^\]]*['\"]pbr\b", setup_py):
        scm = "pbr"  # OpenStack's: its version from git, its install_requires from requirements.txt (tenacity until 2018)
    return backend, scm


def _names_in(declared: Any) -> list[str]:
    return [str(k) for k in declared] if isinstance(declared, dict) else []


def _pick(names: list[str]) -> tuple[str, ...]:
    chosen = [n for n in names if n.lower() in TEST_NAMES]
    return tuple(chosen or [n for n in names if n.lower() in DEV_NAMES])


def _test_deps(tree: Tree, pyproject: dict[str, Any], cfg: configparser.ConfigParser | None, top: list[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], str | None]:
    """(extras, groups, requirements files, more specifiers, where they came from)."""
    extras_declared = _names_in(_get(pyproject, "project", "optional-dependencies"))
    if cfg is not None and cfg.has_section("options.extras_require"):
        extras_declared += cfg.options("options.extras_require")
    if "setup.py" in top and not extras_declared:
        m = re.search(r"extras_require\s*=\s*\{(.*?)\}", _text(tree, "setup.py") or "", re.DOTALL)
        if m:
            extras_declared += re.findall(r"""['"]([A-Za-z0-9_.-]+)['"]\s*:""", m.group(1))
    extras = _pick(extras_declared)
    groups = _pick(_names_in(_get(pyproject, "dependency-groups")))
    if extras or groups:
        return extras, groups, (), (), "pyproject.toml" if "pyproject.toml" in top and (groups or _get(pyproject, "project", "optional-dependencies")) else ("setup.cfg" if cfg is not None and extras else "setup.py")
    tool = _get(pyproject, "tool") or {}
    poetry_groups = _get(tool, "poetry", "group") or {}
    install: list[str] = []
    for g in _pick(_names_in(poetry_groups)):
        install += _poetry_deps(_get(poetry_groups, g, "dependencies"))
    install += _poetry_deps(_get(tool, "poetry", "dev-dependencies"))
    pdm_dev = _get(tool, "pdm", "dev-dependencies") or {}
    for g in _pick(_names_in(pdm_dev)):
        install += [str(x) for x in pdm_dev.get(g, []) if isinstance(x, str) and not x.startswith("-")]
    install += [str(x) for x in _get(tool, "uv", "dev-dependencies") or [] if isinstance(x, str)]
    if install:
        return (), (), (), tuple(dict.fromkeys(install)), "pyproject.toml (tool dev dependencies)"
    requirements = _requirement_files(tree, top)
    if requirements:
        return (), (), requirements, (), ", ".join(requirements)
    tox = _tox(tree, top, pyproject)
    if tox is not None and any(tox):
        extras_t, reqs_t, install_t = tox
        return extras_t, (), reqs_t, install_t, "tox.ini" if "tox.ini" in top else "pyproject.toml ([tool.tox] legacy_tox_ini)"
    nox_extras, specs = _nox_installs(_text(tree, "noxfile.py") or "", extras_declared) if "noxfile.py" in top else ((), ())
    if nox_extras or specs:
        return nox_extras, (), (), specs, "noxfile.py"
    if "requirements.txt" in top and not ({"setup.py", "setup.cfg"} & set(top) or _get(pyproject, "project")):
        return (), (), ("requirements.txt",), (), "requirements.txt"
    return (), (), (), (), None


# A requirement as pip reads one: a distribution's name first (PEP 508), then extras, versions,
# markers; never a path, an option or an f-string's placeholder.
_REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*([<>=!~;@ ].*)?")
# the project itself with extras: `.[test]`, or an f-string's `{ROOT}[format]` (jsonschema's noxfile)
_SELF_WITH_EXTRAS = re.compile(r"(?:\.|\{[^{}]*\})\[([A-Za-z0-9_.,\s-]+)\]")


def _nox_installs(text: str, extras_declared: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the project's extras, other requirements) that a noxfile's `session.install(...)` calls
    pass as string arguments (the file is parsed, never run): the project itself with extras
    (`.[tests]`, `f"{ROOT}[format]"`) gives those extras when the project declares them; a
    path, an option, a placeholder or a string inside an expression (`REQUIREMENTS["docs"]`)
    is not a requirement and is left out (uv refused the whole install on jsonschema's
    `{ROOT}[format-nongpl]`, then on `docs`)."""
    import ast

    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return (), ()
    extras: list[str] = []
    specs: list[str] = []
    for node in ast.walk(module):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "install"):
            continue
        for arg in node.args:
            literal = _literal(arg)
            if literal is None:
                continue
            own = _SELF_WITH_EXTRAS.fullmatch(literal)
            if own:
                extras += [e.strip() for e in own.group(1).split(",") if e.strip() in extras_declared]
            elif "{" not in literal and _REQUIREMENT.fullmatch(literal):
                specs.append(literal)
    return tuple(dict.fromkeys(extras)), tuple(dict.fromkeys(specs))


def _literal(arg: Any) -> str | None:
    """A call argument's text when it is a string literal; an f-string's with each placeholder
    as `{}` (so `f"{ROOT}[format]"` reads as the project with an extra)."""
    import ast

    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value.strip()
    if isinstance(arg, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in arg.values).strip()
    return None


def _poetry_deps(declared: Any) -> list[str]:
    """PEP 508 requirements for a Poetry dependency table (`[tool.poetry.dev-dependencies]`,
    `[tool.poetry.group.<name>.dependencies]`), each with the bounds Poetry's constraint gives:
    names alone let the installer take the newest release at the resolution date (cleo's
    `pytest = "^6.2.1"` became pytest 7.3.1, `tox = "^3.20.1"` tox 4.5.0). What cannot be said
    in PEP 508 loses its bound or marker, never the dependency: nothing here fails the install."""
    if not isinstance(declared, dict):
        return []
    found: list[str] = []
    for key, spec in declared.items():
        name = str(key)
        if name.lower() != "python" and _PEP508_NAME.fullmatch(name):
            found += _poetry_requirements(name, spec)
    return found


# A distribution's (or an extra's) name as PEP 508 spells one.
_PEP508_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
# PEP 440: a release (with an epoch), then pre-, post- and dev-release parts; a local label.
_RELEASE = r"(?:\d+!)?\d+(?:\.\d+)*"
_SUFFIXES = r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?"
_LOCAL = r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?"
# One PEP 440 clause as uv reads it: a wildcard only after a release and only with == or !=;
# ~= with two release parts at least; no local label on an ordered comparison.
_PEP440_CLAUSE = re.compile(
    rf"(?:==|!=)(?:{_RELEASE}\.\*|{_RELEASE}{_SUFFIXES}{_LOCAL})|~=(?:\d+!)?\d+(?:\.\d+)+{_SUFFIXES}|(?:<=|>=|<|>){_RELEASE}{_SUFFIXES}",
    re.IGNORECASE,
)
# One Poetry clause: an operator (none: exactly that version), a version, a `.*`/`.x` wildcard.
_POETRY_CLAUSE = re.compile(r"(?P<op>\^|~=|~|===|==|=|!=|<>|<=|>=|<|>)?v?(?P<version>\d[0-9A-Za-z.!+_-]*?)(?P<wild>(?:\.[*xX])+)?")
_ANY = re.compile(r"[*xX](?:\.[*xX])*")
Clause = tuple[str, str]  # (PEP 440 operator, version)


def _poetry_requirements(name: str, spec: Any) -> list[str]:
    """The requirement(s) for one Poetry dependency: a constraint string, a table, or a list of
    tables each for its own Pythons (cleo's `mypy = [{version = "^1.0", python = "<3.8"}, …]`).
    The list keeps all its entries only when each one's Python marker can be written: one
    without its marker would clash with the others' bounds, so the name alone is safer then."""
    if isinstance(spec, list):
        made = [_poetry_requirement(name, entry, strict=True) for entry in spec]
        return [r for r in made if r is not None] if made and None not in made else [name]
    return [_poetry_requirement(name, spec, strict=False) or name]


def _poetry_requirement(name: str, spec: Any, strict: bool) -> str | None:
    """`name[extras]specifier; marker` for a constraint string or a table (version, extras,
    python, markers). A git/path/url source is the name alone (nothing is fetched from it here).
    A Python range that cannot be written as a marker drops the marker, or with `strict` (an
    entry of a list) gives None."""
    if isinstance(spec, str):
        return name + (_poetry_specifier(spec) or "")
    if not isinstance(spec, dict):
        return name
    if any(k in spec for k in ("git", "path", "url")):
        return name
    extras = [str(e) for e in spec.get("extras") or [] if _PEP508_NAME.fullmatch(str(e))]
    version = spec.get("version")
    specifier = (_poetry_specifier(version) or "") if isinstance(version, str) else ""
    python = spec.get("python")
    python_marker = _python_marker(python) if isinstance(python, str) else ""
    if python_marker is None and strict:
        return None
    markers = spec.get("markers")
    conditions = [m for m in (python_marker, " ".join(markers.split()) if isinstance(markers, str) else "") if m]
    marker = " and ".join(f"({m})" for m in conditions) if len(conditions) > 1 else "".join(conditions)
    return name + (f"[{','.join(extras)}]" if extras else "") + specifier + (f"; {marker}" if marker else "")


def _poetry_specifier(constraint: str) -> str | None:
    """A Poetry constraint as a PEP 440 specifier: "" for any version, None when it cannot be
    written as one (alternatives `||` that are not one range, a form Poetry reads and PEP 440
    has no word for)."""
    alternatives = _poetry_constraint(constraint)
    if alternatives is None:
        return None
    merged = _one_range(alternatives)
    return ",".join(op + v for op, v in merged) if merged is not None else None


def _poetry_constraint(constraint: str) -> list[list[Clause]] | None:
    """The `||` alternatives of a Poetry constraint, each its PEP 440 clauses (ANDed: `,` or
    spaces between them; `>= 1.2` is one clause), [] in one meaning any version."""
    alternatives: list[list[Clause]] = []
    for alternative in re.split(r"\s*\|\|?\s*", constraint.strip()):
        joined = re.sub(r"(\^|~=?|===?|!=|<>|[<>]=?|=)\s+", r"\1", alternative.strip())
        clauses: list[Clause] = []
        for token in (t for t in re.split(r"[,\s]+", joined) if t):
            converted = _poetry_clause(token)
            if converted is None:
                return None
            clauses += converted
        alternatives.append(clauses)
    return alternatives


def _poetry_clause(token: str) -> list[Clause] | None:
    """One Poetry clause as PEP 440 clauses: `^1.2.3` >=1.2.3,<2.0.0 (the first non-zero part
    is the one that may not change: `^0.2.3` <0.3.0, `^0.0.3` <0.0.4); `~1.2.3` >=1.2.3,<1.3.0
    (`~1` <2); `1.2.3` ==1.2.3; `1.2.*` ==1.2.*; `*` any; a PEP 440 clause as it is. None when
    the result would not be valid PEP 440 (uv refuses the whole install on one bad clause)."""
    if _ANY.fullmatch(token):
        return []
    m = _POETRY_CLAUSE.fullmatch(token)
    if m is None:
        return None
    op, version, wild = m.group("op") or "==", m.group("version"), m.group("wild")
    if op in ("^", "~"):
        release = re.match(r"\d+(?:\.\d+)*", version)
        if wild or release is None or version[release.end():].startswith(("!", ".")):
            return None
        parts = [int(p) for p in release.group().split(".")]
        index = _caret_part(parts) if op == "^" else min(1, len(parts) - 1)
        upper = [*parts[:index], parts[index] + 1, *[0] * (len(parts) - index - 1)]
        clauses = [(">=", version), ("<", ".".join(map(str, upper)))]
    else:
        op = {"=": "==", "<>": "!="}.get(op, op)
        if wild:
            if op not in ("==", "!="):
                return None
            version += ".*"
        clauses = [(op, version)]
    return clauses if all(_PEP440_CLAUSE.fullmatch(o + v) for o, v in clauses) else None


def _caret_part(parts: list[int]) -> int:
    """Which release part a caret lets change no more (Poetry's next breaking version): the
    major unless it is 0, then the minor unless 0, then the patch; never past what is written."""
    if parts[0] > 0 or len(parts) == 1:
        return 0
    if parts[1] > 0 or len(parts) == 2:
        return 1
    return 2


def _one_range(alternatives: list[list[Clause]]) -> list[Clause] | None:
    """The alternatives as one list of clauses, when they are one: a single alternative, any
    version in one of them, or `>=a,<b` ranges of plain releases that touch or overlap
    (`^6.2 || ^7.0` is >=6.2,<8.0). None otherwise: PEP 440 has no "or"."""
    if len(alternatives) == 1:
        return alternatives[0]
    if [] in alternatives:
        return []
    ranges: list[tuple[tuple[int, ...], str, tuple[int, ...], str]] = []
    for clauses in alternatives:
        if len(clauses) != 2 or clauses[0][0] != ">=" or clauses[1][0] != "<" or not all(re.fullmatch(r"\d+(?:\.\d+)*", v) for _, v in clauses):
            return None
        ranges.append((_release_key(clauses[0][1]), clauses[0][1], _release_key(clauses[1][1]), clauses[1][1]))
    ranges.sort()
    low, low_text, high, high_text = ranges[0]
    for start, _, end, end_text in ranges[1:]:
        if start > high:
            return None  # a gap between them
        if end > high:
            high, high_text = end, end_text
    return [(">=", low_text), ("<", high_text)]


def _release_key(release: str) -> tuple[int, ...]:
    """A plain release for comparing, trailing zeros dropped (2.0 is 2.0.0 and 2)."""
    parts = [int(p) for p in release.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _python_marker(constraint: str) -> str | None:
    """A Poetry `python = "…"` constraint as a PEP 508 marker ("" for any Python), its `||`
    alternatives as `or`: python_version for X.Y, python_full_version for X.Y.Z. None when
    it cannot be written (a wildcard other than ==X.Y.*, a clause that is not PEP 440)."""
    alternatives = _poetry_constraint(constraint)
    if alternatives is None:
        return None
    if [] in alternatives:
        return ""
    written: list[str] = []
    for clauses in alternatives:
        conditions: list[str] = []
        for op, version in clauses:
            if version.endswith(".*"):
                if op != "==" or not re.fullmatch(r"\d+\.\d+\.\*", version):
                    return None
                op, version = "==", version[:-2]
            field = "python_full_version" if version.count(".") >= 2 else "python_version"
            conditions.append(f'{field} {op} "{version}"')
        written.append(" and ".join(conditions))
    if len(written) == 1:
        return written[0]
    return " or ".join(f"({w})" if " and " in w else w for w in written)


def _requirement_files(tree: Tree, top: list[str]) -> tuple[str, ...]:
    found = []
    for folder in REQUIREMENT_FOLDERS:
        names = tree.names(folder.rstrip("/")) if folder else top
        for n in names:
            if n.endswith("/") or not re.search(r"\.(?:txt|in)$", n):
                continue
            stem = n.lower()
            if "req" not in stem and not folder:
                continue
            if any(re.search(rf"(?:^|[^a-z]){w}(?:[^a-z]|$)", stem) for w in TEST_NAMES):
                found.append(folder + n)
    if not found:
        for folder in TEST_FOLDERS:
            if folder in top:
                found += [folder + n for n in tree.names(folder.rstrip("/")) if "req" in n.lower() and re.search(r"\.(?:txt|in)$", n)]
    if not found:
        for folder in REQUIREMENT_FOLDERS:
            names = tree.names(folder.rstrip("/")) if folder else top
            found += [folder + n for n in names if ("req" in n.lower() or folder) and re.search(r"(?:^|[^a-z])dev(?:[^a-z]|$)", n.lower()) and n.endswith(".txt")]
    return tuple(sorted(found))


def _tox(tree: Tree, top: list[str], pyproject: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """tox's `[testenv]` extras, `-r` files and deps: from tox.ini, else from pyproject.toml's
    `[tool.tox] legacy_tox_ini` (tomli's, until 2024: the same ini text, in a string)."""
    parser = _ini(tree, "tox.ini") if "tox.ini" in top else None
    legacy = _get(pyproject, "tool", "tox", "legacy_tox_ini")
    if parser is None and isinstance(legacy, str):
        parser = _ini_text(legacy)
    if parser is None or not parser.has_section("testenv"):
        return None
    extras = [x.strip() for x in re.split(r"[\s,]+", parser.get("testenv", "extras", fallback="")) if x.strip() and ":" not in x]
    reqs: list[str] = []
    install: list[str] = []
    for line in parser.get("testenv", "deps", fallback="").splitlines():
        line = line.split("#")[0].strip()
        itself = _SELF_DEP.fullmatch(line)
        if itself:  # the project itself (`.[doc]`): its extras, never a second build of it beside the first
            extras += [x.strip() for x in (itself.group(1) or "").split(",") if x.strip()]
            continue
        if not line or re.match(r"^[\w{},.-]+:\s", line) or "{" in line:
            continue  # a factor-conditional line, or a substitution: not for every environment
        if line.startswith("-r"):
            reqs.append(line[2:].strip())
        elif not line.startswith("-") and line not in (".", "-e ."):
            install.append(line)
    return tuple(dict.fromkeys(extras)), tuple(reqs), tuple(install)


# a tox dep that names the project itself: `.`, `-e .`, `.[doc,test]`, `{toxinidir}[test]`
_SELF_DEP = re.compile(r"(?:-e\s*)?(?:\.|\{toxinidir\})/?(?:\[([\w.,\s-]*)\])?")


def _packages(tree: Tree, pyproject: dict[str, Any], name: str | None, top: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(import names of the package under test, the folders they import from)."""
    wanted = re.sub(r"[-.]+", "_", name).lower() if name else None
    explicit = _get(pyproject, "tool", "flit", "module", "name")
    candidates: list[tuple[str, str]] = []  # (root, import name)
    for root in ("src", "."):
        names = tree.names("src") if root == "src" else top
        if root == "src" and "src/" not in top:
            continue
        for n in names:
            prefix = "src/" if root == "src" else ""
            if n.endswith("/") and n[:-1].isidentifier() and n[:-1] not in NOT_PACKAGES and not n.startswith((".", "_")):
                if "__init__.py" in tree.names(prefix + n[:-1]):
                    candidates.append((root, n[:-1]))
            elif n.endswith(".py") and n[:-3].isidentifier() and n[:-3] not in NOT_PACKAGES and n not in ("setup.py", "noxfile.py", "conftest.py", "versioneer.py") and not n.startswith(("_", "test")):
                candidates.append((root, n[:-3]))
    for want in (explicit, wanted):
        hit = [c for c in candidates if want and c[1].lower() == str(want).lower()]
        if hit:
            return (hit[0][1],), (hit[0][0],)
    dirs = [c for c in candidates if c[0] == "src"] or candidates
    if not dirs:
        return (), ("src",) if "src/" in top else (".",)
    roots = tuple(dict.fromkeys(c[0] for c in dirs))
    return tuple(c[1] for c in dirs[:3]), roots
