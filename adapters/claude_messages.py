"""What Claude Code's two JSONL formats share: API messages and their content blocks.

`claude -p --output-format stream-json` and the on-disk session files wrap the same
Anthropic messages differently (`tool_use_result` vs `toolUseResult`, threads via
`parent_tool_use_id` vs sidechain files). Both parsers hand the message itself to one
`ClaudeMessages`, so a tool call, a spawn, a skill, an outcome and a token count mean
the same thing whichever way the session was captured.
"""

from __future__ import annotations

from typing import Any

from benchtape.adapters.base import warning
from benchtape.adapters.usage import MessageUsage
from benchtape.core.canonical import annotate
from benchtape.core.model import Action, text_of
from benchtape.core.payloads import AssistantMessage, Error, SubagentFinished, SubagentSpawned, ToolCall, ToolResult, UserMessage

SPAWN_TOOLS = ("Task", "Agent")
SKILL_TOOL = "Skill"
BASH_TOOLS = ("Bash",)
PATCH_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
SYNTHETIC_MODEL = "<synthetic>"
INTERRUPT_PREFIX = "[Request interrupted by user"
# User "text" that Claude Code writes but the user did not say to the model.
NOT_SAID = ("<local-command-stdout>", "<local-command-stderr>")
HAND_BACK = "[Subagent hand-back]"
REPORT_FOLLOWS = "The report follows:\n"


def handed_back(text: str) -> str:
    """A subagent's report without the frame 2.1.3xx puts around it in the Task/Agent result.

    The frame is a `[Subagent hand-back]` notice, then the report with every line
    indented by two spaces, then column-zero lines (agentId, usage). Text without the
    frame is returned as it is.
    """
    if HAND_BACK not in text or REPORT_FOLLOWS not in text:
        return text
    report = []
    for line in text.split(REPORT_FOLLOWS, 1)[1].split("\n"):
        if line and not line.startswith("  "):
            break
        report.append(line[2:])
    return "\n".join(report).strip("\n")


def outcome(block: dict[str, Any], tool: str | None, result: Any) -> bool | None:
    """A tool result's is_error: True/False when the harness said so, None when unknown.

    Known only from the block's `is_error` (either way: madbench §3.5 counts "any result
    carrying is_error" as known), a Bash result's exit code / interruption / stderr, an edit's
    `structuredPatch` (madbench §5), or a Skill result's `success`. Claude Code writes
    `is_error` on a good Read, Grep, Glob, WebFetch or WebSearch not at all (only `true` on a
    failure), and its result object there is the tool's payload, which madbench does not read
    as success: such a call stays unknown, as madbench grades it ("`outcome: ok` fails on a good
    Read"). checks/session.py says so in the verdict rather than counting it as a silent 0.
    """
    flag = block.get("is_error")
    if flag is True:
        return True
    if tool in BASH_TOOLS:
        if isinstance(result, dict):
            if result.get("interrupted") is True:
                return True
            for key in ("exitCode", "exit_code", "returnCode"):
                code = result.get(key)
                if isinstance(code, int) and not isinstance(code, bool):
                    return code != 0
            if flag is False:
                return False
            stderr = result.get("stderr")
            return bool(isinstance(stderr, str) and stderr.strip())
        return False if flag is False else None
    if tool in PATCH_TOOLS and isinstance(result, dict) and "structuredPatch" in result:
        return False
    if tool == SKILL_TOOL and isinstance(result, dict) and isinstance(result.get("success"), bool):
        return not result["success"]  # the Skill tool says whether the skill launched
    return False if flag is False else None


