"""What every harness adapter provides: a command to start the tool, and a streaming parser.

An adapter never runs anything itself. The recorder starts the command in a sandbox,
feeds the parser each native stdout line as it arrives and appends the actions it
returns, so a killed run keeps every action received; `import` feeds the same parser
from a file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, TypeVar, cast

from benchtape.core.launch_plan import SUPPORT_AT, HomeState, LaunchPlan, Mount
from benchtape.core.model import Action
from benchtape.core.payloads import Hook

SUPPORT = Path(__file__).resolve().parent  # benchtape's helper programs an agent runs (mock_agent.py, oracle_agent.py, command_agent.py)


@dataclass(frozen=True)
class Launch:
    """Everything the recorder knows about one session that a harness may need to start."""

    prompt: str
    work_dir: Path  # where the agent starts (the workspace root, or its `cwd:`)
    root: Path  # the workspace root
    home: Path | None = None
    model: str | None = None
    harness_config: dict[str, Any] = field(default_factory=dict)
    scenario: dict[str, Any] = field(default_factory=dict)  # the scenario's own keys (e.g. `mock:`)
    session_uuid: str = ""
    python: str = sys.executable  # the interpreter for helper programs (inside a container: python3)
    mounted: Mapping[str, str] = field(default_factory=dict)  # host folder → where the agent sees it (a container binds the launch plan's mounts)
    endpoint: str | None = None  # a scripted model's base URL (as the agent reaches it); None: the harness's own
    interactive: bool = False  # drive the harness's terminal UI (the scenario's `interactive:`), not its print mode
    follow_ups: tuple[str, ...] = ()  # the next turns of an interactive session, typed after the prompt
    images: tuple[Path, ...] = ()  # the scenario's `image:` pictures (host paths, checked at load), sent with the prompt
    in_container: bool = False  # the agent runs in benchtape's container, its fence: a harness's own sandbox cannot make namespaces there

    @property
    def support_dir(self) -> Path:
        """Where benchtape's helper programs are for the agent: here, or where a container mounted them."""
        return Path(self.mounted.get(str(SUPPORT), SUPPORT))

    def helper(self, name: str) -> list[str]:
        """The argv of one of benchtape's helper programs (standard library only), run isolated
        (`-I`): a history task's agent is given its project's PYTHONPATH, and a workspace module
        named like one of the standard library's (a project's `json/`, `glob.py`) would otherwise
        be what the helper imports; what the helper starts still gets the variable."""
        return [self.python, "-I", "-S", str(self.support_dir / name)]


@dataclass(frozen=True)
class Command:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # added to the sandbox's environment
    stdin: bytes = b""
    home_files: dict[str, str] = field(default_factory=dict)  # written under the agent's HOME before it starts (relative path → text)
    tui: Tui | None = None  # set: the command is a terminal UI the recorder drives (recorder/interactive.py)
    setup: tuple[Setup, ...] = ()  # run in the sandbox, in order, before the agent starts (staging, probes)
    home_trees: dict[str, str] = field(default_factory=dict)  # folders copied under HOME before setup (relative path → host folder)
    probe: bool = True  # harness_config.environment.probe: false records no environment.reported
    require: bool = False  # harness_config.environment.require: refuse the run before spend when the probe found a problem
    attachments: tuple[dict[str, Any], ...] = ()  # the images this command sends with the prompt (spec/bench_images.attachment): the first message.user records them
    facts: dict[str, Any] = field(default_factory=dict)  # added to session.started (e.g. `records_calls: False`: the harness cannot see the agent's tool calls)


@dataclass(frozen=True)
class Setup:
    """A command a harness needs run in the sandbox before the session (a plugin install, the
    environment probe); what it printed goes back to the adapter (`Tui`-independent)."""

    name: str  # what it is for: "marketplace-add", "plugin-install", "plugin-list", "init", ...
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    until: str | None = None  # stop it (kill) once a stdout line contains this (the init line of a probe)
    timeout: float = 60.0


