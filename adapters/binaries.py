"""The real harness binaries, pinned per version in a folder benchtape manages.

`resolve("claude-code")` finds Claude Code 2.1.328 at
`<tools>/claude-code/2.1.328/node_modules/.bin/claude` (tools: `$BENCHTAPE_TOOLS`, else
`.benchtape/tools` under the current directory). It installs only when asked to
(`install=True`, the consent), with `npm install --prefix <that folder>` -- never `-g`,
so nothing outside the folder changes -- into a scratch folder renamed into place when
npm succeeded, so a failed install leaves nothing half-written. The versions the
recipes were verified on are `VERIFIED`; any other version resolves, named as
unverified, because its stream or transcript may differ from what the adapters expect.

    python -m benchtape.adapters.binaries --install claude-code codex    # what `make agents` runs

`latest` is not a version: `latest_version` asks npm (`npm view PACKAGE version`, the
registry's `latest` tag) which one it is today, and that version is what gets installed,
run and recorded; asking again later may give a newer one (a new cell, never a silent swap).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchtape.core.errors import BadInput, BenchtapeError, ExitCode

ENV_TOOLS = "BENCHTAPE_TOOLS"
VERSION = re.compile(r"(\d+\.\d+\.\d+(?:[-.][0-9A-Za-z.]+)?)")


@dataclass(frozen=True)
class Pin:
    package: str  # the npm package
    version: str  # the version the recipes in spec/real-binaries.md were verified on
    bin: str  # its executable in node_modules/.bin


VERIFIED: dict[str, Pin] = {
    "claude-code": Pin("@anthropic-ai/claude-code", "2.1.328", "claude"),
    "codex": Pin("@openai/codex", "0.169.0", "codex"),
}


@dataclass(frozen=True)
class Binary:
    tool: str
    version: str
    path: Path

    @property
    def verified(self) -> bool:
        return self.version == VERIFIED[self.tool].version

    @property
    def note(self) -> str | None:
        """What a user must know before trusting a run with this binary (None when verified)."""
        if self.verified:
            return None
        return (
            f"{self.tool} {self.version} is not the version benchtape was verified with "
            f"({VERIFIED[self.tool].version}): its output may differ from what the adapters expect"
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
    pin = VERIFIED.get(tool)
    if pin is None:
        raise BadInput(f"no pinned binary for harness {tool!r}", fix=f"use one of {', '.join(sorted(VERIFIED))}")
    return pin


def folder(tool: str, version: str, root: Path | None = None) -> Path:
    return (root or tools_root()) / tool / version


def binary_path(tool: str, version: str, root: Path | None = None) -> Path:
    return folder(tool, version, root) / "node_modules" / ".bin" / _pin(tool).bin


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
            command = f"python -m benchtape.adapters.binaries --install {tool}" + ("" if version == pin.version else f"@{version}")
            how = f"run `make agents`, or `{command}`" if version == pin.version else f"run `{command}`"
            raise BadInput(f"{tool} {version} is not installed (looked for {path})", fix=f"{how} (npm installs into that folder only)")
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
        raise BadInput(f"{path} does not say which {tool} version it is (`--version` gave none)", fix="point at a real Claude Code / Codex binary")
    return Binary(tool, found, Path(path))


_VERSIONS: dict[str, str | None] = {}


def version_of(path: Path | str) -> str | None:
    """`reported_version`, asked once per binary per process (each session records it)."""
    key = str(path)
    if key not in _VERSIONS:
        _VERSIONS[key] = reported_version(Path(path))
    return _VERSIONS[key]


def reported_version(path: Path) -> str | None:
    """The version a binary prints for `--version` (`2.1.328 (Claude Code)`, `codex-cli 0.169.0`)."""
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
        pin = VERIFIED[self.tool].version if self.tool in VERIFIED else "MAJOR.MINOR.PATCH"
        return f"{self} — nothing ran\n  fix: pin a version instead (`tool_version: \"{pin}\"`), or make the npm registry reachable"


def latest_version(tool: str) -> str:
    """The version npm's `latest` tag names for the tool's package, asked once per process."""
    pin = _pin(tool)
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
    npm = shutil.which("npm")
    if npm is None:
        raise BadInput(f"cannot install {tool} {version}: npm is not on PATH", fix="install Node.js and npm (Debian: apt-get install nodejs npm), then try again")
    target = folder(tool, version, root)
    scratch = target.with_name(f".{version}.partial")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    argv = [npm, "install", "--prefix", str(scratch), "--no-audit", "--no-fund", "--no-save", f"{pin.package}@{version}"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0 or not _runnable(scratch / "node_modules" / ".bin" / pin.bin):
        shutil.rmtree(scratch, ignore_errors=True)
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        raise BadInput(f"npm could not install {pin.package}@{version}: {' / '.join(tail) or f'exit {done.returncode}'}", fix="check the version exists (`npm view " + pin.package + " versions`) and that the npm registry is reachable")
    shutil.rmtree(target, ignore_errors=True)
    scratch.rename(target)
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


def _runnable(path: Path) -> bool:
    return path.exists() and os.access(path, os.X_OK)


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
