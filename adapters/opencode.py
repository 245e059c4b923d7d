"""The opencode harness: opencode (`opencode-ai` on npm, verified on 1.18.33) run as
`opencode run --pure --auto --format json --title benchtape [-m PROVIDER/MODEL] PROMPT`.

Its `--format json` stdout is one event per line, each with its `sessionID`:

    step_start   a model step begins
    tool_use     part{tool, callID, state{status: completed|error, input, output, error}}: a call and its result at once
    text         part{text}: the assistant's words
    step_finish  part{reason, tokens{input, output, reasoning, cache{read, write}}, cost}
    error        error{name, data{message}}

The recipe is ../shared/spec/more-agents-offline.md §2: everything it keeps (config, data,
state, cache) goes under a folder of benchtape's in its HOME (XDG_* variables), never your own
~/.config/opencode; that config dir is seeded with a package.json / package-lock.json naming
@opencode-ai/plugin and a node_modules/ (else opencode runs `npm install` into it at start: a
registry lookup); the models catalogue fetch is off (OPENCODE_DISABLE_MODELS_FETCH), as are
autoupdate, sharing, LSP downloads and the webfetch tool; stdin is empty (it reads stdin to EOF).
Its file snapshots (a git store of the work tree, for its undo) are off too: the sandbox's HOME
is the workspace, so that store lay inside the very tree it tracks when the workspace is a git
repository (every task cell), and each step re-hashed it: ~35 s of CPU a session against ~5.
With `--model scripted` a provider `benchtape` (@ai-sdk/openai-compatible, bundled) points at the
scripted server's `/v1`. In a real run only the key of the model's provider reaches it
(ANTHROPIC_API_KEY for anthropic/…, OPENAI_API_KEY for openai/…, …). opencode reports a cost of 0
for a model it cannot price: a cost is recorded only when it is above 0.
"""

from __future__ import annotations

from typing import Any, cast

import orjson

from benchtape.adapters.base import Command, Launch, host_credentials, preflight_prologue, warning
from benchtape.adapters.config import CliConfig, cli_binary, cli_config
from benchtape.adapters.endpoints import SCRIPTED_KEY, is_scripted
from benchtape.adapters.lines import LineParser, guarded
from benchtape.core.canonical import annotate
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action
from benchtape.core.payloads import Metrics, ToolCall, ToolResult

HARNESS = "opencode"
OWN = ".benchtape-opencode"  # under HOME: its XDG config, data, state and cache
PLUGIN_VERSION = "1.18.33"
PROVIDER_KEYS = {"anthropic": ("ANTHROPIC_API_KEY",), "openai": ("OPENAI_API_KEY",), "google": ("GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"), "openrouter": ("OPENROUTER_API_KEY",)}
QUIET_ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
}


def parse_config(harness_config: dict[str, Any] | None) -> CliConfig:
    return cli_config(HARNESS, harness_config)


def binary_of(cfg: CliConfig) -> str:
    return cli_binary(HARNESS, cfg.binary)