@dataclass(frozen=True)
class SetupOutput:
    """What one setup command did, for the adapter to read (`environment`)."""

    exit_code: int | None
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Tui:
    """How the recorder drives a harness's terminal UI: what to write under HOME first, what the
    screen shows when it is ready or blocked, where turn ends are signalled, how to leave."""

    seed: Any  # Callable[[Mapping[str, str]], dict[str, dict]]: JSON merged into files under HOME, from the final env
    transcript: str  # glob under HOME of the tool's on-disk session (the record)
    sidechains: str  # glob under HOME of its subagent files, read after the main file
    stop_log: str  # file under HOME where the Stop hook appends one JSON line per finished turn
    ready: str  # regex: the screen when a prompt can be typed
    blocked: str  # regex: a prompt on screen that nobody can answer (a permission dialog)
    exit_text: str = "/exit"
    goodbye: str = ""  # regex: the screen once the tool has closed the session (it may take a while to exit after)
    parser: Any = None  # Callable[[], Parser] of the on-disk record
    attach: tuple[str, ...] = ()  # files pasted (bracketed) into the prompt box before the first prompt (`image:`)
    attached: str = ""  # what the screen shows once the n-th pasted file is attached ("{n}" is replaced)
    session: str = ""  # the session id the Stop hook's lines carry: a HOME shared by several sessions (level workspace) holds one log for all


class Parser(Protocol):
    def feed(self, line: str) -> list[Action]:
        """Actions for one native line (may be none); unknown input becomes `adapter.warning`."""

    def finish(self) -> list[Action]:
        """Actions owed at end of stream (e.g. a truncated last line, derived totals)."""


class Adapter(Protocol):
    name: str
    # The harness's own bookkeeping under HOME that is bulky, rewritten by the harness every
    # run or stored by benchtape on its own (its transcript): globs relative to HOME (as
    # benchtape.sandbox.treediff.covers reads them). Where HOME is the workspace (sandbox levels home
    # and container), workspace snapshots leave these out: they are not the agent's work.
    bookkeeping: tuple[str, ...]
    # Files under HOME the tool rewrites itself at every start (counters, per-folder flags):
    # relative paths. Where HOME is the workspace, snapshots keep them (an agent may be asked to
    # change one, and a check then reads it), but the patch of the agent's changes leaves them
    # out and names them: a checkout without them could not take it (benchtape.replay.changes).
    own_state: tuple[str, ...]
    # Merged into JSON files under a private HOME (never yours) before it starts (relative path
    # → keys): the same for every session, so a level can merge it into the next session's
    # workspace ahead, off the session's path (benchtape.sandbox.local's spare folder).
    home_json: dict[str, dict[str, Any]]
    # Every native tool name its calls can carry besides mcp__<server>__<tool>; None: it cannot
    # say (the mock emits what its script names). Preflight warns of a check naming another.
    native_tools: frozenset[str] | None

    def command(self, launch: Launch) -> Command: ...

    def parser(self) -> Parser: ...

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        """Blocking findings (binary missing, no key unless the model is scripted); never prints a secret."""


C = TypeVar("C")


def preflight_prologue(harness: str, harness_config: dict[str, Any], env: dict[str, str], parse: Callable[[dict[str, Any] | None], C], binary_of: Callable[[Any], str]) -> tuple[C | None, list[str]]:
    """What every CLI harness's preflight starts with: its `harness_config` read (a bad one is the
    only finding, None for the config: nothing else can be judged from it) and its binary
    startable (else how to get the pinned one). The harness goes on with its own checks
    (credentials, endpoints) on the config returned."""
    from benchtape.core.errors import BadInput

    try:
        cfg = parse(harness_config)
    except BadInput as exc:
        return None, [f"{exc.what}; {exc.fix}" if exc.fix else exc.what]
    binary = binary_of(cfg)
    return cfg, ([] if on_path(binary, env) else [f"{harness}: `{binary}` {NOT_ON_PATH}; {install_hint(harness)}"])


