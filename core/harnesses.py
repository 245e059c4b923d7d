"""The harnesses benchtape knows, by name: the vocabulary a bench, a tool document and `--harness` use.

Each name points at its adapter class as text (`module:Class`, the module inside the adapters
room), so a document can be checked against the names without importing any adapter;
`benchtape.adapters.base.get_adapter` is the one place a name becomes an adapter. The core names
no module of another room, not even as a string (tests/test_layout.py reads strings too).

Besides the harnesses benchtape ships, an installed package may add one through the entry point
group `benchtape.harnesses` (as pytest's `pytest11` and llm's `llm` groups do): the entry point's
name is the harness name, its value the adapter class (`package.module:Class`, see
docs/harnesses.md). Only the entry point's text is read here, never its code, so listing the
names costs no import of a plugin; a plugin may not take a built-in name (the built-in wins, and
`benchtape doctor` says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

GROUP = "benchtape.harnesses"

BUILTIN: dict[str, str] = {
    "mock": "mock:MockAdapter",
    "claude-code": "claude_code:ClaudeCodeAdapter",
    "codex": "codex:CodexAdapter",
    "gemini-cli": "gemini_cli:GeminiCliAdapter",
    "qwen-code": "qwen_code:QwenCodeAdapter",
    "mini-swe-agent": "mini_swe_agent:MiniSweAgentAdapter",
    "opencode": "opencode:OpencodeAdapter",
    "aider": "aider:AiderAdapter",
    "oracle": "oracle:OracleAdapter",  # the positive control of task cells: the task's known fix, no model
    "command": "command:CommandAdapter",  # any command line: an argv template, its output, an optional transcript
}
ADAPTERS = BUILTIN  # the name older callers import
CONTROL_HARNESSES = frozenset({"oracle"})  # harnesses whose sessions are controls, never a setup's measurement


@dataclass(frozen=True)
class Installed:
    """One harness as installed: where its adapter is, and which package brought it."""

    name: str
    target: str  # module:Class
    package: str  # "benchtape", or the distribution of the plugin
    version: str  # that package's version
    shadowed: bool = False  # a plugin naming a built-in harness: never used

    @property
    def misnamed(self) -> bool:
        """A plugin whose entry point's name is no harness name (a space, a capital, a slash):
        it goes into bench files, commands, the store and tool folders, so it is never used."""
        return not HARNESS_NAME.fullmatch(self.name)

    @property
    def usable(self) -> bool:
        return not self.shadowed and not self.misnamed


HARNESS_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


@cache
def plugins() -> tuple[Installed, ...]:
    """The harnesses installed packages declare in the `benchtape.harnesses` group (read once per
    process: an install during a run is seen by the next)."""
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        package = str(getattr(dist, "name", None) or ep.module.split(".")[0])
        version = str(getattr(dist, "version", None) or "?")
        found.append(Installed(ep.name, ep.value, package, version, shadowed=ep.name in BUILTIN))
    return tuple(sorted(found, key=lambda i: i.name))


def installed() -> list[Installed]:
    """Every harness this process can run, built-ins first, then the plugins (shadowed ones flagged)."""
    from benchtape.core.version import VERSION

    return [Installed(name, target, "benchtape", VERSION) for name, target in sorted(BUILTIN.items())] + list(plugins())


def target(name: str) -> str:
    """The adapter class of a harness name: `module:Class` in the adapters room for a built-in,
    the plugin's own `package.module:Class` otherwise; KeyError for an unknown one."""
    if name in BUILTIN:
        return BUILTIN[name]
    for p in plugins():
        if p.name == name and p.usable:
            return p.target
    raise KeyError(name)


def harness_names() -> list[str]:
    return sorted(set(BUILTIN) | {p.name for p in plugins() if p.usable})
