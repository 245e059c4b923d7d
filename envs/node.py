"""A Node project's environment: its dependencies installed once per lock file, by the package
manager the project names, into a cached node_modules that each verifier tree gets a linked
copy of.

Which manager: `packageManager` in package.json (`pnpm@9.5.0`, what corepack reads), else the
lock file (pnpm-lock.yaml: the pnpm release line its lockfileVersion belongs to; yarn.lock v1:
yarn classic; package-lock.json or npm-shrinkwrap.json: this host's npm); no lock file: npm,
resolving today's versions (said in the notes: it is not reproducible). pnpm and yarn are
installed pinned with npm into the cache (`.managers/`), never globally: corepack would fetch
them too, but its signature check fails on registries that do not serve npm's signing keys.
Yarn 2+ (berry) is `@yarnpkg/cli-dist` at the version `packageManager` or the checked-in
`yarnPath` release names (else the last of the line its lock file's `__metadata.version`
belongs to), never the repository's own copy, and it installs with the node-modules linker
whatever the project's `nodeLinker` says: Plug'n'Play keeps no node_modules to link into a
verifier tree, and what a test imports resolves alike from either. Not built: bun; its
verifier runs the toolchain as it is, and the detection says so.

The install runs with the network on this host, like a Python build, with `--ignore-scripts`:
a dependency's install script is someone else's code, and nothing in the box needs it to run
here (a native addon that needs building is a project image's job: Dockerfile.benchtape).
Each verifier tree gets the node_modules folders as hard links (a second, 15k files: `cp -al`),
so what a test run adds there (vitest's results cache) is the tree's own; the tree's
`node_modules/.bin` comes first on PATH, so `npx vitest` finds the project's vitest, never the
network."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import orjson

from benchtape.core.filelock import locked
from benchtape.envs.host_env import build_host_env
from benchtape.spec.project_tree import Tree

# A pnpm lock file's major version → the last pnpm of the line that writes it
PNPM_BY_LOCKFILE = {"9": "9.15.9", "6": "8.15.9", "5": "7.33.7"}
YARN_CLASSIC = "1.22.22"
# A yarn 2+ lock file's `__metadata.version` → the last yarn of the line that writes it
YARN_BERRY_BY_LOCKFILE = {"4": "2.4.3", "5": "3.8.7", "6": "3.8.7", "7": "3.8.7", "8": "4.18.1"}
_YARN_PATH = re.compile(r"^yarnPath:\s*['\"]?\S*?yarn-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\.c?js['\"]?\s*$", re.MULTILINE)
_BERRY_LOCK = re.compile(rb"^__metadata:\s*\n\s+version:\s*(\d+)", re.MULTILINE)
# yarn 2+'s settings for the build, as environment variables (they outrank .yarnrc.yml): no
# lifecycle script runs (the --ignore-scripts of npm), node_modules whatever `nodeLinker` says,
# no telemetry, the cache in the build's folder, and a lock file written by another release of
# the line is read rather than refused
BERRY_SETTINGS = {"YARN_ENABLE_SCRIPTS": "0", "YARN_NODE_LINKER": "node-modules", "YARN_ENABLE_TELEMETRY": "0", "YARN_ENABLE_GLOBAL_CACHE": "0", "YARN_ENABLE_IMMUTABLE_INSTALLS": "0", "YARN_ENABLE_PROGRESS_BARS": "0"}
LOCKS = ("pnpm-lock.yaml", "yarn.lock", "package-lock.json", "npm-shrinkwrap.json", "bun.lock", "bun.lockb")
CONFIGS = (".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ".pnpmfile.cjs")  # change an install: keyed with the lock file
# An .npmrc's settings the build keeps: how node_modules is laid out and peers resolved. The rest
# is dropped from the build's copy: `git=`, `script-shell=`, `node-options=`, `onload-script=`
# and their like name a program the install would run on this host.
NPMRC_KEPT = frozenset({
    "legacy-peer-deps", "strict-peer-deps", "strict-peer-dependencies", "auto-install-peers", "engine-strict",
    "node-linker", "shamefully-hoist", "hoist", "hoist-pattern", "public-hoist-pattern", "dedupe-peer-dependents",
    "resolve-peers-from-workspace-root", "link-workspace-packages", "prefer-workspace-packages", "shared-workspace-lockfile",
    "resolution-mode", "install-strategy", "install-links", "omit", "include", "save-exact", "lockfile-version",
})
_MANAGER = re.compile(r"^(npm|pnpm|yarn|bun)@(\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?)")


def package_manager(tree: Tree, top: list[str]) -> tuple[str | None, str | None, str | None, str | None]:
    """(manager, its version (None: this host's npm), the lock file, why it is not built) of the
    Node project at the top of `tree`."""
    lock = next((n for n in LOCKS if n in top), None)
    declared = _declared_manager(tree)
    if declared is not None:
        name, version = declared
    elif lock == "pnpm-lock.yaml":
        name, version = "pnpm", _pnpm_for(tree.read(lock) or b"")
    elif lock == "yarn.lock":
        name, version = "yarn", YARN_CLASSIC if b"yarn lockfile v1" in (tree.read(lock) or b"")[:500] else _berry_version(tree)
    elif lock in ("bun.lock", "bun.lockb"):
        name, version = "bun", None
    else:
        name, version = "npm", None
    if name == "npm":
        version = None  # this host's npm: `npm ci` reads every lockfileVersion
    why = None
    if name == "bun":
        why = "bun projects are not built (bun is not installed by benchtape)"
    elif name == "yarn" and version is None:
        why = "yarn.lock is a yarn 2+ lock file of a `__metadata.version` benchtape does not know: name the yarn with `packageManager` in package.json"
    elif name == "pnpm" and version is None:
        why = "pnpm-lock.yaml has a lockfileVersion benchtape does not know: name the pnpm with `packageManager` in package.json"
    return name, version, lock, why


def package_json(tree: Tree) -> dict[str, Any]:
    """The tree's top package.json ({} when absent or not an object)."""
    try:
        doc = orjson.loads(tree.read("package.json") or b"{}")
    except orjson.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


DEPENDENCY_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")


# What an install reads of package.json (scripts are never run: install_argv), by which the
# environment's cache is keyed: a release that bumps only `version` (slugify 2.1.1 → 2.2.0)
# shares its install with the one before, where each took its own ~70 s and 264 MB.
INSTALL_FIELDS = (*DEPENDENCY_FIELDS, "peerDependenciesMeta", "dependenciesMeta", "bundledDependencies", "bundleDependencies", "overrides", "resolutions", "pnpm", "workspaces", "packageManager", "name")


def install_digest(path: str, data: bytes) -> str:
    """The sha256 an environment is keyed by for one Node declaration: package.json's
    INSTALL_FIELDS; package-lock.json / npm-shrinkwrap.json without the root package's own
    version (it says it twice); any other file's (or an unreadable one's) bytes."""
    name = path.rsplit("/", 1)[-1]
    try:
        doc = orjson.loads(data) if name in ("package.json", "package-lock.json", "npm-shrinkwrap.json") else None
    except orjson.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        return hashlib.sha256(data).hexdigest()
    if name == "package.json":
        doc = {k: doc[k] for k in INSTALL_FIELDS if k in doc}
    else:
        doc = {k: v for k, v in doc.items() if k != "version"}
        root = (doc.get("packages") or {}).get("") if isinstance(doc.get("packages"), dict) else None
        if isinstance(root, dict):
            doc["packages"] = {**doc["packages"], "": {k: v for k, v in root.items() if k != "version"}}
    return "install:" + hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def dependency_changes(base: Tree, fix: Tree, lock: str | None) -> list[str]:
    """What a task's fix commit changes of the Node dependencies (express #7233 raised
    content-disposition from ^1.0.0 to ^2.0.1 with the code needing it): each changed, added or
    removed package, and the lock file when it changed; [] when the fix leaves them as they are."""
    old, new = _dependencies(package_json(base)), _dependencies(package_json(fix))
    changes = [f"{k} {old[k]} → {new[k]}" if k in old else f"{k} {new[k]} (added)" for k in sorted(new) if old.get(k) != new[k]]
    changes += [f"{k} (removed)" for k in sorted(old) if k not in new]
    if lock is not None and base.read(lock) != fix.read(lock):
        changes.append(f"{lock} changed")
    return changes


def _dependencies(pkg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for f in DEPENDENCY_FIELDS if isinstance(pkg.get(f), dict) for k, v in pkg[f].items()}


def _declared_manager(tree: Tree) -> tuple[str, str | None] | None:
    field = package_json(tree).get("packageManager")
    found = _MANAGER.match(field) if isinstance(field, str) else None
    return (found.group(1), found.group(2)) if found else None


def _berry_version(tree: Tree) -> str | None:
    """The yarn 2+ a project without `packageManager` uses: the release its .yarnrc.yml's
    `yarnPath` names (reselect: `.yarn/releases/yarn-3.2.4.cjs`), else the last of the line its
    lock file's metadata version belongs to."""
    named = _YARN_PATH.search((tree.read(".yarnrc.yml") or b"").decode("utf-8", "replace"))
    if named:
        return named.group(1)
    found = _BERRY_LOCK.search(tree.read("yarn.lock") or b"")
    return YARN_BERRY_BY_LOCKFILE.get(found.group(1).decode()) if found else None


def is_berry(manager: str | None, version: str | None) -> bool:
    """Whether this is yarn 2 or later (its own package, settings and flags)."""
    return manager == "yarn" and version is not None and not version.startswith(("0.", "1."))


def _pnpm_for(lock: bytes) -> str | None:
    found = re.search(rb"^lockfileVersion:\s*['\"]?(\d+)", lock, re.MULTILINE)
    return PNPM_BY_LOCKFILE.get(found.group(1).decode()) if found else None


@lru_cache(maxsize=4)
def node_version() -> str | None:
    """This host's node (`20.20.2`), or None: a node_modules is bound to the node it was installed for."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip().lstrip("v") or None


@lru_cache(maxsize=4)
def node_folder() -> str | None:
    """The folder of this host's node binary, by its real path (where a container mounts it):
    on the verifier's PATH, so `#!/usr/bin/env node` finds it there too (nvm, volta, asdf)."""
    node = shutil.which("node")
    return os.path.dirname(os.path.realpath(node)) if node else None


@lru_cache(maxsize=4)
def npm_folder() -> str | None:
    """npm's own package folder (its `bin/` holds npm's and npx's scripts), which a container
    box mounts beside node: benchtape's base image has neither."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    real = Path(os.path.realpath(npm))  # …/node_modules/npm/bin/npm-cli.js
    return str(real.parent.parent) if real.parent.name == "bin" and (real.parent / "npx").exists() else None


def link_npm(bin_folder: Path) -> None:
    """`npm` and `npx` in `bin_folder`, as links to npm's own scripts: what the verifier's PATH
    names in a container too (npm's folder mounted there), where a link to a link of the host's
    /usr/bin would lead nowhere. Node runs a script through its real path, so npx finds its
    package beside it."""
    npm = npm_folder()
    bin_folder.mkdir(parents=True, exist_ok=True)
    for name in ("npm", "npx") if npm else ():
        link = bin_folder / name
        if not link.is_symlink():
            link.symlink_to(f"{npm}/bin/{name}-cli.js")


def install_argv(manager: str, version: str | None, lock: str | None, folder: Path, cache: Path, *, pruned: bool = False) -> list[str]:
    """The install command of the project in `folder / 'tree'`, its manager installed first
    (into `cache / '.managers'`: a dot folder, which `task envs` never lists) when it is not this host's npm.
    `pruned`: package.json lost what `env.exclude` names (leave_out), so the lock file is
    reconciled with it (its other versions kept, the left-out entries dropped), not enforced."""
    if manager == "npm":
        npm = shutil.which("npm") or "npm"
        if lock in ("package-lock.json", "npm-shrinkwrap.json"):
            return [npm, "install" if pruned else "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
        return [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-package-lock"]
    exe = str(_manager_binary(manager, str(version), cache))
    if is_berry(manager, version):
        # no build step at all: `enableScripts: false` still runs a workspace's own postinstall
        # (the repository's code, on this host); yarn 2 spells it --skip-builds
        skip = "--skip-builds" if str(version).startswith("2.") else "--mode=skip-build"
        return ["env", *(f"{k}={v}" for k, v in BERRY_SETTINGS.items()), *(["YARN_ENABLE_IMMUTABLE_INSTALLS=false"] if pruned else []), f"YARN_CACHE_FOLDER={folder / 'yarn-cache'}", exe, "install", skip]
    if manager == "pnpm":
        frozen = ["--frozen-lockfile"] if lock == "pnpm-lock.yaml" and not pruned else []
        return [exe, "install", *frozen, "--ignore-scripts", "--ignore-pnpmfile", "--store-dir", str(folder / "pnpm-store"), "--config.confirmModulesPurge=false"]
    frozen = ["--frozen-lockfile"] if lock == "yarn.lock" and not pruned else []
    # --ignore-engines: yarn 1 refuses a whole install over one package's `engines` (immer's
    # semantic-release asks node 22; npm and pnpm only warn); the tests run on this host's node either way
    return [exe, "install", *frozen, "--ignore-scripts", "--ignore-engines", "--non-interactive", "--cache-folder", str(folder / "yarn-cache")]


def _manager_binary(manager: str, version: str, cache: Path) -> Path:
    from benchtape.tools.binaries import npm_install

    target = cache / ".managers" / f"{manager}@{version}"
    exe = target / "node_modules" / ".bin" / manager
    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(target.with_name(f".{target.name}.lock")):  # two builds needing one manager install it once
        if not exe.exists():
            npm_install("@yarnpkg/cli-dist" if is_berry(manager, version) else manager, version, manager, target)
    return exe


def leave_out(work: Path, names: tuple[str, ...]) -> list[str]:
    """`env.exclude` for a Node project: the packages it names removed from the top
    package.json's dependency fields (a benchmark's dependency the registry no longer serves:
    jshttp/cookie's top-sites 1.1.225, which stopped its whole `npm ci`). Returns those removed."""
    if not names:
        return []
    path = work / "package.json"
    try:
        pkg = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    removed: list[str] = []
    for field in DEPENDENCY_FIELDS:
        declared = pkg.get(field) if isinstance(pkg, dict) else None
        if isinstance(declared, dict):
            removed += [name for name in names if declared.pop(name, None) is not None]
    if removed:
        path.write_bytes(orjson.dumps(pkg, option=orjson.OPT_INDENT_2) + b"\n")
    return list(dict.fromkeys(removed))


def build_modules(work: Path, argv: list[str], variables: dict[str, str], cache: Path, run: Callable[[list[str], Path, dict[str, str], str], None]) -> tuple[str, ...]:
    """Install the dependencies in `work` (a copy of the base tree); the node_modules folders
    the install made (the top one, and a workspace package's own), relative to `work`."""
    env = {**build_host_env(), **variables, "CI": "1", "npm_config_cache": str(cache / ".npm-cache"), "npm_config_update_notifier": "false", "COREPACK_ENABLE_STRICT": "0", "YARN_IGNORE_PATH": "1"}
    tame_configs(work)
    run(argv, work, env, "installing the Node dependencies")
    found = modules_in(work)
    if not found and not _declares_dependencies(work):
        # a package that needs nothing (its tests use node:test and node:assert alone): npm
        # makes no node_modules, and none is needed; an empty one stands for "installed"
        (work / "node_modules").mkdir()
        found = ("node_modules",)
    return found


def _declares_dependencies(work: Path) -> bool:
    """Whether the top package.json declares any dependency or workspace (unreadable: assumed so,
    so that an install that made nothing stays an error)."""
    try:
        pkg = orjson.loads((work / "package.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return True
    return not isinstance(pkg, dict) or bool(_dependencies(pkg)) or bool(pkg.get("workspaces"))


def tame_configs(work: Path) -> list[str]:
    """What in the build's copy of the tree would have the install run the repository's code on
    this host, taken out: pnpm's hooks file (`--ignore-pnpmfile` too), every .npmrc setting
    but the layout's (NPMRC_KEPT), and of .yarnrc.yml likewise (YARNRC_KEPT: its `plugins` and
    `yarnPath` are the repository's scripts that yarn 2+ loads). A yarn-path in .yarnrc is
    ignored by YARN_IGNORE_PATH. Returns what was dropped, for the build's notes."""
    dropped: list[str] = _tame_yarnrc(work / ".yarnrc.yml")
    hooks = work / ".pnpmfile.cjs"
    if hooks.is_file() or hooks.is_symlink():
        hooks.unlink()
        dropped.append(".pnpmfile.cjs")
    npmrc = work / ".npmrc"
    if npmrc.is_symlink():
        npmrc.unlink()
        dropped.append(".npmrc (a link)")
    elif npmrc.is_file():
        kept = []
        for line in npmrc.read_text(errors="replace").splitlines():
            key = line.split("=", 1)[0].strip().lower()
            if not line.strip() or line.lstrip().startswith(("#", ";")) or key in NPMRC_KEPT:
                kept.append(line)
            else:
                dropped.append(f".npmrc {key}")
        npmrc.write_text("\n".join(kept) + "\n")
    return dropped


# A .yarnrc.yml's settings the build keeps: how node_modules is laid out and the lock file read,
# as NPMRC_KEPT for an .npmrc. The rest is dropped from the build's copy: `plugins` and `yarnPath`
# are the repository's scripts that yarn loads, `npmRegistryServer` a host the repository picks,
# `cacheFolder` a path anywhere (YARN_CACHE_FOLDER outranks it anyway), `injectEnvironmentFiles`
# a file read into the environment
YARNRC_KEPT = frozenset({
    "nodeLinker", "nmHoistingLimits", "nmMode", "nmSelfReferences", "pnpMode", "packageExtensions", "enableTransparentWorkspaces",
    "compressionLevel", "checksumBehavior", "enableGlobalCache", "supportedArchitectures", "defaultSemverRangePrefix", "enableImmutableInstalls",
})


def _tame_yarnrc(path: Path) -> list[str]:
    """.yarnrc.yml with the layout's settings only (YARNRC_KEPT); one it cannot read, or a
    link, goes whole."""
    import yaml

    if path.is_symlink():
        path.unlink()
        return [".yarnrc.yml (a link)"]
    if not path.is_file():
        return []
    try:
        doc = yaml.safe_load(path.read_text(errors="replace"))
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict):
        path.unlink()
        return [".yarnrc.yml (unreadable)"]
    gone = [str(key) for key in doc if key not in YARNRC_KEPT]
    if gone:
        path.write_text(yaml.safe_dump({k: v for k, v in doc.items() if k not in gone}, sort_keys=False))
    return [f".yarnrc.yml {key}" for key in gone]


def installed(modules: Path) -> tuple[str, ...]:
    """`name==version` of each package directly in `modules` (scoped ones too; pnpm's are
    links into its store): what a verifier run resolved its imports from, as a venv's list is."""
    found: list[str] = []
    for entry in sorted(modules.iterdir()) if modules.is_dir() else []:
        if entry.name.startswith("."):
            continue
        for package in sorted(entry.iterdir()) if entry.name.startswith("@") and entry.is_dir() else [entry]:
            try:
                doc = orjson.loads((package / "package.json").read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if isinstance(doc, dict) and isinstance(doc.get("version"), str):
                found.append(f"{doc.get('name') or package.name}=={doc['version']}")
    return tuple(found)


def modules_in(work: Path) -> tuple[str, ...]:
    """Every node_modules folder in `work` that is not inside another one."""
    found: list[str] = []
    for dirpath, dirnames, _ in os.walk(work):
        if "node_modules" in dirnames:
            found.append(os.path.relpath(os.path.join(dirpath, "node_modules"), work))
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", ".git")]
    return tuple(sorted(found))


def modules_digest(root: Path, folders: tuple[str, ...], *, skip_bytecode: bool = False) -> str:
    """One hash of every file's path, size and modification time under `folders` of `root`:
    the linked copies share the cache's files, so a run that rewrote one in place (a
    patch-package step, code writing to a dependency) changed the cache for every tree after
    it; a changed digest says so before the next tree is linked. `find` lists them (~60 ms for
    ufo's 15k files, where a Python walk took 0.24 s); the order is a folder's own, the same
    while nothing in it changes. `skip_bytecode`: a venv's, whose `__pycache__/` folders any
    import may fill (Python writes them where it can), left out."""
    import hashlib

    skipped = ["-name", "__pycache__", "-prune", "-o"] if skip_bytecode else []
    digest = hashlib.sha256()
    for rel in folders:
        done = subprocess.run(["find", ".", *skipped, "-type", "f", "-printf", "%P\\0%s\\0%T@\\n"], cwd=root / rel, capture_output=True, timeout=600)
        digest.update(rel.encode() + b"\0" + done.stdout + str(done.returncode).encode())
    return digest.hexdigest()


def link_modules(source: Path, work: Path, folders: tuple[str, ...]) -> list[str]:
    """Each of `folders` of the built tree `source` into the fresh tree `work`, as hard links
    (`cp -al`: symlinks stay symlinks, pnpm's relative ones among them), unless the tree has one."""
    linked: list[str] = []
    for rel in folders:
        src, dest = source / rel, work / rel
        if not src.is_dir() or dest.exists() or dest.is_symlink() or not dest.parent.is_dir():
            continue
        done = subprocess.run(["cp", "-al", str(src), str(dest)], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            shutil.rmtree(dest, ignore_errors=True)
            done = subprocess.run(["cp", "-a", str(src), str(dest)], capture_output=True, text=True, timeout=1200)  # another file system: a copy
            if done.returncode != 0:
                raise OSError(f"copying {rel} into the verifier's tree failed: {done.stderr.strip()[-300:]}")
        linked.append(rel)
    return linked


def describe(manager: str | None, version: str | None, lock: str | None) -> str:
    """`pnpm 9.5.0 from pnpm-lock.yaml`, `npm (no lock file: today's versions)`."""
    who = f"{manager} {version}" if version else f"{manager or 'npm'}"
    return f"{who} from {lock}" if lock else f"{who} (no lock file: the versions the registry resolves today)"