class ClaudeMessages:
    """Stateful translation of Claude messages into actions, shared by the stream and disk parsers."""

    def __init__(self) -> None:
        self.tools: dict[str, str] = {}  # tool_use id -> tool name
        self.spawns: dict[str, str] = {}  # Task/Agent tool_use id -> the subagent's thread
        self.spawn_prompts: dict[str, str] = {}  # thread -> prompt, to link a sidecar by its first message
        self.agent_threads: dict[str, str] = {}  # Claude's agentId -> thread
        self.finished: set[str] = set()
        self.results: set[str] = set()  # tool_use ids whose result was emitted (sidecar + progress overlap)
        self.denied: set[str] = set()  # tool_use ids the permission system refused (stream-json says so)
        self.foreground: set[str] = set()  # spawns whose result will carry the subagent's report
        self.usage = MessageUsage()
        self.model: str | None = None

    # ------------------------------------------------------------------ assistant

    def assistant(
        self, message: Any, thread: str, line: str, at: float = 0.0, *, api_error: bool = False, request_id: Any = None
    ) -> list[Action]:
        if not isinstance(message, dict):
            return [warning("assistant event without a message object", line, thread)]
        model = message.get("model")
        synthetic = model == SYNTHETIC_MODEL
        if not synthetic:
            if isinstance(model, str) and self.model is None and thread == "main":
                self.model = model
            key = str(message.get("id") or "")
            if key and request_id:
                key = f"{key}/{request_id}"
            self.usage.add(key, message.get("usage"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return [warning("assistant message content is neither text nor a list of blocks", line, thread)]
        out: list[Action] = []
        for block in content:
            out.extend(self._assistant_block(block, thread, line, at, synthetic, api_error))
        return out

    def _assistant_block(
        self, block: Any, thread: str, line: str, at: float, synthetic: bool, api_error: bool
    ) -> list[Action]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text.strip():
                return []  # Claude Code writes "\n\n" blocks before thinking; nothing was said
            if synthetic and (api_error or text.startswith("API Error")):
                return [Action("error", {"message": text, "source": "api"}, thread=thread, at=at)]
            data: AssistantMessage = {"text": text}
            if synthetic:
                data["synthetic"] = True
            return [Action("message.assistant", data, thread=thread, at=at)]
        if kind == "thinking":
            return [Action("thinking", {"text": text_of(block.get("thinking")) or ""}, thread=thread, at=at)]
        if kind == "redacted_thinking":
            return [Action("thinking", {"text": "", "redacted": True}, thread=thread, at=at)]
        if kind in ("tool_use", "server_tool_use"):
            return self._tool_use(block, thread, at, server=kind == "server_tool_use")
        if kind == "web_search_tool_result":
            return self._result(block, None, thread, at)
        return [warning(f"unknown assistant content block {kind!r}", line, thread)]

    def _tool_use(self, block: dict[str, Any], thread: str, at: float, server: bool) -> list[Action]:
        call_id = str(block.get("id") or "")
        name = str(block.get("name") or "")
        tool_input = block.get("input")
        if call_id and call_id in self.tools:
            return []  # already seen (a sidecar repeating an agent_progress entry)
        self.tools[call_id] = name
        args = tool_input if isinstance(tool_input, dict) else {}
        if name == SKILL_TOOL:
            skill = args.get("skill") or args.get("command") or args.get("name")
            return [Action("skill.invoked", {"name": _name(skill), "call_id": call_id, "tool": name, "input": tool_input}, thread=thread, at=at)]
        if name in SPAWN_TOOLS:
            self.spawns[call_id] = call_id
            prompt = args.get("prompt")
            if isinstance(prompt, str):
                self.spawn_prompts[call_id] = prompt
            if args.get("run_in_background") is False:
                self.foreground.add(call_id)
            spawn: SubagentSpawned = {
                "thread": call_id,
                "call_id": call_id,
                "agent": _name(args.get("subagent_type")),
                "prompt": text_of(prompt),
                "tool": name,
                "description": args.get("description"),
            }
            return [Action("subagent.spawned", spawn, thread=thread, at=at)]
        call: ToolCall = {"call_id": call_id, "tool": name, "input": tool_input}
        if server:
            call["server"] = True
        annotate(call, "claude-code")
        return [Action("tool.call", call, thread=thread, at=at)]

    # ------------------------------------------------------------------ user

    def user(
        self, message: Any, thread: str, line: str, at: float = 0.0, *, result: Any = None, injected: bool = False
    ) -> list[Action]:
        """A user message: typed text, interrupts, and tool results (with the harness's result object).

        `injected` text was written by Claude Code, not the user (skill bodies, caveats,
        the compaction summary): it is no turn and no prompt, so only tool results count.
        """
        if not isinstance(message, dict):
            return [warning("user event without a message object", line, thread)]
        content = message.get("content")
        if isinstance(content, str):
            return [] if injected else self._texts([content], thread, at)
        if not isinstance(content, list):
            return [warning("user message content is neither text nor a list of blocks", line, thread)]
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        # The harness's result object describes the one tool result on its line.
        own = result if len(results) == 1 else None
        out: list[Action] = []
        texts: list[str] = []
        attached: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_result":
                out.extend(self._result(block, own, thread, at))
            elif kind in ("image", "document"):
                attached.append(_attachment(block))  # the bytes stay in the raw line
            else:
                out.append(warning(f"unknown user content block {kind!r}", line, thread))
        return out if injected else out + self._texts(texts, thread, at, attached)

    def _texts(self, texts: list[str], thread: str, at: float, attached: list[dict[str, Any]] | None = None) -> list[Action]:
        said: list[str] = []
        out: list[Action] = []
        for text in texts:
            if text.startswith(INTERRUPT_PREFIX):
                stop: Error = {"message": "interrupted by user", "text": text, "interrupted": True}
                out.append(Action("error", stop, thread=thread, at=at))
            elif text.strip() and not text.lstrip().startswith(NOT_SAID):
                said.append(text)
        if said or attached:
            data: UserMessage = {"text": "\n".join(said)}
            if attached:
                data["attachments"] = attached  # what session:image-sent counts (a picture pasted into the terminal UI)
            out.insert(0, Action("message.user", data, thread=thread, at=at))
        return out

    def _result(self, block: dict[str, Any], result: Any, thread: str, at: float) -> list[Action]:
        call_id = str(block.get("tool_use_id") or "")
        if call_id and call_id in self.results:
            return []
        self.results.add(call_id)
        tool = self.tools.get(call_id)
        is_error = outcome(block, tool, result)
        data: ToolResult = {"call_id": call_id, "output": block.get("content"), "is_error": is_error}
        if call_id in self.denied:
            data["denied"] = True
        out = [Action("tool.result", data, thread=thread, at=at)]
        sub = self.spawns.get(call_id)
        if sub is not None and isinstance(result, dict):
            agent_id = result.get("agentId")
            if isinstance(agent_id, str) and agent_id:
                self.agent_threads.setdefault(agent_id, sub)
            status = result.get("status")
            if isinstance(status, str):
                out.extend(self.subagent_finished(sub, handed_back(text_of(block.get("content")) or ""), at, status=status, agent_id=agent_id if isinstance(agent_id, str) else None))
        return out

    def subagent_finished(self, thread: str, output: str | None, at: float = 0.0, *, status: Any = None, agent_id: str | None = None, task_id: Any = None, summary: Any = None) -> list[Action]:
        """One `subagent.finished` per subagent, whichever signal (notification or result)
        comes first; what the signal said (status, ids, summary) where it said it."""
        if thread in self.finished:
            return []
        self.finished.add(thread)
        data: SubagentFinished = {"thread": thread, "output": output}
        if status is not None:
            data["status"] = status
        if agent_id is not None:
            data["agent_id"] = agent_id
        if task_id is not None:
            data["task_id"] = task_id
        if summary is not None:
            data["summary"] = summary
        return [Action("subagent.finished", data, thread=thread, at=at)]


def _name(value: Any) -> str | None:
    """A skill's or a subagent type's name as the model wrote it, None when it wrote none
    (a name is a string: a stray number or object is read as its text)."""
    if value is None or isinstance(value, str):
        return value
    return text_of(value)


def _attachment(block: dict[str, Any]) -> dict[str, Any]:
    """An image/document block as the session records it: its media type and size, not its bytes."""
    given = block.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    out: dict[str, Any] = {"media_type": str(source.get("media_type") or block.get("type"))}
    data = source.get("data")
    if isinstance(data, str):
        out["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
    return out
