"""The claude-code harness: Claude Code as a bench file asks for it.

`interactive: false`: print mode (`claude --print`), parsed from its stream-json stdout.
Interactive (the format's default when `interactive:` is unset): the terminal UI, which the
recorder hosts in tmux and types into, recorded from the on-disk transcript
(adapters/claude_tui.py). Both stage `plugins`/`agent_env` and probe the environment the
same way (adapters/claude_env.py) before the agent starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import orjson

from benchtape.adapters.base import Command, Launch, files_below, host_credentials, preflight_prologue
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.claude_tui import STOP_LOG
from benchtape.adapters.config import ConfigReader
from benchtape.adapters.endpoints import is_scripted
from benchtape.core.errors import type_name
from benchtape.core.launch_plan import HomeState
from benchtape.core.payloads import EnvironmentReported

HARNESS = "claude-code"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
# Print-mode flags benchtape always passes; `args` must not repeat them.
FIXED_FLAGS = ("--print", "--verbose", "--output-format", "stream-json", "--input-format", "text")
# With `image:`: the first message goes in as stream-json (madbench flips `--input-format` the same way),
# its content the pictures as base64 image blocks, then the prompt's text block.
IMAGE_FLAGS = ("--print", "--verbose", "--output-format", "stream-json", "--input-format", "stream-json")
# Environment variables under which the CLI authenticates without a subscription login.
AUTH_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)


@dataclass(frozen=True)
class EnvironmentProbe:
    probe: bool = True
    details: int = 8
    require: bool = False


@dataclass(frozen=True)
class ClaudeConfig:
    """The nine keys of madbench v0.23.0's claude-code `harness_config`."""

    binary: str | None = None  # None: the pinned binary when installed, else `claude` on PATH
    model: str | None = None
    effort: str | None = None
    system_prompt: str | None = None
    args: tuple[str, ...] = ()
    plugins: tuple[dict[str, Any], ...] = ()
    agent_env: str | None = None
    environment: EnvironmentProbe = field(default_factory=EnvironmentProbe)
    magmux_binary: str | None = None


def parse_config(harness_config: dict[str, Any] | None) -> ClaudeConfig:
    """Check and type the config (no I/O: the binary is looked for at preflight).

    Raises `BadInput` for a known key of the wrong type, an empty `binary`, an effort
    the CLI would refuse, or `environment.probe: false` with `require: true`.
    """
    r = ConfigReader(HARNESS, harness_config)
    env = r.config.get("environment")
    if env is not None and not isinstance(env, dict):
        raise r.fail(f"environment must be a map, got {type_name(env)}")
    env = env or {}
    probe = EnvironmentProbe(
        probe=_default(r.boolean(env.get("probe"), "environment.probe"), True),
        details=_default(r.integer(env.get("details"), "environment.details"), 8),
        require=_default(r.boolean(env.get("require"), "environment.require"), False),
    )
    if not probe.probe and probe.require:
        raise r.fail(
            "environment.probe is false but environment.require is true: nothing would be probed to require",
            fix="drop `environment.require` or set `environment.probe: true`",
        )
    return ClaudeConfig(
        binary=r.string("binary", empty_ok=False),
        model=r.string("model"),
        effort=r.level("effort", EFFORTS, "CLI"),
        system_prompt=r.string("system_prompt"),
        args=tuple(r.strings("args")),
        plugins=tuple(_plugins(r)),
        agent_env=r.string("agent_env"),
        environment=probe,
        magmux_binary=r.string("magmux_binary"),
    )


