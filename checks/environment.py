"""`environment:*` — what the agent was GIVEN, not what it did.

`Session.environment` has two halves: `expected` (what benchtape staged, its own claim)
and `reported` (what the tool itself said it loaded, the evidence). Expected may name the
subject of a question, never its answer: every check here decides from `reported`, so a
plugin that was staged but never loaded cannot pass.

When nothing was captured (`reported` is None) every check ERRORs rather than fails: an
uncaptured environment is the absence of a measurement, not a verdict about a plugin.

## The shape read here (the adapters write it; keep the two in step)

`environment.reported` is one dict. Its keys follow Claude Code's stream-json
`system/init` line, renamed only where noted; every key is optional:

    {
      "source":   "system:init" | "plugin-cli",   # the surface this record came from
      "sources":  ["plugin-cli", "system:init"],  # every surface folded into the record;
                                                  #   read as the union with "source"
      "tools":    ["Bash", "Read", "mcp__railway__deploy", ...],   # init.tools, verbatim
      "mcp_servers": [{"name": "claudish", "status": "connected"}], # init.mcp_servers;
                                                  #   "status" absent = not reported
                                                  #   (e.g. the interactive path)
      "plugins": [                                # init.plugins / `claude plugin list --json`
        {
          "id":      "dev@magus",                 # `plugin list` spelling; or
          "name":    "dev",                       #   init.plugins[].name (one of the two is required)
          "path":    "/home/u/.claude/plugins/dev",   # optional
          "enabled": true,                        # optional; false = listed, not loaded
          "errors":  ["manifest: ..."],           # optional; non-empty = listed, failed to load
          # the `claude plugin details <id>` breakdown, each a list of names or a count;
          # write every count the breakdown has (0 included): an absent key is unknown.
          "skills":      ["architecture"],        # names bare or namespaced ("dev:architecture")
          "agents":      ["reviewer"],
          "commands":    ["architect"],
          "hooks":       3,
          "mcp_servers": ["claudish"],
          "lsp_servers": []
        }
      ],
      "skills":   ["dev:architecture", ...],      # init.skills
      "agents":   ["general-purpose", "dev:reviewer", ...],   # init.agents
      "commands": ["dev:architect", ...],         # init.slash_commands (renamed)
      "model":    "claude-sonnet-4-6",            # init.model           (informational)
      "permission_mode": "bypassPermissions",     # init.permissionMode  (renamed)
      "version":  "2.1.72"                        # init.claude_code_version (renamed)
    }

The projection merges successive `environment.reported` actions shallowly (a later key
replaces an earlier one), so an adapter that reads two surfaces should write one record
carrying both, with `"sources"` naming them.

`environment.expected` is what benchtape staged: `{"plugins": [{"id": "dev@magus",
"path": "/staged/dev"}], ...}`.

Readings:
- a plugin is *listed* when an entry's id or name matches (`dev` matches `dev@magus`
  and the reverse; two marketplaces never match each other); it is *loaded* when it is
  listed, `enabled` is not false and `errors` is empty.
- Skills(), Agents(), Commands() = the top-level list plus the items of *loaded* plugins;
  a plugin's item `x` is known both as `x` and as `<plugin>:x`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from benchtape.checks.common import args_of, family_register, short, text_value
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator
from benchtape.core.errors import closest
from benchtape.core.model import Session
from benchtape.core.payloads import EnvironmentReported
from benchtape.core.results import CheckSpec, Result

INIT = "system:init"
PLUGIN_CLI = "plugin-cli"
INVENTORY_KEYS = ("skills", "agents", "hooks", "mcp_servers", "lsp_servers")


def _uncaptured(check_type: str) -> Result:
    return Result.error(
        f"{check_type}: no environment was captured for this session "
        f"(harness_config.environment.probe is false, or this harness does not report one)"
    )


# Keys of the reported record that hold a list when present; "source" holds one string.
_LIST_KEYS = ("sources", "plugins", "mcp_servers", "tools", "skills", "agents", "commands")


def _reported(session: Session, check_type: str) -> EnvironmentReported | Result:
    """The reported record, or the ERROR a missing or malformed one deserves.

    A key of the wrong shape is an ERROR naming it, rather than a TypeError here or a
    silent misreading there (a string of sources iterated letter by letter)."""
    env = session.environment if isinstance(session.environment, dict) else None
    reported = env.get("reported") if env else None
    if reported is None:
        return _uncaptured(check_type)
    if not isinstance(reported, dict):
        return Result.error(f"{check_type}: environment.reported is a {type(reported).__name__}, not a map; the adapter wrote it wrongly")
    wrong = _misshapen(reported, "environment.reported", _LIST_KEYS) or (
        None if isinstance(reported.get("source"), (str, type(None))) else f"environment.reported.source is {short(repr(reported['source']), 60)}, not a string"
    )
    if wrong:
        return Result.error(f"{check_type}: {wrong}; the adapter wrote it wrongly")
    return reported


def _on_reported(spec: CheckSpec, evaluate: Callable[[Session, EnvironmentReported], Result]) -> Evaluator:
    """The evaluator of a check that decides from the reported record: every one ERRORs
    the same way when the record is missing or malformed, before it reads anything."""

    def run(session: Session, ctx: CheckContext) -> Result:
        reported = _reported(session, spec.type)
        return reported if isinstance(reported, Result) else evaluate(session, reported)

    return run


def _misshapen(record: Mapping[str, object], where: str, list_keys: tuple[str, ...]) -> str | None:
    for key in list_keys:
        value = record.get(key)
        if value is not None and not isinstance(value, list):
            return f"{where}.{key} is {short(repr(value), 60)}, not a list"
    return None


def _sources(reported: EnvironmentReported) -> list[str]:
    found: list[str] = []
    for s in [reported.get("source"), *(reported.get("sources") or [])]:
        if isinstance(s, str) and s not in found:
            found.append(s)
    return found


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# ---------------------------------------------------------------- plugins


def _split_id(plugin_id: str) -> tuple[str, str | None]:
    name, _, market = plugin_id.partition("@")
    return name, market or None


def _plugin_label(entry: dict[str, Any]) -> str | None:
    label = entry.get("id") or entry.get("name")
    return label if isinstance(label, str) and label else None


def _matches(entry: dict[str, Any], wanted: str) -> bool:
    """`dev` names `dev@magus` and the reverse; two different marketplaces never match."""
    label = _plugin_label(entry)
    if label is None:
        return False
    (got_name, got_market), (want_name, want_market) = _split_id(label), _split_id(wanted)
    return got_name == want_name and (got_market is None or want_market is None or got_market == want_market)


def _plugins(reported: EnvironmentReported) -> list[dict[str, Any]]:
    return [p for p in reported.get("plugins") or [] if isinstance(p, dict) and _plugin_label(p)]


def _errors(entry: dict[str, Any]) -> list[Any]:
    errs = entry.get("errors")
    return list(errs) if isinstance(errs, list) else ([errs] if errs else [])


def _loaded(entry: dict[str, Any]) -> bool:
    return entry.get("enabled") is not False and not _errors(entry)


def _listed(reported: EnvironmentReported, wanted: str) -> list[dict[str, Any]]:
    return [p for p in _plugins(reported) if _matches(p, wanted)]


def _registered(reported: EnvironmentReported, key: str) -> list[str]:
    """A top-level list plus the items of loaded plugins, each also under `<plugin>:<item>`."""
    names = list(_strings(reported.get(key)))
    for plugin in _plugins(reported):
        if not _loaded(plugin):
            continue
        prefix = _split_id(_plugin_label(plugin) or "")[0]
        for item in _strings(plugin.get(key)):
            for spelling in (item, f"{prefix}:{item}"):
                if spelling not in names:
                    names.append(spelling)
    return names


def reported_counts(session: Session) -> dict[str, int] | None:
    """What the `session.plugins_reported`, `session.plugins_failed` and
    `session.skills_registered` metric sources read: plugins the tool listed without / with
    errors (or disabled), and its registered skills (`Reported.Skills()`, one per skill:
    plugin items counted once, not per spelling). None when no environment was reported."""
    reported = _reported(session, "metrics")
    if isinstance(reported, Result):
        return None
    plugins = _plugins(reported)
    skills = set(_strings(reported.get("skills")))
    for plugin in plugins:
        if _loaded(plugin):
            prefix = _split_id(_plugin_label(plugin) or "")[0]
            skills.update(item if ":" in item else f"{prefix}:{item}" for item in _strings(plugin.get("skills")))
    return {"plugins_reported": sum(1 for p in plugins if _loaded(p)), "plugins_failed": sum(1 for p in plugins if not _loaded(p)), "skills_registered": len(skills)}


# ---------------------------------------------------------------- shared argument readers


def _subject(spec: CheckSpec, example: str) -> str:
    return text_value(spec, f"name what to look for, e.g. value: {example}").strip()


_reg = family_register("environment", "environment")


# ---------------------------------------------------------------- plugin-loaded


@_reg(
    "plugin-loaded",
    summary="the tool lists the plugin (plugin-cli or system:init) and it carries no errors",
    reads="environment.reported.plugins",
    example="- type: environment:plugin-loaded\n  value: dev@magus",
    errors=["value not a plugin id"],
)
def plugin_loaded(spec: CheckSpec) -> Evaluator:
    wanted = _subject(spec, "dev@magus")

    def evaluate(session: Session, reported: EnvironmentReported) -> Result:
        listed = _listed(reported, wanted)
        evidence: dict[str, Any] = {
            "plugin": wanted,
            "sources": _sources(reported),
            "plugins_reported": [_plugin_label(p) for p in _plugins(reported)],
            "listed": [{"plugin": _plugin_label(p), "enabled": p.get("enabled"), "errors": _errors(p)} for p in listed],
        }
        if not listed:
            return Result.of(False, f"plugin {wanted} is not listed by the tool ({len(evidence['plugins_reported'])} plugin(s) reported)", evidence)
        if any(_loaded(p) for p in listed):
            return Result.of(True, f"plugin {wanted} is loaded", evidence)
        errs = [e for p in listed for e in _errors(p)]
        why = f"with errors: {'; '.join(map(str, errs))}" if errs else "but disabled"
        return Result.of(False, f"plugin {wanted} is listed {why}", evidence)

    return _on_reported(spec, evaluate)


# ---------------------------------------------------------------- skill / command / agent registered


def _registered_check(key: str, noun: str, example: str) -> Callable[[CheckSpec], Evaluator]:
    def builder(spec: CheckSpec) -> Evaluator:
        wanted = _subject(spec, example)

        def evaluate(session: Session, reported: EnvironmentReported) -> Result:
            sources = _sources(reported)
            if key == "commands" and sources == [PLUGIN_CLI]:
                return Result.error(
                    f"{spec.type}: plugin-cli is the only source of this environment, and `claude plugin details` folds "
                    f"commands into its Skills count; use environment:skill-registered, or capture system:init (the --print path)"
                )
            names = _registered(reported, key)
            evidence = {noun: wanted, "sources": sources, f"{key}_registered": names}
            if wanted in names:
                return Result.of(True, f"{noun} {wanted} is registered", evidence)
            near = closest(wanted, names)
            hint = f" (closest: {near})" if near else ""
            return Result.of(False, f"{noun} {wanted} is not registered ({len(names)} {key} reported){hint}", evidence)

        return _on_reported(spec, evaluate)

    return builder


for _key, _noun, _example, _summary, _reads in (
    ("skills", "skill", "dev:architecture", "the tool registered the skill (top-level skills, or a loaded plugin's)", "environment.reported.skills and loaded plugins' skills"),
    ("commands", "command", "dev:architect", "the tool registered the slash command; errors when plugin-cli is the only source", "environment.reported.commands (init.slash_commands) and loaded plugins' commands"),
    ("agents", "agent", "dev:reviewer", "the tool registered the agent (top-level agents, or a loaded plugin's)", "environment.reported.agents and loaded plugins' agents"),
):
    _reg(
        f"{_noun}-registered",
        summary=_summary,
        reads=_reads,
        example=f"- type: environment:{_noun}-registered\n  value: {_example}",
        errors=[f"value not {'an' if _noun[0] in 'aeiou' else 'a'} {_noun} name"],
    )(_registered_check(_key, _noun, _example))


# ---------------------------------------------------------------- mcp-connected


def _server_matches(name: str, wanted: str) -> bool:
    """`claudish` names `claudish` and a plugin's `plugin:<plugin>:claudish`."""
    return name == wanted or (":" not in wanted and name.startswith("plugin:") and name.rsplit(":", 1)[-1] == wanted)