NOT_ON_PATH = "is not on PATH"  # the prologue's finding of a binary not there (yet)


def says_not_installed(finding: str, harness: str) -> bool:
    """Whether a preflight finding is only the prologue's "binary not on PATH": an evaluation
    that installs the tool before its run checks everything else (keys, endpoints) now, before
    minutes of install, and the binary after it."""
    return finding.startswith(f"{harness}: `") and f"` {NOT_ON_PATH}; " in finding


def install_hint(harness: str) -> str:
    """How a user gets a harness's binary: `benchtape tools install` and the pinned version, when it has an install recipe."""
    from benchtape.tools.binaries import pins

    pin = pins().get(harness)
    if pin is None:
        return "install it, or set harness_config.binary"
    venv = " into a venv of its own" if pin.kind == "pypi" else ""
    return f"`benchtape tools install {harness}` installs the pinned {pin.version}{venv} (or set harness_config.binary)"


def host_credentials(names: tuple[str, ...], endpoint: str | None) -> dict[str, str]:
    """The host's values of the credentials a tool declares it authenticates with (its
    `AUTH_ENV`): the only credentials that reach its agent (the sandbox forwards none by
    itself, so the mock agent gets none). None with a scripted endpoint: its key is the
    server's, and a real token must not go to it."""
    if endpoint:
        return {}
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def on_path(binary: str, env: dict[str, str]) -> bool:
    """Whether a harness binary can be started: a path that is executable, or a name on env's PATH."""
    import shutil

    if os.sep in binary:
        return os.path.isfile(binary) and os.access(binary, os.X_OK)
    return shutil.which(binary, path=env.get("PATH", "")) is not None


def files_below(folder: Path, depth: int, wanted: Callable[[str], bool]) -> list[Path]:
    """What `folder.glob("*/" * depth + PATTERN)` finds, sorted, for a PATTERN `wanted` tests a
    name against (as pathlib's `*`: hidden folders too, links to folders followed). A
    harness's transcript is found this way by a name holding its session's id; as a glob, that
    pattern was new each session and compiled each time (~0.1-0.3 ms on the session's path),
    and the id's characters were pattern characters."""
    level = [os.fspath(folder)]
    for _ in range(depth):
        level = [e.path for top in level for e in _entries(top) if _is_dir(e)]
    return sorted(Path(e.path) for top in level for e in _entries(top) if wanted(e.name))


def _entries(folder: str) -> list[Any]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _is_dir(entry: Any) -> bool:
    try:
        return bool(entry.is_dir())
    except OSError:
        return False


def warning(what: str, line: str, thread: str = "main") -> Action:
    """An input the adapter could not understand, kept with its raw line."""
    return Action("adapter.warning", {"what": what, "line": line[:4000]}, thread=thread)


def hook_action(data: Hook, thread: str = "main", at: float = 0.0) -> Action:
    """A `hook` the harness reported, with the fields it gave (None: it said nothing of that one)."""
    known = cast(Hook, {k: v for k, v in data.items() if v is not None})  # fewer of Hook's own keys
    return Action("hook", known, thread=thread, at=at)




class Harness:
    """What a harness is besides its `command` and `parser`, with the defaults a plugin harness
    (core/harnesses.py, docs/harnesses.md) may keep: subclass it, set `name`, write `command`
    and `parser`, and name the tool's native tools in `tool_names` so every session check
    reads its calls as it reads Claude's or Codex's.

    - `tool_names`: native tool name → "kind[:argument,...]" (core/canonical.register_names),
      e.g. {"ReadFile": "read:path", "Shell": "shell:cmd", "Todo": "plan"}.
    - `install`: how `benchtape tools install NAME` gets the pinned binary (tools/binaries.Pin),
      or None when the tool is installed some other way.
    - `home_state`: what the tool keeps in a folder under your real HOME (core/launch_plan.HomeState),
      put back after a session at level workspace; None when it keeps nothing there.
    """

    name = ""
    bookkeeping: tuple[str, ...] = ()
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {}
    native_tools: frozenset[str] | None = None
    silent_success: frozenset[str] = frozenset()  # native tools whose good result records no outcome (Claude's Read, Grep, ...): `outcome: ok` cannot count them
    tool_names: dict[str, str] = {}
    install: Any = None  # tools/binaries.Pin
    home_state: HomeState | None = None

    def command(self, launch: Launch) -> Command:
        raise NotImplementedError

    def parser(self) -> Parser:
        raise NotImplementedError

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        return []


