"""Claude Code's environment: staging `plugins` and `agent_env`, and probing what loaded.

`plugins` are staged the way a user installs them: a local marketplace under the sandbox
HOME (benchtape writes its `marketplace.json` next to a copy of each plugin folder), then
`claude plugin marketplace add` and `claude plugin install <plugin>@<marketplace>`, all
in the sandbox. That produces exactly what a user's install produces -- a user-scoped,
enabled entry in `installed_plugins.json`, `enabledPlugins` and `extraKnownMarketplaces`
in settings, the `<plugin>@<marketplace>` id bench authors write -- where `--plugin-dir`
would load a session-scoped `<plugin>@inline` that no user has. A plugin whose manifest
is broken fails to install, and the tool's own words for it become that plugin's errors.

`agent_env` is a `.claude`-shaped folder copied into the sandbox and run alone, with
madbench v0.23.0's argv: `--bare --setting-sources "" --plugin-dir <each plugins/*>
[--mcp-config .mcp.json --strict-mcp-config] [--settings settings.json]`.

The probe (`harness_config.environment`, spec §2.4) runs in the same sandbox and HOME as
the agent, before it starts: `claude plugin list --json`, `claude plugin details <id>`
for up to `details` plugins, and -- for an interactive session, which prints no init line
-- one `claude -p` whose model endpoint is a closed loopback port, read up to its
`system/init` line and killed: the same inventories as the print path's init (plugins,
skills, slash commands, agents, MCP servers with their status, the tool roster), at no
spend. `probe: false` records no Reported at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, cast

import orjson

from benchtape.adapters.base import Setup
from benchtape.adapters.base import SetupOutput as Output
from benchtape.core.payloads import EnvironmentReported

MARKETS = ".claude/benchtape/marketplaces"  # under HOME
AGENT_ENV = ".claude/benchtape/agent_env"  # under HOME
DEAD_ENDPOINT = "http://127.0.0.1:9"  # the init probe reaches no model: nothing is spent
DEFAULT_MARKET = "benchtape"
INIT_MARK = '"subtype":"init"'


@dataclass
class Staged:
    home_files: dict[str, str] = field(default_factory=dict)
    home_trees: dict[str, str] = field(default_factory=dict)  # under HOME -> host folder to copy there
    setup: list[Setup] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # global flags every claude invocation of the session gets


def plugin_parts(plugin: Mapping[str, Any]) -> tuple[str, str]:
    """(plugin name, marketplace) of a `plugins` entry: `id` is `<plugin>@<marketplace>`."""
    name, _, market = str(plugin.get("id") or "").partition("@")
    return name, market or str(plugin.get("marketplace") or DEFAULT_MARKET)


def agent_env_flags(env_home: Path, source: Path) -> list[str]:
    """madbench v0.23.0's argv for an agent_env folder (as copied to `env_home`). `--settings`
    is passed even when the folder has no settings.json: with `--setting-sources ""` it is the
    only settings Claude Code reads, so the first-run answers are merged into that copy."""
    flags = ["--bare", "--setting-sources", ""]
    plugins = source / "plugins"
    if plugins.is_dir():
        for child in sorted(p for p in plugins.iterdir() if p.is_dir()):
            flags += ["--plugin-dir", str(env_home / "plugins" / child.name)]
    if (source / ".mcp.json").is_file():
        flags += ["--mcp-config", str(env_home / ".mcp.json"), "--strict-mcp-config"]
    return flags + ["--settings", str(env_home / "settings.json")]  # always: the pre-seed's answers go there (see stage)


SKILLS = ".claude/skills"  # under HOME: the user's skills, where Harbor copies a task's skills_dir for Claude Code
MCP_TYPES = {"stdio": "stdio", "sse": "sse", "streamable-http": "http"}  # a Harbor MCP transport -> Claude Code's server type


def mcp_flags(servers: list[dict[str, Any]] | None) -> list[str]:
    """A Harbor task's MCP servers (McpServer.to_dict) as Claude Code takes them: one
    `--mcp-config` JSON of the entries Harbor's claude-code agent writes to ~/.claude.json (a
    user's servers, loaded without a trust dialog); the servers a user configured load beside them."""
    if not servers:
        return []
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        kind = MCP_TYPES[server["transport"]]
        entries[server["name"]] = {"type": kind, "command": server["command"], "args": list(server.get("args") or [])} if kind == "stdio" else {"type": kind, "url": server["url"]}
    return ["--mcp-config", orjson.dumps({"mcpServers": entries}).decode()]