def _answered_calls(session: Session, servers: list[str]) -> list[str]:
    """The session's calls of these servers' tools that got an answer that is not an error:
    the server connected after all. Claude Code names a server's tools `mcp__<name>__<tool>`,
    each character of the name outside letters, digits, `_` and `-` made `_`."""
    prefixes = tuple(f"mcp__{re.sub(r'[^A-Za-z0-9_-]', '_', name)}__" for name in servers)
    return [c.tool for c in session.calls if c.tool.startswith(prefixes) and c.has_result and c.is_error is not True]


@_reg(
    "mcp-connected",
    summary="system:init lists the MCP server with status connected, or pending and then one of its tools answered (no status, or pending and never used: error)",
    reads="environment.reported.mcp_servers, and loaded plugins' mcp_servers",
    example="- type: environment:mcp-connected\n  value: claudish",
    errors=["value not a server name"],
)
def mcp_connected(spec: CheckSpec) -> Evaluator:
    wanted = _subject(spec, "claudish")

    def evaluate(session: Session, reported: EnvironmentReported) -> Result:
        servers = [s for s in reported.get("mcp_servers") or [] if isinstance(s, dict) and isinstance(s.get("name"), str)]
        exact = [s for s in servers if s["name"] == wanted]
        found = exact or [s for s in servers if _server_matches(s["name"], wanted)]
        declared_by = {
            _plugin_label(p): _loaded(p) for p in _plugins(reported) if any(_server_matches(n, wanted) for n in _strings(p.get("mcp_servers")))
        }
        evidence: dict[str, Any] = {
            "server": wanted,
            "sources": _sources(reported),
            "servers": [{"name": s["name"], "status": s.get("status")} for s in servers],
            "declared_by_plugins": declared_by,
        }
        if any(s.get("status") == "connected" for s in found):
            return Result.of(True, f"MCP server {found[0]['name']} is connected", evidence)
        pending = [s["name"] for s in found if s.get("status") == "pending"]
        if pending:
            answered = _answered_calls(session, pending)
            evidence["answered_calls"] = answered
            if answered:
                return Result.of(True, f"MCP server {pending[0]} was still connecting at system:init, then answered {answered[0]}", evidence)
            return Result.error(
                f"{spec.type}: MCP server {pending[0]} was still connecting when system:init was written "
                f"(Claude Code connects a plugin's servers without waiting) and no tool of it answered later, "
                f"so whether it connected is unknown",
                evidence,
            )
        unreported = [s for s in found if s.get("status") is None]
        if unreported or (not found and any(declared_by.values())):
            return Result.error(
                f"{spec.type}: MCP server {wanted} is listed but no status was reported "
                f"(only system:init on the --print path reports one)",
                evidence,
            )
        if found:
            statuses = ", ".join(f"{s['name']} {s.get('status')}" for s in found)
            return Result.of(False, f"MCP server {wanted} is not connected ({statuses})", evidence)
        if declared_by:
            return Result.of(False, f"MCP server {wanted} is declared only by plugin(s) that did not load: {', '.join(map(str, declared_by))}", evidence)
        return Result.of(False, f"MCP server {wanted} is not listed ({len(servers)} server(s) reported)", evidence)

    return _on_reported(spec, evaluate)