BYPASS = ("bypassPermissions", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")
EDITING_MODES = ("acceptEdits", "bypassPermissions")  # --permission-mode values under which an edit is not asked about
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def edits_allowed(args: Sequence[str]) -> bool:
    """Whether these CLI args let the agent edit files with nobody there to approve: a bypass,
    `--permission-mode acceptEdits|bypassPermissions`, or an edit tool in `--allowedTools`. In
    `--print` mode (and at a prompt nobody answers) the default mode refuses every edit: marko's
    tasks ran through the real Claude Code ended `no_changes`, every one, its Edit calls told
    "Claude requested permissions to write ..., but you haven't granted it yet"."""
    return _allows(args, EDITING_MODES, lambda tool: any(re.match(rf"{t}\b", tool) for t in EDIT_TOOLS))


def mcp_allowed(args: Sequence[str]) -> bool:
    """Whether these CLI args let the agent call MCP tools with nobody there to approve: a
    bypass, or an `mcp__…` entry in `--allowedTools` (acceptEdits covers edits only)."""
    return _allows(args, ("bypassPermissions",), lambda tool: tool.startswith("mcp__"))


def _allows(args: Sequence[str], modes: tuple[str, ...], listed: Callable[[str], bool]) -> bool:
    words = list(args)
    for i, word in enumerate(words):
        flag, _, inline = word.partition("=")
        value = inline or (words[i + 1] if i + 1 < len(words) else "")
        if word in BYPASS[1:]:
            return True
        if flag == "--permission-mode" and value in modes:
            return True
        if flag in ("--allowedTools", "--allowed-tools") and any(listed(part.strip()) for part in re.split(r"[ ,]", value)):
            return True
    return False


def binary_of(cfg: ClaudeConfig) -> str:
    from benchtape.tools.binaries import default_binary

    return cfg.binary or default_binary(HARNESS)


def hermetic_env(args: tuple[str, ...], endpoint: str | None) -> dict[str, str]:
    """What every claude run gets (spec/real-binaries.md): the updater off (the interactive
    one installs globally), nonessential traffic off, the transcript always written
    (`CLAUDE_CODE_FORCE_SESSION_PERSISTENCE=1`, as madbench sets it: a session started where
    Claude Code thinks it is a child session would otherwise keep none), IS_SANDBOX only as
    root with a bypass mode (which refuses to start without it), and the scripted endpoint
    when there is one."""
    from benchtape.adapters.endpoints import claude_env, running_as_root

    env = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_FORCE_SESSION_PERSISTENCE": "1"}
    if running_as_root() and any(a in BYPASS for a in args):
        env["IS_SANDBOX"] = "1"
    if endpoint:
        env.update({k: v for k, v in claude_env(endpoint, root=False).items() if k != "HOME"})
    return env


def first_message(prompt: str, images: tuple[Path, ...]) -> bytes:
    """The one stream-json user line print mode reads from stdin: each picture, then the prompt
    (the order the Messages API recommends); stdin then closes, so the session is one turn."""
    from benchtape.spec.bench_images import base64_block

    content = [*(base64_block(p) for p in images), {"type": "text", "text": prompt}]
    return orjson.dumps({"type": "user", "message": {"role": "user", "content": content}}) + b"\n"


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value


def _plugins(r: ConfigReader) -> list[dict[str, Any]]:
    value = r.config.get("plugins")
    if value is None:
        return []
    if not isinstance(value, list):
        raise r.fail(f"plugins must be a list of {{id, path, marketplace}} maps, got {type_name(value)}")
    out = []
    for i, plugin in enumerate(value):
        if not isinstance(plugin, dict):
            raise r.fail(f"plugins[{i}] must be a map with id and path, got {type_name(plugin)}")
        for key in ("id", "path", "marketplace"):
            if key in plugin and not isinstance(plugin[key], str):
                raise r.fail(f"plugins[{i}].{key} must be a string, got {type_name(plugin[key])}")
        if not plugin.get("id"):
            raise r.fail(f"plugins[{i}] has no id", fix="write id as <plugin>@<marketplace>")
        out.append(dict(plugin))
    return out


def _reads_environment(node: Any) -> bool:
    """Whether a scenario has an `environment:*` check anywhere (composites included): then an
    interactive session, which prints no init line, probes for one."""
    if isinstance(node, dict):
        return (isinstance(node.get("type"), str) and node["type"].startswith("environment:")) or any(_reads_environment(v) for v in node.values())
    if isinstance(node, list):
        return any(_reads_environment(v) for v in node)
    return False


def _logged_in(home: Path) -> bool:
    """A subscription login: stored OAuth credentials, or an oauthAccount in ~/.claude.json."""
    if (home / ".claude" / ".credentials.json").is_file():
        return True
    state = home / ".claude.json"
    if not state.is_file():
        return False
    try:
        data = orjson.loads(state.read_bytes())
    except (orjson.JSONDecodeError, OSError):
        return False
    return isinstance(data, dict) and bool(data.get("oauthAccount"))


# Written into a private HOME before every session: the updater off (it would `npm i -g`). 2.1.328
# moves `autoUpdates: false` into settings' env on its first start, so that half is written too:
# what the tool would write is in place before the tree is snapshotted, never the agent's change.
NO_UPDATES = {".claude.json": {"autoUpdates": False}, ".claude/settings.json": {"env": {"DISABLE_AUTOUPDATER": "1"}}}
# What level workspace puts back in your real HOME after a session (benchtape.sandbox.home_guard).
# The terminal UI's first-run answers (madbench §2.3) are merged into the real ~/.claude.json
# and ~/.claude/settings.json at that level, as madbench does: so ~/.claude.json is put back
# byte for byte too, and so is the prompt history the terminal UI appends to. Beyond madbench's
# list, the entries the terminal UI creates for a session (its per-session folders, its copies
# of edited files, its debug logs, the backups of .claude.json, the marker of its cleanup
# sweep, benchtape's Stop-hook log) are deleted when the session created them.
HOME_STATE = HomeState(
    folder=".claude",
    # madbench §1.8's list, then what the terminal UI writes at the top of ~/.claude
    restored_files=("settings*.json", "remote-settings.json", "policy-limits.json", ".mcp.json", "CLAUDE.md", "statusline-command.sh", "history.jsonl", ".last-cleanup"),
    restored_trees=("agents", "commands", "skills", "hooks"),
    # madbench's, then the terminal UI's per-session folders and benchtape's Stop-hook log folder
    created_entries_deleted=("projects", "todos", "shell-snapshots", "statsig", "sessions", "session-env", "file-history", "debug", "backups", "benchtape"),
    # beside ~/.claude, in HOME: the first-run answers and per-project state Claude Code keeps, and
    # the `claude-cli://` URL handler its terminal UI registers (a desktop file and a mime default)
    home_files=(".claude.json", ".config/mimeapps.list", ".local/share/applications/claude-code-url-handler.desktop"),
    reported="plugins",
)


class ClaudeCodeAdapter:
    name = HARNESS
    # the tool names its calls carry (and every mcp__<server>__<tool>): a check naming another
    # native name never matches here, which preflight warns of (benchtape.app.preflight)
    silent_success = frozenset({"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "NotebookRead"})  # claude_messages.outcome: a good result carries no is_error
    native_tools: frozenset[str] | None = frozenset({
        "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead", "Bash", "BashOutput", "KillShell", "KillBash",
        "Glob", "Grep", "LS", "WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "TodoRead", "ExitPlanMode", "EnterPlanMode",
        "AskUserQuestion", "Skill", "SlashCommand", "ToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool",
    })
    # its session file (stored as the session's transcript), a backup of .claude.json per
    # start, its built-in plugins' cache, its telemetry, shell snapshots and debug logs, and
    # the marker its background retention sweep writes when it finishes (only when the sweep
    # ends before the tool exits: a flaky "agent change" in 2.1.328 sessions otherwise), and
    # its per-process session registry and per-session environment folder (named by the
    # session's random id: each was a folder "the agent added" in `show --diff`); and in the
    # terminal UI its prompt history, its copies of each edited file (for /rewind), the URL
    # handler it registers under ~/.local (and the MIME association xdg writes for it under
    # ~/.config), and the Stop hook's log benchtape reads turn ends from
    bookkeeping = (
        ".claude/projects/**", ".claude/backups/**", ".claude/plugins/store/**", ".claude/statsig/**", ".claude/shell-snapshots/**", ".claude/debug/**", ".claude/.last-cleanup", ".claude/sessions/**", ".claude/session-env/**",
        ".claude/history.jsonl", ".claude/file-history/**", ".local/share/applications/claude-code-url-handler.desktop", ".config/mimeapps.list", STOP_LOG,
    )
    # 2.1.328 rewrites ~/.claude.json at every start (numStartups, per-project flags, caches)
    own_state = (".claude.json",)
    home_json = NO_UPDATES
    home_state = HOME_STATE
    takes_images = True  # `image:` reaches the model (benchtape.app.preflight refuses it under a harness without this)

    def config(self, launch: Launch) -> ClaudeConfig:
        return parse_config(launch.harness_config)

    def command(self, launch: Launch) -> Command:
        """`claude --print ... --session-id <uuid> [--model] [--system-prompt] [--effort] <args>`, prompt on stdin.

        The run's model (`launch.model`) wins over `harness_config.model`, as a
        `--model` given on the command line wins over a file. With a scripted model the
        argv is the same; only the environment points the binary at the endpoint. The
        hermetic environment is always set: no updater (the interactive one runs `npm
        install -g`), no nonessential traffic, IS_SANDBOX only where root needs it.
        """
        from benchtape.adapters.claude_env import mcp_flags, probes, stage

        cfg = self.config(launch)
        binary = binary_of(cfg)
        staged = stage(binary, launch.home or launch.root, cfg.plugins, cfg.agent_env, skills=launch.scenario.get("skills"))
        mcp = mcp_flags(launch.scenario.get("mcp_servers"))  # a Harbor task's MCP servers: the session's, not the plugin commands'
        flags = [*staged.flags, *mcp, *self._session_flags(launch, cfg)]
        setup = list(staged.setup)
        if cfg.environment.probe and (cfg.plugins or cfg.agent_env or (launch.interactive and _reads_environment(launch.scenario))):
            init = [*staged.flags, *mcp, *self._session_flags(launch, cfg, session=False), "--no-session-persistence"] if launch.interactive else None
            setup += probes(binary, staged.flags, cfg.plugins, cfg.environment.details, init)
        env = {**host_credentials(AUTH_ENV, launch.endpoint), **hermetic_env(cfg.args, launch.endpoint)}
        common = dict(env=env, home_files=staged.home_files, home_trees=staged.home_trees, setup=tuple(setup), probe=cfg.environment.probe, require=cfg.environment.require)
        if launch.interactive:
            return self.interactive_command(launch, [binary, *flags], common)
        if launch.images:
            from benchtape.spec.bench_images import attachments

            return Command(argv=[binary, *IMAGE_FLAGS, *flags], stdin=first_message(launch.prompt, launch.images), attachments=attachments(launch.images), **common)  # type: ignore[arg-type]
        return Command(argv=[binary, *FIXED_FLAGS, *flags], stdin=launch.prompt.encode(), **common)  # type: ignore[arg-type]

    def interactive_command(self, launch: Launch, argv: list[str], common: dict[str, Any]) -> Command:
        """`claude --session-id <uuid> [--model] [--system-prompt] [--effort] <args>` in a terminal,
        the prompt and follow-ups typed by the recorder (adapters/claude_tui.py says how); each
        `image:` path is pasted first, which the terminal UI attaches (the transcript records it)."""
        from benchtape.adapters.claude_tui import tui

        trusted = list(dict.fromkeys([str(launch.root), str(launch.work_dir)]))
        images = tuple(str(p) for p in launch.images)
        return Command(argv=argv, tui=tui(launch.session_uuid, trusted, agent_env=bool(self.config(launch).agent_env), images=images), **common)

    def _session_flags(self, launch: Launch, cfg: ClaudeConfig, session: bool = True) -> list[str]:
        """What both drive modes pass: the session id, model, system prompt, effort, then `args` last."""
        argv: list[str] = []
        if launch.session_uuid and session:
            argv += ["--session-id", launch.session_uuid]
        model = launch.model or cfg.model
        if model and not is_scripted(model):
            argv += ["--model", model]
        if cfg.system_prompt:
            argv += ["--system-prompt", cfg.system_prompt]
        if cfg.effort:
            argv += ["--effort", cfg.effort]
        return argv + list(cfg.args)

    def environment(self, launch: Launch, outputs: dict[str, Any]) -> tuple[EnvironmentReported | None, list[str]]:
        """What the setup commands' outputs say was loaded (`environment.reported`, None when the
        probe did not run) and why `environment.require` would refuse the session."""
        from benchtape.adapters.claude_env import reported

        if "plugin-list" not in outputs:
            return None, []
        return reported(outputs, self.config(launch).plugins)

    def transcript(self, home: Path, launch: Launch) -> Path | None:
        """The on-disk transcript of this session (found by its --session-id, never by the
        encoded cwd: long paths are truncated with a hash)."""
        name = f"{launch.session_uuid}.jsonl"
        found = files_below(home / ".claude" / "projects", 1, lambda n: n == name) if launch.session_uuid else []
        return found[0] if found else None

    def parser(self) -> ClaudeStreamParser:
        return ClaudeStreamParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        """Blocking findings: a bad config, an interactive scenario, a key whose staging is not built
        (agent_env, plugins), the binary not on PATH, no way to authenticate (none needed with
        the scripted model)."""
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if scripted:
            return findings  # the scripted model needs no key
        if not any(env.get(name) for name in AUTH_ENV):
            home_text = env.get("HOME") or (str(launch.home) if launch is not None and launch.home else "")
            if not (home_text and _logged_in(Path(home_text))):
                where = home_text or "$HOME (unset)"
                findings.append(
                    "claude-code: no way to authenticate: ANTHROPIC_API_KEY is not set and there is no "
                    f"subscription login under {where} (~/.claude/.credentials.json or an oauthAccount in "
                    "~/.claude.json); export ANTHROPIC_API_KEY or run `claude` once to log in"
                )
        return findings
