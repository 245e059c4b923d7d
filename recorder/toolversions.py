"""Which program an evaluation's step runs: its tool version resolved, and where that binary is.

A cell's identity names the version a tool resolved to, so it must be known before the cell
is looked up (and before anything is installed or run):
- the mock harness is part of benchtape: its version is benchtape's;
- a bench that names its own `harness_config.binary` runs that program: its version is what
  the program reports (a pinned `tool_version` it does not match is refused);
- otherwise `latest` asks npm which version that is today, and a pinned version is itself;
  the binary is the one installed in benchtape's version-keyed folder, or — with consent —
  installed there from npm (`npm install --prefix`, never `-g`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from benchtape.core.errors import PreflightBlocked
from benchtape.core.version import VERSION as BENCHTAPE_VERSION
from benchtape.tools import binaries

MOCK = "mock"
BUILT_IN = frozenset({MOCK, "oracle", "command"})  # harnesses benchtape ships (no binary, its own version; `command` runs what its config names)


@dataclass(frozen=True)
class Resolved:
    """One (harness, asked version, bench binary) resolved."""

    harness: str
    asked: str
    version: str
    binary: Path | None  # None: not installed yet (or the mock, which needs none)
    source: str  # benchtape | bench | npm (its latest) | pypi (`latest` of a PyPI tool: the release benchtape pins) | pinned | plugin
    note: str | None = None  # e.g. a version the adapters were not verified with

    @property
    def needs_install(self) -> bool:
        return self.source not in ("benchtape", "plugin") and self.binary is None

    def describe(self) -> str:
        where = "built in" if self.source in ("benchtape", "plugin") else (str(self.binary) if self.binary else f"not installed: would install into {binaries.folder(self.harness, self.version)}")
        how = {"npm": "npm's latest", "pypi": "the PyPI release benchtape pins", "bench": "the bench's harness_config.binary", "pinned": "pinned", "benchtape": "benchtape's own", "plugin": "its plugin package's"}[self.source]
        return f"{self.harness} {self.asked} → {self.version} ({how}; {where})"


class VersionResolver:
    """Resolves each (harness, asked, binary) once per invocation; installs only when told to."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str | None], Resolved] = {}

    def resolve(self, harness: str, asked: str, bench_binary: str | None = None) -> Resolved:
        key = (harness, asked, bench_binary)
        if key not in self._seen:
            self._seen[key] = self._resolve(harness, asked, bench_binary)
        return self._seen[key]

    def all(self) -> list[Resolved]:
        return list(self._seen.values())

    def _resolve(self, harness: str, asked: str, bench_binary: str | None) -> Resolved:
        if harness in BUILT_IN:
            return Resolved(harness, asked, BENCHTAPE_VERSION, None, "benchtape")
        if harness not in binaries.pins():  # a plugin harness without an install recipe: its package's version
            from benchtape.core.harnesses import plugins

            package = next((p.version for p in plugins() if p.name == harness), BENCHTAPE_VERSION)
            return Resolved(harness, asked, package, None, "plugin")
        if bench_binary:
            found = binaries.reported_version(Path(bench_binary))
            if found is None:
                raise PreflightBlocked([f"{harness}: harness_config.binary {bench_binary} does not say which version it is (`--version` gave none)"])
            if asked != binaries.LATEST and found != asked:
                raise PreflightBlocked([f"{harness}: tool_version {asked} was asked, but the bench's harness_config.binary {bench_binary} is {found}"])
            return Resolved(harness, asked, found, Path(bench_binary), "bench", _note(harness, found))
        version = binaries.resolve_version(harness, asked)
        have = binaries.installed(harness, version)
        if have is None and asked != binaries.LATEST and binaries.published(harness, version) is False:
            package = binaries.pins()[harness].package
            raise PreflightBlocked([f"{harness}: tool_version {version} is no version the npm registry has of {package}; pin one it lists (`npm view {package} versions`)"])
        latest = "pypi" if binaries.pins()[harness].kind == "pypi" else "npm"  # where `latest` came from (binaries.latest_version)
        return Resolved(harness, asked, version, have.path if have else None, latest if asked == binaries.LATEST else "pinned", _note(harness, version))

    def install(self, resolved: Resolved) -> Resolved:
        """Install a resolved version that is missing (the caller has the user's consent)."""
        if not resolved.needs_install:
            return resolved
        binary = binaries.resolve(resolved.harness, resolved.version, install=True)
        done = replace(resolved, binary=binary.path)
        for key, value in self._seen.items():
            if value == resolved:
                self._seen[key] = done
        return done


def _note(harness: str, version: str) -> str | None:
    return binaries.Binary(harness, version, Path()).note if harness in binaries.pins() else None
