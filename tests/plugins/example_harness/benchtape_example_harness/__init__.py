"""An example benchtape harness plugin: everything a harness is, in one package.

- the adapter (`EchoHarness`): how to start the agent (`command`), its parser, its preflight;
- the launch plan: the `Command` it returns (argv, env, stdin);
- the parser: the agent's own JSON lines to benchtape actions;
- canonical names: `tool_names` maps its native tools (Peek, Patch, Sh) to read/edit/shell;
- an install recipe: none here (`install = None`); a real CLI sets a `Pin`.

The agent (`agent.py`, beside this file) fixes a sign error in calc.py with its own tools.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchtape.adapters.base import Command, Harness, Launch, warning
from benchtape.core.canonical import annotate
from benchtape.core.model import Action

AGENT = Path(__file__).with_name("agent.py")


class EchoParser:
    def feed(self, line: str) -> list[Action]:
        try:
            event = json.loads(line)
        except ValueError:
            return [warning("not a JSON line", line)]
        kind = event.get("type")
        if kind == "call":
            return [Action("tool.call", annotate({"call_id": event["id"], "tool": event["name"], "input": event["args"]}, "example-echo"))]
        if kind == "result":
            return [Action("tool.result", {"call_id": event["id"], "output": event["text"], "is_error": bool(event.get("error"))})]
        if kind == "answer":
            return [Action("message.assistant", {"text": event["text"]}), Action("final_output", {"text": event["text"]})]
        if kind == "usage":
            return [Action("metrics", {"tokens_in": event["in"], "tokens_out": event["out"]})]
        return [warning(f"unknown event {kind!r}", line)]

    def finish(self) -> list[Action]:
        return []


class EchoHarness(Harness):
    name = "example-echo"
    native_tools = frozenset({"Peek", "Patch", "Sh"})
    tool_names = {"Peek": "read:target", "Patch": "edit:file", "Sh": "shell:line"}

    def command(self, launch: Launch) -> Command:
        job = {"prompt": launch.prompt, "cwd": str(launch.work_dir)}
        return Command(argv=[sys.executable, str(AGENT)], stdin=json.dumps(job).encode())

    def parser(self) -> EchoParser:
        return EchoParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        return [] if AGENT.is_file() else [f"example-echo: its agent {AGENT} is missing; reinstall benchtape-example-harness"]