# ---------------------------------------------------------------- tool-available


@_reg(
    "tool-available",
    summary="system:init's tool roster contains the tool exactly; errors without system:init or with an empty roster",
    reads="environment.reported.tools (init.tools)",
    example="- type: environment:tool-available\n  value: Skill",
    errors=["value not a tool name"],
)
def tool_available(spec: CheckSpec) -> Evaluator:
    wanted = _subject(spec, "Skill")

    def evaluate(session: Session, reported: EnvironmentReported) -> Result:
        sources = _sources(reported)
        if INIT not in sources:
            return Result.error(
                f"{spec.type}: no system:init was captured (sources: {', '.join(sources) or 'none'}), "
                f"and only system:init carries the tool roster",
                {"sources": sources},
            )
        tools = _strings(reported.get("tools"))
        if not tools:
            return Result.error(f"{spec.type}: system:init carried no tool roster; every session registers tools, so this one never said", {"sources": sources})
        evidence = {"tool": wanted, "sources": sources, "tools": tools}
        if wanted in tools:
            return Result.of(True, f"tool {wanted} is available", evidence)
        near = closest(wanted, tools)
        hint = f" (closest: {near})" if near else ""
        return Result.of(False, f"tool {wanted} is not in the roster of {len(tools)}{hint}", evidence)

    return _on_reported(spec, evaluate)