def stage(binary: str, home: Path, plugins: tuple[dict[str, Any], ...], agent_env: str | None, bench_dir: Path | None = None, skills: str | None = None) -> Staged:
    """The files, folders and commands that stage `plugins`, `agent_env` and a task's `skills`
    (a host folder of skill folders) under `home`."""
    out = Staged()
    if skills:
        out.home_trees[SKILLS] = skills
    markets: dict[str, list[dict[str, Any]]] = {}
    for plugin in plugins:
        name, market = plugin_parts(plugin)
        source = Path(str(plugin.get("path") or ""))
        if bench_dir is not None and not source.is_absolute():
            source = bench_dir / source
        out.home_trees[f"{MARKETS}/{market}/{name}"] = str(source)
        markets.setdefault(market, []).append({"name": name, "source": f"./{name}", "description": f"staged by benchtape from {source}"})
    for market, entries in markets.items():
        doc = {"name": market, "owner": {"name": "benchtape"}, "description": "plugins staged by benchtape", "plugins": entries}
        out.home_files[f"{MARKETS}/{market}/.claude-plugin/marketplace.json"] = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
        out.setup.append(Setup(f"marketplace-add:{market}", [binary, "plugin", "marketplace", "add", str(home / MARKETS / market)]))
    for plugin in plugins:
        name, market = plugin_parts(plugin)
        out.setup.append(Setup(f"plugin-install:{name}@{market}", [binary, "plugin", "install", f"{name}@{market}"]))
    if agent_env:
        out.home_trees[AGENT_ENV] = agent_env
        out.flags = agent_env_flags(home / AGENT_ENV, Path(agent_env))
        if not (Path(agent_env) / "settings.json").is_file():
            out.home_files[f"{AGENT_ENV}/settings.json"] = "{}\n"
    return out


def agent_env_plugins(agent_env: str | None) -> list[dict[str, Any]]:
    """The plugins an agent_env brings, as Claude Code names a `--plugin-dir` plugin (`<name>@inline`)."""
    folder = Path(agent_env) / "plugins" if agent_env else None
    if folder is None or not folder.is_dir():
        return []
    out = []
    for child in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            name = orjson.loads((child / ".claude-plugin" / "plugin.json").read_bytes()).get("name") or child.name
        except (OSError, orjson.JSONDecodeError, AttributeError):
            name = child.name
        out.append({"id": f"{name}@inline", "path": str(child), "via": "agent_env"})
    return out


# Claude Code connects a plugin's MCP servers without waiting unless told to, so an init line
# written under load says `pending` for a server that connects a moment later: the probe asks it
# to wait, and so reports each server as it settled (connected or failed).
SETTLED_MCP = {"MCP_CONNECTION_NONBLOCKING": "false"}


def probes(binary: str, flags: list[str], plugins: tuple[dict[str, Any], ...], details: int, init: list[str] | None) -> list[Setup]:
    """The probe's commands; `init` is the argv tail of a print-mode run that prints the init line."""
    out = [Setup("plugin-list", [binary, *flags, "plugin", "list", "--json"])]
    for plugin in list(plugins)[: max(0, details)]:
        name, market = plugin_parts(plugin)
        out.append(Setup(f"plugin-details:{name}@{market}", [binary, *flags, "plugin", "details", f"{name}@{market}"]))
    if init is not None:
        out.append(Setup("init", [binary, "-p", "--output-format", "stream-json", "--verbose", *init, "benchtape environment probe"], env={"ANTHROPIC_BASE_URL": DEAD_ENDPOINT, **SETTLED_MCP}, until=INIT_MARK, timeout=60.0))
    return out


# ---------------------------------------------------------------- what the tool said

_COUNT = re.compile(r"^\s*(Skills|Agents|Hooks|MCP servers|LSP servers)\s*\((\d+)\)\s*(.*)$")
_KEYS = {"Skills": "skills", "Agents": "agents", "Hooks": "hooks", "MCP servers": "mcp_servers", "LSP servers": "lsp_servers"}


