"""The real harness binaries, pinned per version in a folder benchtape manages.

`resolve("claude-code")` finds Claude Code 2.1.328 at
`<tools>/claude-code/2.1.328/node_modules/.bin/claude` (tools: `$BENCHTAPE_TOOLS`, else
`.benchtape/tools` under the current directory). It installs only when asked to
(`install=True`, the consent), with `npm install --prefix <that folder>` -- never `-g`,
so nothing outside the folder changes -- into a scratch folder renamed into place when
npm succeeded, so a failed install leaves nothing half-written. The versions the
recipes were verified on are `VERIFIED`; any other version resolves, named as
unverified, because its stream or transcript may differ from what the adapters expect.

    benchtape tools install claude-code codex gemini-cli    # what `make agents` runs

`latest` is not a version: `latest_version` asks npm (`npm view PACKAGE version`, the
registry's `latest` tag) which one it is today, and that version is what gets installed,
run and recorded; asking again later may give a newer one (a new cell, never a silent swap).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput, BenchtapeError, ExitCode

ENV_TOOLS = "BENCHTAPE_TOOLS"
VERSION = re.compile(r"(\d+\.\d+\.\d+(?:[-.][0-9A-Za-z.]+)?)")


@dataclass(frozen=True)
class Pin:
    """A harness's install recipe: which registry package, at which verified version, gives
    which executable. A plugin harness declares one as its adapter's `install`."""

    package: str  # the npm package (kind npm), or the PyPI distribution (kind pypi)
    version: str  # the version the recipes in spec/real-binaries.md were verified on
    bin: str  # its executable: in node_modules/.bin (npm), in the venv's bin/ (pypi)
    kind: str = "npm"  # npm: `npm install --prefix FOLDER`; pypi: a venv in FOLDER, `pip install PACKAGE==VERSION`


VERIFIED: dict[str, Pin] = {
    "claude-code": Pin("@anthropic-ai/claude-code", "2.1.328", "claude"),
    "codex": Pin("@openai/codex", "0.169.0", "codex"),
    "gemini-cli": Pin("@google/gemini-cli", "0.61.0", "gemini"),
    "qwen-code": Pin("@qwen-code/qwen-code", "0.24.4", "qwen"),
    "mini-swe-agent": Pin("mini-swe-agent", "2.4.6", "mini", kind="pypi"),
    "opencode": Pin("opencode-ai", "1.18.33", "opencode"),
    "aider": Pin("aider-chat", "0.86.2", "aider", kind="pypi"),
}
INSTALLED_MARK = ".benchtape-installed"  # a pypi tool's venv is made in place (its scripts name their folder): this file says it finished


def pins() -> dict[str, Pin]:
    """Every install recipe: benchtape's own, then those installed plugin harnesses declare."""
    found = dict(VERIFIED)
    from benchtape.core.harnesses import plugins

    for plugin in plugins():
        if not plugin.usable or plugin.name in found:
            continue
        try:
            pin = getattr(plugin_adapter(plugin.target), "install", None)
        except Exception:  # noqa: BLE001 - a broken plugin must not stop the others being listed
            continue
        if isinstance(pin, Pin):
            found[plugin.name] = pin
    return found


def plugin_adapter(target: str) -> Any:
    """A plugin harness's adapter, made from its entry point's `package.module:Class` (a plugin's
    module is its own package's, never one of benchtape's rooms): what its `install` recipe is
    read from, and what `harness_listing` tries, so a plugin that cannot load says why."""
    import importlib

    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)()


@dataclass(frozen=True)
class Binary:
    tool: str
    version: str
    path: Path

    @property
    def verified(self) -> bool:
        return self.version == _pin(self.tool).version

    @property
    def note(self) -> str | None:
        """What a user must know before trusting a run with this binary (None when verified)."""
        if self.verified:
            return None
        return (
            f"{self.tool} {self.version} is not the version benchtape was verified with "
            f"({_pin(self.tool).version}): its output may differ from what the adapters expect"
        )


def tools_root(cwd: Path | None = None) -> Path:
    """Where binaries are installed: `$BENCHTAPE_TOOLS`, else `.benchtape/tools` here (project-local)."""
    env = os.environ.get(ENV_TOOLS)
    return Path(env) if env else (cwd or Path.cwd()) / ".benchtape" / "tools"