def launch_plan(harnesses: Iterable[str], level: str, *, home_json: bool = True) -> LaunchPlan:
    """What the sandbox lays out before these harnesses' commands exist (one for a session; a
    cell's workflow steps share one sandbox, so their plans are joined): benchtape's helper
    programs mounted for the agent, the harnesses' JSON merged into a HOME of the sandbox's own
    (`home_json=False`: left to each session, as a cell's steps do), and at level workspace, where
    HOME is yours, what every harness benchtape knows keeps there, put back afterwards, whichever
    harness runs: an agent may start another tool (a command line wrapping claude, a mock script
    writing ~/.claude)."""
    plan = LaunchPlan(mounts=(Mount(SUPPORT, SUPPORT_AT),))
    for name in dict.fromkeys(harnesses):
        adapter = get_adapter(name)
        plan = plan.joined(LaunchPlan(home_json=adapter.home_json if home_json else {}, container_folders=tuple(getattr(adapter, "container_folders", ()))))
    return plan.joined(LaunchPlan(home_states=known_home_states())) if level == "workspace" else plan


@cache
def known_home_states() -> tuple[HomeState, ...]:
    """The home state every harness this process can run declares (a plugin that does not load
    declares none: `benchtape doctor` says why)."""
    from benchtape.core.harnesses import harness_names

    found: list[HomeState] = []
    for name in harness_names():
        try:
            state = getattr(get_adapter(name), "home_state", None)
        except Exception:  # noqa: BLE001 - a broken plugin must not stop a session of another harness
            continue
        if isinstance(state, HomeState) and state not in found:
            found.append(state)
    return tuple(found)


def _plugin_adapter(name: str, module: str, cls: str) -> Adapter:
    """A plugin's adapter, or bad input naming the plugin when it cannot load: its code is not
    benchtape's, and a plugin raising on import ended `run` in a traceback (exit 1)."""
    import importlib

    from benchtape.core.canonical import register_names

    try:
        made: Adapter = getattr(importlib.import_module(module), cls)()
        register_names(name, getattr(made, "tool_names", None) or {})  # a kind that is not one of canonical.KINDS: a ValueError naming the tool
    except Exception as exc:  # noqa: BLE001 - whatever the plugin's own code raises
        from benchtape.core.errors import BadInput

        raise BadInput(
            f"the harness plugin {name!r} ({module}:{cls}) cannot load: {type(exc).__name__}: {exc}",
            fix="fix or reinstall the plugin's package (`benchtape tools list` shows every harness and why one cannot load), or run another harness",
        ) from None
    return made


def get_adapter(name: str) -> Adapter:
    """The adapter for a harness name, built-in or installed by a plugin; KeyError for an unknown one."""
    import importlib

    from benchtape.core.canonical import register_names
    from benchtape.core.harnesses import BUILTIN, target

    module, _, cls = target(name).partition(":")
    if name in BUILTIN:
        module = f"benchtape.adapters.{module}"  # a built-in names a module of this room only
        adapter: Adapter = getattr(importlib.import_module(module), cls)()  # a harness's target names an Adapter class
        names = getattr(adapter, "tool_names", None)
        if names:
            register_names(name, names)
    else:
        adapter = _plugin_adapter(name, module, cls)  # its tool_names registered there, a bad one as bad input
    return adapter
