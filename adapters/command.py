"""The `command` harness: any command-line agent, by its argv.

    harness: command
    harness_config:
      command: [./my-agent, --task, "{prompt_file}", --model, "{model}"]
      args: [--fast]                       # appended to command (what an evaluation option's `args` add)
      env: {MY_AGENT_LOG: debug}          # added to its environment ({…} filled in too)
      timeout: 600                         # seconds, killed (with what it started) after
      stdin: false                         # true: the prompt is also written to its stdin
      transcript:                          # optional: the agent's own record, read after it exits
        path: "logs/*.jsonl"               # relative to the workspace, or absolute; a glob ({home} too)
        format: claude-stream-json         # claude-transcript | claude-stream-json | codex-rollout | codex-exec-json | gemini-stream-json | atif

The argv's words may hold `{prompt}`, `{prompt_file}` (a file holding the prompt, outside the
workspace), `{workdir}` (where the agent starts), `{root}` (the workspace root), `{home}`,
`{model}` and `{endpoint}`: with `--model scripted`, the scripted model's base URL (Anthropic's
form, `{endpoint}/v1/messages`; an OpenAI-compatible client takes `{endpoint}/v1`), also in the
agent's environment as BENCHTAPE_MODEL_ENDPOINT; empty otherwise. The command runs through `command_agent.py` (see there), so its output and its
transcript arrive as raw lines and `reparse` works from the store alone.

What it records: without a transcript, the process's output is the session's final output,
and the workspace snapshots its changes; it sees no tool call, so a check of calls says it does
not apply (session.started `records_calls: false`). With a transcript, the session's messages,
tool calls (canonical actions) and tokens are that transcript's, as `benchtape import` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from benchtape.adapters.base import Command, Launch, on_path, warning
from benchtape.adapters.config import ConfigReader
from benchtape.core.errors import BadInput
from benchtape.core.model import Action

HARNESS = "command"
FORMATS = ("claude-transcript", "claude-stream-json", "codex-rollout", "codex-exec-json", "gemini-stream-json", "atif")
PLACEHOLDERS = ("prompt", "prompt_file", "workdir", "root", "home", "model", "endpoint")


@dataclass(frozen=True)
class CommandConfig:
    argv: tuple[str, ...]  # the template, with `args` (an evaluation option's effect) appended
    env: dict[str, str]
    timeout: float | None
    stdin: bool
    transcript: dict[str, str] | None


def parse_config(harness_config: dict[str, Any] | None) -> CommandConfig:
    """Check and type the command harness's config; every mistake names the key and the fix."""
    r = ConfigReader(HARNESS, harness_config)
    argv = r.strings("command") + r.strings("args")  # no `command`: a Tool's option may give the whole argv as `args`
    if not argv:
        from benchtape.core.errors import closest

        typo = next((k for k in r.config if isinstance(k, str) and k != "command" and closest(k, ["command"])), None)
        if typo is not None:  # unknown keys are ignored (madbench's rule), but this one is why `command` is missing
            raise r.fail(f"`command` is required, and `{typo}` is not a key it reads: did you mean `command`?", fix=f'rename `{typo}` to `command`: the agent\'s argv as a list, e.g. `command: [./agent.sh, "{{prompt_file}}"]`')
        raise r.fail("`command` is required: the agent's argv as a list", fix='e.g. `command: [./agent.sh, "{prompt_file}"]` (or a Tool option whose `args` are the argv)')
    for word in argv:
        for name in _placeholders(word):
            if name not in PLACEHOLDERS:
                raise r.fail(f"command word {word!r} holds {{{name}}}, which is not a placeholder", fix=f"use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    env = r.config.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise r.fail("`env` must map names to strings", fix='e.g. `env: {MY_AGENT_LOG: "1"}`')
    timeout = r.config.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise r.fail(f"`timeout` must be a positive number of seconds, got {timeout!r}")
    stdin = r.boolean(r.config.get("stdin"), "stdin") or False
    transcript = r.config.get("transcript")
    if transcript is not None:
        if isinstance(transcript, str):
            raise r.fail("`transcript` must be a map {path, format}", fix=f"e.g. `transcript: {{path: {transcript!r}, format: claude-stream-json}}`")
        if not isinstance(transcript, dict) or not isinstance(transcript.get("path"), str) or not transcript["path"]:
            raise r.fail("`transcript` needs `path` (a file or glob, relative to the workspace)")
        if transcript.get("format") not in FORMATS:
            raise r.fail(f"`transcript.format` {transcript.get('format')!r} is not a format benchtape reads", fix=f"use one of {', '.join(FORMATS)}")
        transcript = {"path": transcript["path"], "format": transcript["format"]}
    return CommandConfig(tuple(argv), dict(env), float(timeout) if timeout is not None else None, stdin, transcript)


def _placeholders(word: str) -> list[str]:
    import re

    return re.findall(r"(?<!\{)\{([A-Za-z_]*)\}(?!\})", word)


class CommandParser:
    """The wrapper's lines (command_agent.py): the command's output, then its transcript read by
    that format's own parser; at the end, without a transcript, the output is the final output."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.sub: Any = None
        self.exit: int | None = None

    def feed(self, line: str) -> list[Action]:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            return [warning("not a line of the command harness's wrapper", line)]
        if not isinstance(event, dict):
            return [warning("not a line of the command harness's wrapper", line)]
        if "out" in event:
            self.out.append(str(event["out"]))
            return []
        if "t" in event:
            if self.sub is None:
                return [warning("a transcript line before its header", line)]
            actions: list[Action] = self.sub.feed(str(event["t"]))
            return actions
        if "transcript" in event:
            from benchtape.adapters.transcripts import parser_for

            self.sub = parser_for(str(event.get("format")))
            return []
        if "error" in event:
            return [Action("adapter.warning", {"what": str(event["error"]), "line": "", "source": "command"})]
        if "exit" in event:
            self.exit = event["exit"] if isinstance(event["exit"], int) else None
            return []
        return [warning("an unknown line of the command harness's wrapper", line)]

    def finish(self) -> list[Action]:
        if self.sub is not None:
            from benchtape.adapters.lines import finish_safely

            return list(finish_safely(self.sub))
        text = "\n".join(self.out).strip("\n")
        return [Action("message.assistant", {"text": text}), Action("final_output", {"text": text})] if text else []


class CommandAdapter:
    name = HARNESS
    native_tools: frozenset[str] | None = None  # whatever its transcript names
    bookkeeping: tuple[str, ...] = ()
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {}

    def command(self, launch: Launch) -> Command:
        cfg = parse_config(launch.harness_config)
        job = {
            "argv": list(cfg.argv),
            "env": cfg.env,
            "prompt": launch.prompt,
            "cwd": str(launch.work_dir),
            "root": str(launch.root),
            "model": launch.model or "",
            "endpoint": launch.endpoint or "",
            "timeout": cfg.timeout,
            "stdin": cfg.stdin,
            "transcript": cfg.transcript,
        }
        # which program ran (never asked its --version: that could start the agent)
        facts: dict[str, Any] = {"binary": {"path": cfg.argv[0], "version": None}}
        if cfg.transcript is None:
            facts["records_calls"] = False
        return Command(argv=launch.helper("command_agent.py"), stdin=orjson.dumps(job), facts=facts)

    def parser(self) -> CommandParser:
        return CommandParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        try:
            cfg = parse_config(harness_config)
        except BadInput as exc:
            return [f"{exc.what}; {exc.fix}" if exc.fix else exc.what]
        first = cfg.argv[0]
        if "{" in first or first.startswith("."):
            return []  # a path in the workspace, or one filled in at launch: checked when it starts
        if not on_path(first, env):
            return [f"command: `{first}` is not on PATH (harness_config.command[0]); install it, or give its path"]
        return []