def search_roots() -> list[Path]:
    """Where an installed binary is looked for: the install root, then the benchtape checkout's
    own `.benchtape/tools` (where `make agents` put them), so a bench run from any folder finds them."""
    roots = [tools_root()]
    if not os.environ.get(ENV_TOOLS):
        checkout = Path(__file__).resolve().parents[1] / ".benchtape" / "tools"
        if checkout not in roots:
            roots.append(checkout)
    return roots


def _pin(tool: str) -> Pin:
    pin = VERIFIED.get(tool) or pins().get(tool)
    if pin is None:
        raise BadInput(f"no pinned binary for harness {tool!r}", fix=f"use one of {', '.join(sorted(pins()))}")
    return pin


def folder(tool: str, version: str, root: Path | None = None) -> Path:
    return (root or tools_root()) / tool / version


def binary_path(tool: str, version: str, root: Path | None = None) -> Path:
    pin = _pin(tool)
    if pin.kind == "pypi":
        return folder(tool, version, root) / "bin" / pin.bin
    return folder(tool, version, root) / "node_modules" / ".bin" / pin.bin


def resolve(tool: str, version: str | None = None, *, root: Path | None = None, install: bool = False) -> Binary:
    """The installed binary of `tool` at `version` (default: the verified one).

    Raises BadInput when it is not installed and `install` is False (naming the folder
    and the command that installs it), or when the binary reports another version.
    """
    pin = _pin(tool)
    version = version or pin.version
    if root is None:
        root = next((r for r in search_roots() if _runnable(binary_path(tool, version, r))), tools_root())
    path = binary_path(tool, version, root)
    if not _runnable(path):
        if not install:
            command = f"benchtape tools install {tool}" + ("" if version == pin.version else f"@{version}")
            how = f"run `make agents`, or `{command}`" if version == pin.version else f"run `{command}`"
            raise BadInput(f"{tool} {version} is not installed (looked for {path})", fix=f"{how} ({'pip' if pin.kind == 'pypi' else 'npm'} installs into that folder only)")
        install_version(tool, version, root)
    found = reported_version(path)
    if found != version:
        raise BadInput(
            f"{path} reports version {found or '(none)'}, not {version}",
            fix=f"remove {folder(tool, version, root)} and install it again",
        )
    return Binary(tool, version, path)


_DEFAULTS: dict[str, str] = {}


def default_binary(tool: str) -> str:
    """What runs when a bench names no `binary:`: the pinned, verified binary when it is
    installed, else the tool's own name on PATH (asked once per process)."""
    if tool not in _DEFAULTS:
        try:
            _DEFAULTS[tool] = str(resolve(tool).path)
        except BadInput:
            _DEFAULTS[tool] = _pin(tool).bin
    return _DEFAULTS[tool]


def identify(tool: str, path: Path | str) -> Binary:
    """A binary found elsewhere (e.g. `harness_config.binary`), with the version it reports."""
    _pin(tool)
    found = reported_version(Path(path))
    if found is None:
        raise BadInput(f"{path} does not say which {tool} version it is (`--version` gave none)", fix=f"point at a real {tool} binary")
    return Binary(tool, found, Path(path))


_VERSIONS: dict[str, str | None] = {}


def version_of(path: Path | str) -> str | None:
    """`reported_version`, asked once per binary per process (each session records it)."""
    key = str(path)
    if key not in _VERSIONS:
        _VERSIONS[key] = reported_version(Path(path))
    return _VERSIONS[key]


