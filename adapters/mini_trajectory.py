"""mini-swe-agent's trajectory JSON (`-o PATH`, trajectory_format "mini-swe-agent-1.1"), read whole.

    info      {model_stats{instance_cost, api_calls}, exit_status, submission, mini_version, config}
    messages  system, user (the task), then per step an assistant message with `tool_calls`
              (its one tool, `bash`) and `extra.response` (the raw API answer, with `usage`), and a
              `tool` message per call (its content: the command's return code and output)

The file is written once, at the end, so it is read at the end of the stream: every line is
kept, the document parsed in `finish`. Tokens are summed from each raw response's usage; the
cost only when litellm priced it (`instance_cost` > 0: an unpriced model reports 0, which is
unknown, not free). The submission is the final output.
"""

from __future__ import annotations

from typing import Any

import orjson

from benchtape.adapters.base import warning
from benchtape.core.canonical import annotate
from benchtape.core.model import Action
from benchtape.core.payloads import Metrics, ToolCall

HARNESS = "mini-swe-agent"


class MiniTrajectoryParser:
    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> list[Action]:
        self._lines.append(line)
        return []

    def finish(self) -> list[Action]:
        text = "\n".join(self._lines)
        self._lines = []
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            return [warning("not a mini-swe-agent trajectory (not JSON)", text)]
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return [warning("not a mini-swe-agent trajectory (no `messages` list)", text[:4000])]
        out: list[Action] = []
        tokens_in = tokens_out = 0
        counted = False
        for message in doc["messages"]:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "assistant":
                content = _text(message.get("content"))
                if content.strip():
                    out.append(Action("message.assistant", {"text": content}))
                for call in message.get("tool_calls") or []:
                    fn = call.get("function") if isinstance(call, dict) else None
                    if not isinstance(fn, dict):
                        continue
                    try:
                        args = orjson.loads(fn.get("arguments") or "{}")
                    except orjson.JSONDecodeError:
                        args = {"value": fn.get("arguments")}
                    data: ToolCall = {"call_id": str(call.get("id") or ""), "tool": str(fn.get("name") or ""), "input": args}
                    out.append(Action("tool.call", annotate(data, HARNESS)))
                usage = ((message.get("extra") or {}).get("response") or {}).get("usage") if isinstance(message.get("extra"), dict) else None
                if isinstance(usage, dict):
                    counted = True
                    tokens_in += int(usage.get("prompt_tokens") or 0)
                    tokens_out += int(usage.get("completion_tokens") or 0)
            elif role == "tool":
                output, failed = _result(message.get("content"))
                out.append(Action("tool.result", {"call_id": str(message.get("tool_call_id") or ""), "output": output, "is_error": failed}))  # type: ignore[typeddict-item]
        info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
        metrics: Metrics = {}
        if counted:
            metrics.update({"tokens_in": tokens_in, "tokens_out": tokens_out})
        stats: dict[str, Any] = info["model_stats"] if isinstance(info.get("model_stats"), dict) else {}
        cost = stats.get("instance_cost")
        if isinstance(cost, (int, float)) and cost > 0:
            metrics["cost_usd"] = float(cost)
        if metrics:
            out.append(Action("metrics", metrics))
        status = info.get("exit_status")
        submission = info.get("submission")
        if isinstance(submission, str) and status == "Submitted":
            out.append(Action("final_output", {"text": submission.strip("\n")}))
        elif status is not None:
            out.append(Action("error", {"message": f"mini-swe-agent ended with exit status {status!r}" + (f": {submission}" if submission else "")}))
        return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _result(content: Any) -> tuple[Any, bool | None]:
    """A tool message's output and whether it failed (its return code, when it says one)."""
    text = _text(content)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text, None
    if isinstance(value, dict) and ("output" in value or "output_head" in value):
        code = value.get("returncode")
        output = value.get("output") if "output" in value else _shortened(value)
        if value.get("exception_info") and not output:
            return value["exception_info"], None  # mini's own note (the submit command is "not executed"): not the command's outcome
        return output, (code != 0) if isinstance(code, int) else None
    return text, None


def _shortened(value: dict[str, Any]) -> str:
    """A long output mini cut in two (`output_head`, `output_tail`, with how much it left out):
    what the agent was shown, its outcome still the command's return code."""
    head, tail = str(value.get("output_head") or ""), str(value.get("output_tail") or "")
    elided = value.get("elided_chars")
    return head + (f"\n[… {elided} characters left out by mini-swe-agent …]\n" if elided else "\n[…]\n" if tail else "") + tail