def details_of(text: str) -> dict[str, Any]:
    """`claude plugin details`'s component inventory: names where it lists them, else counts."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        m = _COUNT.match(line)
        if not m:
            continue
        key, count, rest = _KEYS[m.group(1)], int(m.group(2)), m.group(3)
        names = [n.strip() for n in rest.split("(")[0].split(",") if n.strip()]
        out[key] = names if len(names) == count and count else count
    return out


def reported(outputs: Mapping[str, Output], plugins: tuple[dict[str, Any], ...]) -> tuple[EnvironmentReported | None, list[str]]:
    """The Reported record from the probe's outputs, and why `require: true` would refuse
    (a staged plugin not listed or listed with errors, the probe not running, an MCP server
    that failed). None when the probe did not run at all."""
    problems: list[str] = []
    listing = outputs.get("plugin-list")
    record: EnvironmentReported = {"source": "plugin-cli", "sources": ["plugin-cli"], "plugins": []}
    if listing is None or listing.exit_code != 0:
        why = (listing.stderr or listing.stdout).strip()[-300:] if listing else "it was not run"
        problems.append(f"the environment probe (`claude plugin list --json`) failed: {why}")
        entries: list[Any] = []
    else:
        try:
            entries = orjson.loads(listing.stdout[listing.stdout.find("[") :] if "[" in listing.stdout else "[]")
        except orjson.JSONDecodeError:
            problems.append("the environment probe's `plugin list --json` printed no JSON list")
            entries = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not entry.get("id"):
            continue
        plugin = {k: entry[k] for k in ("id", "version", "scope", "enabled", "installPath", "errors") if k in entry}
        if isinstance(entry.get("mcpServers"), dict):
            plugin["mcp_servers"] = sorted(entry["mcpServers"])
        detail = outputs.get(f"plugin-details:{entry['id']}")
        if detail is not None and detail.exit_code == 0:
            plugin.update(details_of(detail.stdout))
        record["plugins"].append(plugin)
    for plugin in plugins:  # a staged plugin the tool refused to install: its words are the errors
        name, market = plugin_parts(plugin)
        pid = f"{name}@{market}"
        install = outputs.get(f"plugin-install:{pid}")
        if install is not None and install.exit_code != 0 and not any(p.get("id") == pid for p in record["plugins"]):
            said = " ".join((install.stderr + " " + install.stdout).split())[-500:] or f"exit {install.exit_code}"
            record["plugins"].append({"id": pid, "enabled": False, "errors": [said]})
    init = outputs.get("init")
    if init is not None:
        event = next((e for e in map(_json, init.stdout.splitlines()) if e.get("type") == "system" and e.get("subtype") == "init"), None)
        if event is None:
            problems.append(f"the environment probe printed no init line: {(init.stderr or init.stdout).strip()[-300:]}")
        else:
            record = fold(record, environment_of(event), event.get("plugin_errors"))
    for plugin in plugins:
        name, market = plugin_parts(plugin)
        listed = [p for p in record["plugins"] if p.get("id") == f"{name}@{market}"]
        if not listed:
            problems.append(f"staged plugin {name}@{market} is not listed by `claude plugin list`")
        elif any(p.get("errors") or p.get("enabled") is False for p in listed):
            problems.append(f"staged plugin {name}@{market} did not load: {'; '.join(str(e) for p in listed for e in p.get('errors') or ['disabled'])}")
    for server in record.get("mcp_servers") or []:
        if server.get("status") == "failed":
            problems.append(f"MCP server {server.get('name')} failed to start")
    return record, problems


def _json(line: str) -> dict[str, Any]:
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def fold(base: EnvironmentReported | None, init: EnvironmentReported, plugin_errors: Any = None) -> EnvironmentReported:
    """One record carrying both surfaces: the init line's inventories over the plugin-cli
    record, plugin entries joined by id (init names them `source`), `plugin_errors` kept."""
    if not base:
        out = init.copy()
        if plugin_errors:
            out["plugin_errors"] = plugin_errors
        return out
    out = {**base, **cast(EnvironmentReported, {k: v for k, v in init.items() if k not in ("source", "plugins")})}
    out["source"] = "plugin-cli"
    out["sources"] = list(dict.fromkeys([*(base.get("sources") or ["plugin-cli"]), "system:init"]))
    plugins = [dict(p) for p in base.get("plugins") or []]
    for entry in init.get("plugins") or []:
        if not isinstance(entry, dict):
            continue
        pid = entry.get("source") or entry.get("name")
        known = next((p for p in plugins if p.get("id") == pid), None)
        if known is not None:
            known.setdefault("name", entry.get("name"))
            known.setdefault("path", entry.get("path"))
        else:
            plugins.append({"id": pid, "name": entry.get("name"), "path": entry.get("path"), "version": entry.get("version")})
    out["plugins"] = plugins
    if plugin_errors:
        out["plugin_errors"] = plugin_errors
    return out


def environment_of(init: dict[str, Any]) -> EnvironmentReported:
    """What the CLI said it loaded (`system/init`), in the shape checks/environment.py reads.

    A key the init line does not carry is left out (unknown), never written as empty.
    """
    reported: dict[str, Any] = {"source": "system:init"}  # EnvironmentReported, its keys from the table below
    for key, native in (
        ("tools", "tools"),
        ("mcp_servers", "mcp_servers"),
        ("plugins", "plugins"),
        ("skills", "skills"),
        ("agents", "agents"),
        ("commands", "slash_commands"),
        ("model", "model"),
        ("permission_mode", "permissionMode"),
        ("version", "claude_code_version"),
        ("cwd", "cwd"),
    ):
        value = init.get(native)
        if value is not None and (native not in LIST_KEYS or isinstance(value, list)):
            reported[key] = value
    if isinstance(reported.get("mcp_servers"), list):
        reported["mcp_servers"] = [
            {k: s[k] for k in ("name", "status") if k in s} for s in reported["mcp_servers"] if isinstance(s, dict)
        ]
    return cast(EnvironmentReported, reported)


LIST_KEYS = ("tools", "mcp_servers", "plugins", "skills", "agents", "slash_commands")