def reported_version(path: Path) -> str | None:
    """The version a binary prints for `--version` (`2.1.328 (Claude Code)`, `codex-cli 0.169.0`);
    for a PyPI tool in its venv, the version of the distribution pip installed there (some have
    no `--version`, and running one to ask may start it: mini-swe-agent makes its config folder);
    for an npm package's bin link, the version in that package's package.json (asking Gemini
    CLI or opencode starts the whole agent: ~2 s of CPU, twice for each run)."""
    installed_as = _venv_version(path) or _npm_version(path)
    if installed_as is not None:
        return installed_as
    try:
        out = subprocess.run([str(path), "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = VERSION.search(out.stdout or "")
    return found.group(1) if found and out.returncode == 0 else None


LATEST = "latest"
_LATEST: dict[str, str] = {}


class Unresolvable(BenchtapeError):
    """`latest` could not be turned into a version (npm missing, the registry unreachable): nothing ran."""

    exit_code = ExitCode.BLOCKED

    def __init__(self, tool: str, why: str):
        self.tool, self.why = tool, why
        super().__init__(f"{tool}: cannot resolve `latest`: {why}")

    def render(self) -> str:
        pin = pins()[self.tool].version if self.tool in pins() else "MAJOR.MINOR.PATCH"
        return f"{self} — nothing ran\n  fix: pin a version instead (`tool_version: \"{pin}\"`), or make the npm registry reachable"


def latest_version(tool: str) -> str:
    """The version npm's `latest` tag names for the tool's package, asked once per process (a
    PyPI tool's: the version benchtape ships)."""
    pin = _pin(tool)
    if pin.kind != "npm":
        # a PyPI tool's `latest` is the release benchtape ships (the one its adapter was verified
        # on), never whatever PyPI published since; any other release is asked for by pinning it
        return pin.version
    if tool not in _LATEST:
        npm = shutil.which("npm")
        if npm is None:
            raise Unresolvable(tool, "npm is not on PATH (Debian: apt-get install nodejs npm)")
        try:
            done = subprocess.run([npm, "view", pin.package, "version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise Unresolvable(tool, f"`npm view {pin.package} version` took longer than 60s") from None
        found = VERSION.fullmatch((done.stdout or "").strip())
        if done.returncode != 0 or found is None:
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-2:]
            raise Unresolvable(tool, f"`npm view {pin.package} version` failed: {' / '.join(tail) or f'exit {done.returncode}'}")
        _LATEST[tool] = found.group(1)
    return _LATEST[tool]


_PUBLISHED: dict[tuple[str, str], bool | None] = {}


def published(tool: str, version: str) -> bool | None:
    """Whether the npm registry has this version of the tool's package, asked once per process:
    False only on the registry's own "no such version" answer; None when it cannot be told (no
    npm, no registry, a PyPI tool). A pinned version nobody published passed the preview and
    failed only at the install its consent started."""
    pin = _pin(tool)
    npm = shutil.which("npm")
    if pin.kind != "npm" or npm is None:
        return None
    if (tool, version) not in _PUBLISHED:
        try:
            done = subprocess.run([npm, "view", f"{pin.package}@{version}", "version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return None
        said = (done.stdout or "").split()
        if done.returncode == 0:
            _PUBLISHED[tool, version] = any(version in word for word in said)
        else:
            _PUBLISHED[tool, version] = False if "E404" in (done.stderr or "") else None
    return _PUBLISHED[tool, version]


def resolve_version(tool: str, asked: str) -> str:
    """The version `asked` means today: itself when pinned, npm's `latest` otherwise."""
    return latest_version(tool) if asked == LATEST else asked


def installed(tool: str, version: str) -> Binary | None:
    """The binary of `tool` at `version` when it is installed in one of the search roots (no npm, no install)."""
    for root in search_roots():
        path = binary_path(tool, version, root)
        if _runnable(path):
            return Binary(tool, version, path)
    return None


def install_version(tool: str, version: str, root: Path | None = None) -> Path:
    """`npm install --prefix` the package at `version` into its folder; the folder appears only on success."""
    pin = _pin(tool)
    if pin.kind == "pypi":
        return _install_pypi(tool, pin, version, root)
    return npm_install(pin.package, version, pin.bin, folder(tool, version, root))


def npm_install(package: str, version: str, bin_name: str, target: Path) -> Path:
    """`npm install --prefix` `package@version` into `target` (npm checks each tarball against
    the registry's integrity hash), which appears only once its `bin_name` runs: an agent CLI,
    or a project's package manager (benchtape.envs.node)."""
    npm = shutil.which("npm")
    if npm is None:
        raise BadInput(f"cannot install {package} {version}: npm is not on PATH", fix="install Node.js and npm (Debian: apt-get install nodejs npm), then try again")
    scratch = target.with_name(f".{target.name}.partial")
    shutil.rmtree(scratch, ignore_errors=True)
    made = not scratch.parent.exists()  # the tool's folder, made for this install: a failed one leaves none behind
    scratch.mkdir(parents=True)
    argv = [npm, "install", "--prefix", str(scratch), "--no-audit", "--no-fund", "--no-save", f"{package}@{version}"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0 or not _runnable(scratch / "node_modules" / ".bin" / bin_name):
        shutil.rmtree(scratch, ignore_errors=True)
        if made:
            shutil.rmtree(scratch.parent, ignore_errors=True)
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        raise BadInput(f"npm could not install {package}@{version}: {' / '.join(tail) or f'exit {done.returncode}'}", fix="check the version exists (`npm view " + package + " versions`) and that the npm registry is reachable")
    shutil.rmtree(target, ignore_errors=True)
    scratch.rename(target)
    return target


def _install_pypi(tool: str, pin: Pin, version: str, root: Path | None) -> Path:
    """A venv of its own in the version folder, `pip install PACKAGE==VERSION` into it; made in
    place (a venv's scripts name its folder, so it cannot be renamed into place) and marked
    finished last: an unfinished folder is removed, and never counts as installed."""
    target = folder(tool, version, root)
    shutil.rmtree(target, ignore_errors=True)
    made = not target.parent.exists()  # the tool's folder, made for this install: a failed one leaves none behind
    target.parent.mkdir(parents=True, exist_ok=True)
    python = os.environ.get("BENCHTAPE_TOOLS_PYTHON") or sys.executable
    steps = [[python, "-m", "venv", str(target)], [str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q", f"{pin.package}=={version}"]]
    for argv in steps:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(target.parent if made else target, ignore_errors=True)
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
            raise BadInput(f"could not install {pin.package}=={version}: {' / '.join(tail) or f'exit {done.returncode}'}", fix=f"check the version exists (`pip index versions {pin.package}`) and that PyPI is reachable")
    if not (target / "bin" / pin.bin).exists():
        shutil.rmtree(target, ignore_errors=True)
        raise BadInput(f"{pin.package}=={version} installed no `{pin.bin}` executable", fix="check the install recipe's `bin`")
    (target / INSTALLED_MARK).write_text(f"{pin.package}=={version}\n")
    return target


def direct(path: Path | str) -> tuple[str, dict[str, str]]:
    """The executable that a pinned binary's npm entry point would exec, and the environment
    it would add, so a place without node (benchtape's base image) can start it directly.

    Claude Code's entry is already a native binary. Codex's is `codex.js`, a node launcher
    that execs the musl binary of the platform package with two variables set; anything
    else is returned as it is."""
    real = Path(os.path.realpath(path))
    if real.name != "codex.js" or real.parent.name != "bin":
        return str(path), {}
    package = real.parent.parent  # node_modules/@openai/codex
    machine = os.uname().machine
    triple, platform = {"x86_64": ("x86_64-unknown-linux-musl", "codex-linux-x64"), "aarch64": ("aarch64-unknown-linux-musl", "codex-linux-arm64")}.get(machine, ("", ""))
    native = package.parent / platform / "vendor" / triple / "bin" / "codex"
    if not triple or not _runnable(native):
        return str(path), {}
    return str(native), {"CODEX_MANAGED_PACKAGE_ROOT": str(package), "CODEX_MANAGED_BY_NPM": "1"}


def _venv_version(path: Path) -> str | None:
    """The version in the METADATA of the distribution a tool venv was made for (its INSTALLED_MARK
    names it), or None when `path` is not in such a venv."""
    venv = Path(os.path.realpath(path)).parent.parent if not path.is_symlink() else path.parent.parent
    mark = venv / INSTALLED_MARK
    if not mark.is_file() or not (venv / "pyvenv.cfg").is_file():
        return None
    package = mark.read_text(encoding="utf-8").split("==", 1)[0].strip()
    wanted = re.sub(r"[-_.]+", "_", package).lower()
    for meta in venv.glob("lib/python*/site-packages/*.dist-info/METADATA"):
        if meta.parent.name.removesuffix(".dist-info").rsplit("-", 1)[0].lower().replace("-", "_").replace(".", "_") == wanted:
            found = re.search(r"^Version: (\S+)$", meta.read_text(encoding="utf-8", errors="replace"), re.M)
            return found.group(1) if found else None
    return None


def _npm_version(path: Path) -> str | None:
    """The version of the npm package whose `bin` the link `node_modules/.bin/NAME` points into
    (what npm installed there), or None when `path` is no such link."""
    if not path.is_symlink() or path.parent.name != ".bin" or path.parent.parent.name != "node_modules":
        return None
    modules = Path(os.path.realpath(path.parent.parent))
    target = Path(os.path.realpath(path))
    for package in target.parents:
        if package == modules or modules not in package.parents:
            return None
        manifest = package / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        bins = data.get("bin") if isinstance(data, dict) else None
        named = {str(data.get("name", "")).rsplit("/", 1)[-1]} if isinstance(bins, str) else set(bins) if isinstance(bins, dict) else set()
        if path.name in named and isinstance(data.get("version"), str):
            return str(data["version"])
    return None


def _runnable(path: Path) -> bool:
    if path.parent.name == "bin" and path.parent.parent.name != ".bin" and (path.parent.parent / "pyvenv.cfg").exists():
        return path.exists() and os.access(path, os.X_OK) and (path.parent.parent / INSTALLED_MARK).exists()  # a pypi tool's venv, finished
    return path.exists() and os.access(path, os.X_OK)


def installed_versions(tool: str) -> list[Binary]:
    """Every version of `tool` in the search roots' version folders (no `--version` asked: a
    folder's name is its version, checked when a run resolves it)."""
    found: dict[str, Binary] = {}
    for root in search_roots():
        base = root / tool
        if not base.is_dir():
            continue
        for sub in sorted(base.iterdir()):
            if sub.name.startswith(".") or sub.name in found:
                continue
            path = binary_path(tool, sub.name, root)
            if _runnable(path):
                found[sub.name] = Binary(tool, sub.name, path)
    return list(found.values())


def harness_listing() -> list[dict[str, Any]]:
    """Each harness this process can run: who brought it (benchtape or a plugin package, with its
    version), its install recipe, the versions installed in the tools folders and where; a
    plugin that fails to load says why instead of stopping the listing."""
    from benchtape.core.harnesses import installed

    every = pins()
    rows: list[dict[str, Any]] = []
    for h in installed():
        row: dict[str, Any] = {"harness": h.name, "package": h.package, "version": h.version, "target": h.target}
        if h.shadowed:
            row["problem"] = f"a plugin may not take the built-in name {h.name!r}: never used"
        elif h.misnamed:
            row["problem"] = f"{h.name!r} is no harness name (lowercase letters, digits, '.', '_' and '-'): never used; rename the entry point in {h.package}'s benchtape.harnesses group"
        elif h.package != "benchtape":
            try:
                from benchtape.core.canonical import register_names

                register_names(h.name, getattr(plugin_adapter(h.target), "tool_names", None) or {})  # a tool named with no canonical kind is said here too
            except Exception as exc:  # noqa: BLE001
                row["problem"] = f"{type(exc).__name__}: {exc}"
        pin = every.get(h.name)
        if pin is not None and h.usable:
            row["install"] = {"package": pin.package, "version": pin.version, "kind": pin.kind}
            row["installed"] = [{"version": b.version, "path": str(b.path), "verified": b.verified} for b in installed_versions(h.name)]
        rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    """`--install TOOL[@VERSION]...` installs (consent given by the flag); without it, only resolves."""
    install = "--install" in argv
    wanted = [a for a in argv if not a.startswith("--")] or sorted(VERIFIED)
    code = 0
    for spec in wanted:
        tool, _, version = spec.partition("@")
        try:
            binary = resolve(tool, version or None, install=install)
        except BadInput as exc:
            print(f"error: {exc.render()}", file=sys.stderr)
            code = 2
            continue
        print(f"{binary.tool} {binary.version}: {binary.path}")
        if binary.note:
            print(f"  note: {binary.note}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