# ---------------------------------------------------------------- plugin-inventory


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return None


@_reg(
    "plugin-inventory",
    summary="the plugin's `plugin details` breakdown meets every declared floor (the staged tree, loaded or not)",
    reads="environment.reported.plugins[].skills/agents/hooks/mcp_servers/lsp_servers",
    args={k: f"the fewest {k.replace('_', ' ')} the plugin must carry (a floor)" for k in INVENTORY_KEYS},
    example="- type: environment:plugin-inventory\n  value: dev@magus\n  args: {skills: 20, agents: 1}",
    errors=["value not a plugin id", "an unknown args key", "no floor declared", "a floor that is not a whole number >= 0"],
)
def plugin_inventory(spec: CheckSpec) -> Evaluator:
    wanted = _subject(spec, "dev@magus")
    args = args_of(spec)
    for key in args:
        if key not in INVENTORY_KEYS:
            near = closest(str(key), INVENTORY_KEYS)
            hint = f' (did you mean "{near}"?)' if near else ""
            raise CheckConfigError(f"{spec.type}: args.{key} is not a floor this check knows{hint}; use {', '.join(INVENTORY_KEYS)}")
    if not args:
        raise CheckConfigError(f"{spec.type}: declare at least one floor ({', '.join(INVENTORY_KEYS)}), e.g. args: {{skills: 20}}; with none it grades nothing")
    for key, floor in args.items():
        if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
            raise CheckConfigError(f"{spec.type}: args.{key} must be a whole number >= 0 (a floor), got {floor!r}")
    floors: dict[str, int] = dict(args)

    def evaluate(session: Session, reported: EnvironmentReported) -> Result:
        listed = _listed(reported, wanted)
        evidence: dict[str, Any] = {"plugin": wanted, "floors": floors, "sources": _sources(reported)}
        if not listed:
            return Result.of(False, f"plugin {wanted} is not listed, so it has no inventory", evidence)
        entry = next((p for p in listed if any(k in p for k in INVENTORY_KEYS)), None)
        if entry is None:
            return Result.error(
                f"{spec.type}: plugin {wanted} is listed with no breakdown (the `plugin details` probe was capped or "
                f"switched off: harness_config.environment.details)",
                evidence,
            )
        counts = {k: _count(entry.get(k)) for k in floors}
        evidence["counts"] = counts
        unknown = [k for k, n in counts.items() if n is None]
        if unknown:
            return Result.error(f"{spec.type}: plugin {wanted}'s breakdown does not report {', '.join(unknown)}", evidence)
        short = [f"{k} {counts[k]} < {floors[k]}" for k in floors if counts[k] < floors[k]]  # type: ignore[operator]
        met = len(floors) - len(short)
        score = met / len(floors)
        if short:
            return Result.of(False, f"plugin {wanted} meets {met} of {len(floors)} floor(s): {', '.join(short)}", evidence, score=score)
        return Result.of(True, f"plugin {wanted} meets all {len(floors)} floor(s)", evidence, score=score)

    return _on_reported(spec, evaluate)