def config_files(scripted: bool) -> dict[str, str]:
    """The seeded config dir (relative to HOME): opencode.json, and what stops its plugin install."""
    doc: dict[str, Any] = {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled", "snapshot": False, "tools": {"webfetch": False}}
    if scripted:
        doc["provider"] = {"benchtape": {
            "npm": "@ai-sdk/openai-compatible", "name": "benchtape scripted model",
            "options": {"baseURL": "{env:BENCHTAPE_MODEL_URL}", "apiKey": "{env:BENCHTAPE_MODEL_KEY}"},
            "models": {"scripted": {"name": "scripted", "tool_call": True}},
        }}
        doc["model"] = doc["small_model"] = "benchtape/scripted"
    deps = {"@opencode-ai/plugin": PLUGIN_VERSION}
    lock = {"name": "opencode-config", "lockfileVersion": 3, "requires": True, "packages": {"": {"name": "opencode-config", "dependencies": deps}}}
    base = f"{OWN}/config/opencode"
    return {
        f"{base}/opencode.json": orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode(),
        f"{base}/package.json": orjson.dumps({"name": "opencode-config", "private": True, "dependencies": deps}).decode(),
        f"{base}/package-lock.json": orjson.dumps(lock).decode(),
        f"{base}/node_modules/.benchtape": "seeded by benchtape: opencode installs nothing here when this folder and the lock name its plugin\n",
    }


class OpencodeParser(LineParser):
    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.last_text: str | None = None
        self.tokens: dict[str, int] = {}
        self.cost = 0.0

    def _line(self, line: str) -> list[Action]:
        event = decode(line)
        if event is None:
            return [warning("not a JSON line", line)]
        if isinstance(event.get("sessionID"), str):
            self.thread_id = event["sessionID"]
        kind = event.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return [warning(f"unknown opencode event type {kind!r}", line)]
        return guarded(lambda e, raw: handler(self, e, raw), event, line)

    def _quiet(self, e: dict[str, Any], line: str) -> list[Action]:
        return []

    def _tool_use(self, e: dict[str, Any], line: str) -> list[Action]:
        part = e["part"]
        state = part.get("state") or {}
        given = state.get("input")
        call: ToolCall = {"call_id": str(part["callID"]), "tool": str(part["tool"]), "input": given if isinstance(given, dict) else {"value": given}}
        failed = state.get("status") == "error"
        output = state.get("error") if failed else state.get("output")
        result = {"call_id": call["call_id"], "output": output if output is not None else "", "is_error": failed if state.get("status") in ("completed", "error") else None}
        return [Action("tool.call", annotate(call, HARNESS)), Action("tool.result", cast(ToolResult, result))]

    def _text(self, e: dict[str, Any], line: str) -> list[Action]:
        text = str(e["part"].get("text") or "")
        if not text.strip():
            return []
        self.last_text = text
        return [Action("message.assistant", {"text": text})]

    def _step_finish(self, e: dict[str, Any], line: str) -> list[Action]:
        part = e["part"]
        tokens = part.get("tokens") or {}
        cache = tokens.get("cache") or {}
        for key, value in (("tokens_in", tokens.get("input")), ("tokens_out", tokens.get("output")), ("cache_read_tokens", cache.get("read")), ("cache_write_tokens", cache.get("write"))):
            if isinstance(value, int):
                self.tokens[key] = self.tokens.get(key, 0) + value
        if isinstance(part.get("cost"), (int, float)):
            self.cost += float(part["cost"])
        return []

    def _error(self, e: dict[str, Any], line: str) -> list[Action]:
        error = e.get("error") or {}
        data = error.get("data") if isinstance(error, dict) else None
        message = (data or {}).get("message") if isinstance(data, dict) else None
        return [Action("error", {"message": f"opencode: {message or (error.get('name') if isinstance(error, dict) else error) or 'an error'}"})]

    def finish(self) -> list[Action]:
        out: list[Action] = []
        metrics = cast(Metrics, dict(self.tokens))  # its token keys are Metrics' own
        if self.cost > 0:
            metrics["cost_usd"] = self.cost
        if metrics:
            out.append(Action("metrics", metrics))
        if self.last_text is not None:
            out.append(Action("final_output", {"text": self.last_text}))
        return out


_HANDLERS = {
    "step_start": OpencodeParser._quiet,
    "tool_use": OpencodeParser._tool_use,
    "text": OpencodeParser._text,
    "step_finish": OpencodeParser._step_finish,
    "error": OpencodeParser._error,
}


class OpencodeAdapter:
    name = HARNESS
    native_tools: frozenset[str] | None = frozenset({"bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "todoread", "webfetch", "write", "invalid", "list", "patch"})
    bookkeeping = (f"{OWN}/**", ".git/opencode")  # the latter: the project id it writes into any git repository it opens
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {}

    def binary(self, harness_config: dict[str, Any] | None) -> str:
        return binary_of(parse_config(harness_config))

    def command(self, launch: Launch) -> Command:
        cfg = parse_config(launch.harness_config)
        home = str(launch.home) if launch.home is not None else "."
        argv = [binary_of(cfg), "run", "--pure", "--auto", "--format", "json", "--title", "benchtape"]
        env = {**QUIET_ENV, **{f"XDG_{k.upper()}_HOME": f"{home}/{OWN}/{k}" for k in ("config", "data", "state", "cache")}}
        model = launch.model or cfg.model
        if launch.endpoint:
            argv += ["-m", "benchtape/scripted"]
            env.update({"BENCHTAPE_MODEL_URL": launch.endpoint.rstrip("/") + "/v1", "BENCHTAPE_MODEL_KEY": SCRIPTED_KEY})
        elif model and not is_scripted(model):
            argv += ["-m", model]
            env.update(host_credentials(PROVIDER_KEYS.get(model.split("/", 1)[0], ()), None))
        argv += [*cfg.args, launch.prompt]
        return Command(argv=argv, env=env, home_files=config_files(bool(launch.endpoint)))

    def parser(self) -> OpencodeParser:
        return OpencodeParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if scripted:
            return findings
        model = (launch.model if launch is not None else None) or cfg.model
        provider = model.split("/", 1)[0] if model and "/" in model else None
        if provider is None:
            findings.append("opencode: name the model as PROVIDER/MODEL (e.g. anthropic/claude-sonnet-4-6) in harness_config.model or --model, or run with --model scripted")
        elif provider in PROVIDER_KEYS and not any(env.get(k) for k in PROVIDER_KEYS[provider]):
            findings.append(f"opencode: no key for {provider}: set {' or '.join(PROVIDER_KEYS[provider])} (only it reaches opencode)")
        return findings
