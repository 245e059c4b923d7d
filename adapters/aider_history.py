"""aider's markdown chat history (`--chat-history-file`), read whole once aider has exited:

    #### <the user's message>
    <the assistant's answer, edit blocks included>
    > Applied edit to calc.py                    an edit aider made: a tool call `apply_edit` (canonical edit)
    > Tokens: 1,234 sent, 56 received.          exact counts only (aider rounds to "1.2k" past a thousand: unknown)

Lines of aider's own notes start with "> "; an edit block's ">>>>>>> REPLACE" belongs to the answer.
aider's first note is its own command line, `> …aider … --message <prompt>`: a prompt of several
lines goes on over lines without "> ", which are the user's, never the answer's.
"""

from __future__ import annotations

import re

from benchtape.core.canonical import annotate
from benchtape.core.model import Action
from benchtape.core.payloads import Metrics, ToolCall

HARNESS = "aider"
FORMAT = "aider-history"
APPLIED = re.compile(r"^> Applied edit to (.+?)\s*$")
TOKENS = re.compile(r"^> Tokens: ([\d,.]+[kM]?) sent, ([\d,.]+[kM]?) received")  # aider rounds a count of thousands (`2.4k`): that one is unknown


class AiderHistoryParser:
    """aider's markdown chat history, read at the end (it is printed once aider has exited)."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> list[Action]:
        self._lines.append(line)
        return []

    def finish(self) -> list[Action]:
        out: list[Action] = []
        lines = without_echoed_command(self._lines)
        said: list[str] = []
        last: str | None = None
        sent: int | None = 0
        received: int | None = 0
        counted = False
        calls = 0

        def flush() -> None:
            nonlocal last
            text = "\n".join(said).strip("\n")
            said.clear()
            if text.strip():
                out.append(Action("message.assistant", {"text": text}))
                last = text

        for line in lines:
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
                    sent, received = _plus(sent, tokens.group(1)), _plus(received, tokens.group(2))
                continue
            said.append(line)
        flush()
        if counted and (sent is not None or received is not None):
            metrics: Metrics = {}
            if sent is not None:
                metrics["tokens_in"] = sent
            if received is not None:
                metrics["tokens_out"] = received
            out.append(Action("metrics", metrics))
        if last is not None:
            out.append(Action("final_output", {"text": last}))
        return out


def _plus(total: int | None, said: str) -> int | None:
    """A running token count: None once any count aider printed was rounded (`2.4k`), since the
    sum is then unknown, never a guess."""
    if total is None or not said.replace(",", "").isdigit():
        return None
    return total + int(said.replace(",", ""))


def without_echoed_command(lines: list[str]) -> list[str]:
    """The history without the command line aider echoes at each start: its `--message` prompt's
    later lines carry no "> " and would otherwise read as the assistant's answer."""
    out: list[str] = []
    i, header = 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("# aider chat started"):
            header = True
        elif line.startswith("####"):
            header = False
        elif header and line.startswith("> ") and " --message" in line:
            i = _echo_end(lines, i)
            header = False
            continue
        out.append(line)
        i += 1
    return out


def _echo_end(lines: list[str], start: int) -> int:
    """The index just past the echoed command starting at `start`. aider then logs the prompt again
    as the user's message ("#### " on each line), so the echo is exactly as many lines as that
    message when its lines match; failing that, it runs to the line aider ended with its line break
    (two spaces), and never into a message."""
    prompt = _first_message(lines, start + 1)
    n = len(prompt)
    if prompt and lines[start].rstrip().endswith(prompt[0]) and [x.rstrip() for x in lines[start + 1:start + n]] == prompt[1:]:
        return start + n
    end = start
    while end < len(lines) and not lines[end].endswith("  ") and not lines[end].startswith("####"):
        end += 1
    return end + 1 if end < len(lines) and not lines[end].startswith("####") else end


def _first_message(lines: list[str], start: int) -> list[str]:
    """The first user message from `start` on, one entry a line (its "#### " and aider's trailing
    line-break spaces removed)."""
    first = next((i for i in range(start, len(lines)) if lines[i].startswith("####")), None)
    message: list[str] = []
    for line in lines[first:] if first is not None else []:
        if not line.startswith("####"):
            break
        message.append(line[5:].rstrip() if line.startswith("#### ") else line[4:].rstrip())
    return message
