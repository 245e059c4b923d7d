"""aider's markdown chat history (`--chat-history-file`), read whole once aider has exited:

    #### <the user's message>
    <the assistant's answer, edit blocks included>
    > Applied edit to calc.py                    an edit aider made: a tool call `apply_edit` (canonical edit)
    > Tokens: 1,234 sent, 56 received.          exact counts only (aider rounds to "1.2k" past a thousand: unknown)

Lines of aider's own notes start with "> "; an edit block's ">>>>>>> REPLACE" belongs to the answer.
"""

from __future__ import annotations

import re

from benchtape.core.canonical import annotate
from benchtape.core.model import Action
from benchtape.core.payloads import ToolCall

HARNESS = "aider"
FORMAT = "aider-history"
APPLIED = re.compile(r"^> Applied edit to (.+?)\s*$")
TOKENS = re.compile(r"^> Tokens: ([\d,]+) sent, ([\d,]+) received")


class AiderHistoryParser:
    """aider's markdown chat history, read at the end (it is printed once aider has exited)."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> list[Action]:
        self._lines.append(line)
        return []

    def finish(self) -> list[Action]:
        out: list[Action] = []
        said: list[str] = []
        last: str | None = None
        sent = received = 0
        counted = False
        calls = 0

        def flush() -> None:
            nonlocal last
            text = "\n".join(said).strip("\n")
            said.clear()
            if text.strip():
                out.append(Action("message.assistant", {"text": text}))
                last = text

        for line in self._lines:
            if line.startswith("#### ") or line.startswith("# aider chat started"):
                flush()
                continue
            if line.startswith("> ") or line == ">":  # aider's own notes (an edit block's ">>>>>>> REPLACE" is the answer's)
                flush()
                applied = APPLIED.match(line)
                tokens = TOKENS.match(line)
                if applied:
                    calls += 1
                    call: ToolCall = {"call_id": f"edit-{calls}", "tool": "apply_edit", "input": {"file_path": applied.group(1)}}
                    out.append(Action("tool.call", annotate(call, HARNESS)))
                    out.append(Action("tool.result", {"call_id": f"edit-{calls}", "output": line[2:], "is_error": False}))
                elif tokens:
                    counted = True
                    sent += int(tokens.group(1).replace(",", ""))
                    received += int(tokens.group(2).replace(",", ""))
                continue
            said.append(line)
        flush()
        if counted:
            out.append(Action("metrics", {"tokens_in": sent, "tokens_out": received}))
        if last is not None:
            out.append(Action("final_output", {"text": last}))
        return out