# ---------------------------------------------------------------- matches-expected


@_reg(
    "matches-expected",
    summary="every plugin benchtape staged is listed and loaded; score = the fraction loaded",
    reads="environment.expected.plugins against environment.reported.plugins",
    example="- type: environment:matches-expected",
    errors=["a value (this check takes none: the staged plugins are its subject)"],
)
def matches_expected(spec: CheckSpec) -> Evaluator:
    if spec.value is not None:
        raise CheckConfigError(
            f"{spec.type}: takes no value: it compares every staged plugin (harness_config.plugins) with what the tool "
            f"reported; remove value, or use environment:plugin-loaded for one plugin"
        )

    def evaluate(session: Session, reported: EnvironmentReported) -> Result:
        expected = session.environment.get("expected")  # a dict: _reported found one
        if expected is not None and not isinstance(expected, dict):
            return Result.error(f"{spec.type}: environment.expected is {short(repr(expected), 60)}, not a map; the recorder wrote it wrongly")
        wrong = _misshapen(expected or {}, "environment.expected", ("plugins",))
        if wrong:
            return Result.error(f"{spec.type}: {wrong}; the recorder wrote it wrongly")
        staged = [p for p in (expected or {}).get("plugins") or [] if isinstance(p, dict) and _plugin_label(p)]
        if not staged:
            return Result.error(f"{spec.type}: nothing was staged (environment.expected lists no plugin), so there is nothing to match")
        rows: list[dict[str, Any]] = []
        for plugin in staged:
            pid = _plugin_label(plugin) or ""
            listed = _listed(reported, pid)
            rows.append({"plugin": pid, "listed": bool(listed), "loaded": any(_loaded(p) for p in listed), "errors": [e for p in listed for e in _errors(p)]})
        loaded = sum(r["loaded"] for r in rows)
        evidence = {"staged": rows, "plugins_reported": [_plugin_label(p) for p in _plugins(reported)], "sources": _sources(reported)}
        score = loaded / len(rows)
        if loaded == len(rows):
            return Result.of(True, f"all {len(rows)} staged plugin(s) loaded", evidence, score=score)
        bad = [f"{r['plugin']} ({_why_not(r)})" for r in rows if not r["loaded"]]
        return Result.of(False, f"{loaded} of {len(rows)} staged plugin(s) loaded; not loaded: {', '.join(bad)}", evidence, score=score)

    return _on_reported(spec, evaluate)


def _why_not(row: dict[str, Any]) -> str:
    if not row["listed"]:
        return "not listed"
    return "listed with errors" if row["errors"] else "listed but disabled"
