"""A script: what the scripted model says, turn by turn.

The vocabulary is the `mock:` block a bench already has (`steps:` of `tool`/`input`,
`say`, `think`, `skill`, `subagent`, `sleep`, and `metrics:`), so one scenario drives the
mock agent and a real harness alike. What a model can do and the mock cannot is added:

- `parallel: [steps]` -- several tool calls in one model turn;
- `usage: {tokens_in, tokens_out, cache_read_tokens, cache_write_tokens}` on a step -- the
  usage of the model turn that step belongs to (so the harness's cost is known);
- `end_turn: true` on a `say` -- the model stops there and waits for the user's next
  message (multi-turn sessions);
- top-level `model:` (the name reported back), `noop: true` (the negative control) and
  `chat:` (Chat Completions replies and faults, for AI judges).

Steps become turns the way a model speaks: the `think`/`say` steps before a tool call
are that turn's leading blocks; a tool, skill, subagent or parallel step ends the turn
(the model waits for the tool results); `say`/`think` steps after the last call form the
closing turn. A script that ends on a call gets an empty closing turn. `result:` and
`is_error:` of a tool step are for the mock agent only: a real harness runs the tool.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson

from benchtape.core.errors import BadInput, closest
from benchtape.spec.yamlsrc import line_of, load_yaml_file, plain

TOKEN_FIELDS = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens")
METRIC_KEYS = frozenset(TOKEN_FIELDS) | {"cost_usd", "duration_ms", "turns"}
SCRIPT_KEYS = frozenset({"steps", "metrics", "model", "noop", "chat"})
STEP_KINDS = ("tool", "say", "think", "skill", "subagent", "sleep", "parallel")
STEP_KEYS = {
    "tool": {"tool", "input", "result", "is_error", "usage"},
    "say": {"say", "end_turn", "usage"},
    "think": {"think", "usage"},
    "skill": {"skill", "usage"},
    "subagent": {"subagent", "usage"},
    "sleep": {"sleep"},
    "parallel": {"parallel", "usage"},
}
SUBAGENT_KEYS = {"agent", "prompt", "steps", "tool", "detach"}
# The tools the mock agent really runs (adapters/mock_agent.py), and Claude Code's of the same
# names: (the input keys each needs, every key it takes). A typo (`old_strin:`) loaded and ran
# as a KeyError tool result; it is refused at its line now. Grep's many options are not listed.
TOOL_INPUTS: dict[str, tuple[frozenset[str], frozenset[str] | None]] = {
    "Read": (frozenset({"file_path"}), frozenset({"file_path", "offset", "limit", "pages"})),
    "Write": (frozenset({"file_path"}), frozenset({"file_path", "content"})),
    "Edit": (frozenset({"file_path", "old_string", "new_string"}), frozenset({"file_path", "old_string", "new_string", "replace_all"})),
    "MultiEdit": (frozenset({"file_path", "edits"}), frozenset({"file_path", "edits"})),
    "Bash": (frozenset({"command"}), frozenset({"command", "timeout", "description", "run_in_background"})),
    "Glob": (frozenset({"pattern"}), frozenset({"pattern", "path"})),
    "Grep": (frozenset({"pattern"}), None),
}
CHAT_KINDS = ("reply", "refusal", "status", "hang")
CHAT_KEYS = {
    "reply": {"reply", "match", "usage"},
    "refusal": {"refusal", "match", "usage"},
    "status": {"status", "retry_after", "message", "match"},
    "hang": {"hang", "match"},
}
SUBAGENT_TOOL = "Agent"  # Claude Code 2.1.x's name; `Task` is the older one (mapped per harness)


@dataclass(frozen=True)
class Usage:
    """One model turn's token usage, in benchtape's metric field names."""

    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


DEFAULT_USAGE = Usage(tokens_in=100, tokens_out=20)  # a turn the script says nothing about
SIDE_USAGE = Usage()  # titles and summaries cost nothing, so script totals stay exact


@dataclass(frozen=True)
class Block:
    """One piece of a model turn: `thinking`, `text`, or a tool `call`."""

    kind: str
    text: str = ""
    tool: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    subagent: Script | None = None  # a spawn's own script (the subagent's turns)
    line: int | None = None


@dataclass(frozen=True)
class Turn:
    """One model response: its blocks in order; it ends the agent's turn when it has no call."""

    blocks: tuple[Block, ...]
    usage: Usage = DEFAULT_USAGE
    delay: float = 0.0  # seconds to wait before answering (`sleep:` steps)
    line: int | None = None

    @property
    def calls(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "call"]

    @property
    def ends(self) -> bool:
        return not self.calls


@dataclass(frozen=True)
class ChatReply:
    """One Chat Completions answer: a reply text, a refusal, an HTTP status, or a hang."""

    kind: str
    text: str = ""
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    match: str | None = None
    usage: Usage = DEFAULT_USAGE
    line: int | None = None


@dataclass(frozen=True)
class Script:
    turns: tuple[Turn, ...] = ()
    noop: bool = False
    model: str | None = None
    chat: tuple[ChatReply, ...] = ()
    source: str = "<script>"
    digest: str = ""
    prompt: str | None = None  # a subagent script's prompt (how its requests are recognised)

    def subagents(self) -> list[Script]:
        """Every subagent script spawned anywhere in this script, depth first."""
        out: list[Script] = []
        for turn in self.turns:
            for call in turn.calls:
                if call.subagent is not None:
                    out.append(call.subagent)
                    out.extend(call.subagent.subagents())
        return out


def noop_script() -> Script:
    """The negative control: no tools; every turn says the user's prompt back."""
    return Script(noop=True, source="<noop>", digest=_digest({"noop": True}))


def load_script(path: Path) -> Script:
    """A script from a YAML (or JSON) file; `BadInput` naming the file, line and fix when malformed."""
    return script_from(load_yaml_file(Path(path)), str(path))


def script_from(data: Any, source: str = "<script>") -> Script:
    """A script from a mapping (a `mock:` block, a loaded file); strict: unknown keys are refused."""
    return _Reader(source).script(data)


# ---------------------------------------------------------------- reading


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.prompts: dict[str, int | None] = {}
        self.spawns = 0

    def err(self, what: str, node: Any = None, key: str | None = None, fix: str | None = None) -> BadInput:
        return BadInput(what, file=self.source, line=line_of(node, key), fix=fix)

    def mapping(self, node: Any, what: str, example: str, parent: Any = None, key: str | None = None) -> dict[str, Any]:
        if not isinstance(node, dict):
            raise self.err(f"{what} must be a mapping, got {_type(node)}", parent if parent is not None else node, key, f"write it as {example}")
        return node

    def strict(self, node: dict[str, Any], allowed: set[str] | frozenset[str], what: str) -> None:
        for key in node:
            if not isinstance(key, str) or key not in allowed:
                near = closest(str(key), sorted(allowed))
                fix = f"did you mean `{near}:`?" if near else f"valid keys: {', '.join(sorted(allowed))}"
                raise self.err(f"unknown key `{key}` in {what}", node, str(key), fix)

    def string(self, node: dict[str, Any], key: str, what: str, empty_ok: bool = False) -> str:
        value = node.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.err(f"{what} must be text, got {_type(value)}", node, key, f'quote it: `{key}: "..."`')
        text = str(value)
        if not text.strip() and not empty_ok:
            raise self.err(f"{what} is empty", node, key)
        return text

    def number(self, node: dict[str, Any], key: str, what: str) -> float:
        value = node.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.err(f"{what} must be a number of seconds >= 0, got {value!r}", node, key, f"write e.g. `{key}: 1.5`")
        return float(value)

    def json_numbers(self, root: Any) -> None:
        found = wide_integer(root)
        if found is not None:
            parent, key, what, fix = found
            raise self.err(what, parent, key, fix)

    # ------------------------------------------------------------ the whole script

    def script(self, data: Any) -> Script:
        if data is None:
            data = {}
        node = self.mapping(data, "a script", "`steps: [{tool: Bash, input: {command: ls}}, {say: done}]`")
        self.strict(node, SCRIPT_KEYS, "the script")
        model = self.string(node, "model", "`model:`") if "model" in node else None
        noop = node.get("noop", False)
        if not isinstance(noop, bool):
            raise self.err(f"`noop:` must be true or false, got {noop!r}", node, "noop")
        steps = node.get("steps") or []
        if not isinstance(steps, list):
            raise self.err("`steps:` must be a list of steps", node, "steps", "write `steps: [{say: hello}]`")
        if noop and steps:
            raise self.err("a `noop: true` script says the prompt back and has no steps", node, "noop", "drop `noop:` or `steps:`")
        self.json_numbers(node)
        totals = self.metrics(node)
        chat = tuple(self.chat(node.get("chat"), node))
        digest = _digest(plain(node))
        if noop or not steps:
            return Script(noop=True, model=model, chat=chat, source=self.source, digest=digest)
        turns = self.turns(steps)
        if totals:
            if any(_has_usage(s) for s in _walk(steps)):
                raise self.err(
                    "token totals in `metrics:` and per-turn `usage:` both given; which would the harness be told?",
                    node, "metrics", "keep either the totals in `metrics:` or `usage:` on steps",
                )
            turns = _spread(turns, totals)
        return Script(turns=turns, model=model, chat=chat, source=self.source, digest=digest)

    def metrics(self, node: dict[str, Any]) -> Usage | None:
        metrics = node.get("metrics")
        if metrics is None:
            return None
        metrics = self.mapping(metrics, "`metrics:`", "`metrics: {tokens_in: 1000, tokens_out: 200}`", node, "metrics")
        self.strict(metrics, METRIC_KEYS, "`metrics:`")
        for key, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise self.err(f"`metrics.{key}` must be a number >= 0, got {value!r}", metrics, key)
        if not any(k in metrics for k in TOKEN_FIELDS):
            return None  # cost/duration/turns are the harness's own to report, not the model's
        return self.usage(metrics, metrics, "`metrics:`", only_tokens=True)

    def usage(self, value: Any, parent: Any, what: str, only_tokens: bool = False) -> Usage:
        node = self.mapping(value, what, "`usage: {tokens_in: 1200, tokens_out: 80}`", parent, "usage")
        if not only_tokens:
            self.strict(node, set(TOKEN_FIELDS), what)
        counts: dict[str, int] = {}
        for key in TOKEN_FIELDS:
            if key in node:
                count = node[key]
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    raise self.err(f"{what} {key} must be a whole number of tokens >= 0, got {count!r}", node, key)
                counts[key] = count
        return Usage(**counts)

    # ------------------------------------------------------------ steps into turns

    def one_of(self, node: Any, kinds: tuple[str, ...], keys: dict[str, set[str]], noun: str, example: str, fix: str) -> str:
        """Which one of `kinds` a mapping is (a step, a chat reply); its other keys checked strictly."""
        if not isinstance(node, dict):
            raise self.err(f"a {noun} must be a mapping such as {example}, got {_type(node)}", node, None, f"write it as {example}")
        present = [k for k in kinds if k in node]
        if len(present) != 1:
            got = ", ".join(sorted(map(str, node))) or "nothing"
            raise self.err(f"a {noun} needs exactly one of {', '.join(kinds)}; got {got}", node, None, fix)
        self.strict(node, keys[present[0]], f"a `{present[0]}` {noun}")
        return present[0]

    def kind(self, step: Any, allowed: tuple[str, ...]) -> str:
        example = "`{tool: Read, input: {file_path: x}}`"
        return self.one_of(step, allowed, STEP_KEYS, "step", example, f"write one step per list item, e.g. {example}")

    def turns(self, steps: list[Any]) -> tuple[Turn, ...]:
        out: list[Turn] = []
        blocks: list[Block] = []
        usage: Usage | None = None
        delay = 0.0
        first_line: int | None = None

        def close(calls: list[Block], line: int | None) -> None:
            nonlocal blocks, usage, delay, first_line
            out.append(Turn(tuple(blocks + calls), usage or DEFAULT_USAGE, delay, first_line or line))
            blocks, usage, delay, first_line = [], None, 0.0, None

        for step in steps:
            kind = self.kind(step, STEP_KINDS)
            line = line_of(step)
            first_line = first_line or line
            if "usage" in step:
                if usage is not None:
                    raise self.err("two `usage:` in one model turn", step, "usage", "give `usage:` once per turn (on its tool step, or on its last say)")
                usage = self.usage(step["usage"], step, "`usage:`")
            if kind == "sleep":
                delay += self.number(step, "sleep", "`sleep:`")
            elif kind == "think":
                blocks.append(Block("thinking", text=self.string(step, "think", "`think:`"), line=line))
            elif kind == "say":
                blocks.append(Block("text", text=self.string(step, "say", "`say:`", empty_ok=True), line=line))
                end = step.get("end_turn", False)
                if not isinstance(end, bool):
                    raise self.err(f"`end_turn:` must be true or false, got {end!r}", step, "end_turn")
                if end:
                    close([], line)
            elif kind == "parallel":
                inner = step["parallel"]
                if not isinstance(inner, list) or not inner:
                    raise self.err("`parallel:` must be a non-empty list of tool, skill or subagent steps", step, "parallel", "write `parallel: [{tool: Read, input: {file_path: a}}, {tool: Read, input: {file_path: b}}]`")
                calls = []
                for one in inner:
                    inner_kind = self.kind(one, ("tool", "skill", "subagent"))
                    if "usage" in one:
                        raise self.err("`usage:` inside `parallel:` (the calls share one model turn)", one, "usage", "put `usage:` on the `parallel:` step itself")
                    calls.append(self.call(one, inner_kind))
                close(calls, line)
            else:
                close([self.call(step, kind)], line)
        if blocks or not out or not out[-1].ends:
            close([], None)  # the closing turn (empty when the script ends on a call)
        return tuple(out)

    def call(self, step: dict[str, Any], kind: str) -> Block:
        line = line_of(step)
        if kind == "skill":
            return Block("call", tool="Skill", input={"skill": self.string(step, "skill", "`skill:`")}, line=line)
        if kind == "subagent":
            return self.subagent(step)
        tool = self.string(step, "tool", "`tool:`")
        args = step.get("input", {})
        if args is None:
            args = {}
        self.mapping(args, "`input:`", "`input: {file_path: x}`", step, "input")
        if "is_error" in step and not isinstance(step["is_error"], bool):
            raise self.err(f"`is_error:` must be true or false, got {step['is_error']!r}", step, "is_error")
        return Block("call", tool=tool, input=plain(args), line=line)

    def subagent(self, step: dict[str, Any]) -> Block:
        spec = self.mapping(step["subagent"], "`subagent:`", "`subagent: {agent: general-purpose, prompt: ..., steps: [...]}`", step, "subagent")
        self.strict(spec, SUBAGENT_KEYS, "a subagent")
        self.spawns += 1
        agent = self.string(spec, "agent", "`agent:`") if "agent" in spec else "general-purpose"
        prompt = self.string(spec, "prompt", "`prompt:`") if "prompt" in spec else f"Scripted subagent task {self.spawns}."
        if prompt in self.prompts:
            raise self.err(
                f"two subagents have the prompt {prompt!r} (first at line {self.prompts[prompt]}); "
                "the model tells subagents apart by their prompt", spec, "prompt", "give each subagent its own prompt",
            )
        self.prompts[prompt] = line_of(spec, "prompt")
        tool = self.string(spec, "tool", "`tool:`") if "tool" in spec else SUBAGENT_TOOL
        detach = spec.get("detach", False)
        if not isinstance(detach, bool):
            raise self.err(f"`detach:` must be true or false, got {detach!r}", spec, "detach")
        steps = spec.get("steps") or []
        if not isinstance(steps, list):
            raise self.err("a subagent's `steps:` must be a list", spec, "steps")
        inner = Script(turns=self.turns(steps), source=self.source, prompt=prompt)
        description = " ".join(prompt.split()[:5])
        args = {"description": description, "prompt": prompt, "subagent_type": agent, "run_in_background": detach}
        return Block("call", tool=tool, input=args, subagent=inner, line=line_of(step))

    # ------------------------------------------------------------ chat completions

    def chat(self, value: Any, parent: Any) -> list[ChatReply]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.err("`chat:` must be a list of replies", parent, "chat", 'write `chat: [{reply: "..."}, {status: 429, retry_after: 1}]`')
        return [self.chat_reply(entry) for entry in value]

    def chat_reply(self, entry: Any) -> ChatReply:
        example = '`{reply: "..."}`'
        kind = self.one_of(entry, CHAT_KINDS, CHAT_KEYS, "chat reply", example, f"e.g. {example}")
        match = self.string(entry, "match", "`match:`") if "match" in entry else None
        usage = self.usage(entry["usage"], entry, "`usage:`") if "usage" in entry else DEFAULT_USAGE
        line = line_of(entry)
        if kind == "reply":
            value = entry["reply"]
            text = value if isinstance(value, str) else orjson.dumps(plain(value)).decode()
            return ChatReply("reply", text=text, match=match, usage=usage, line=line)
        if kind == "refusal":
            return ChatReply("refusal", text=self.string(entry, "refusal", "`refusal:`"), match=match, usage=usage, line=line)
        if kind == "hang":
            return ChatReply("hang", seconds=self.number(entry, "hang", "`hang:`"), match=match, line=line)
        status = entry["status"]
        if isinstance(status, bool) or not isinstance(status, int) or not (400 <= status <= 599):
            raise self.err(f"`status:` must be an HTTP error status (400-599), got {status!r}", entry, "status", "write e.g. `status: 429` or `status: 503`")
        retry = self.number(entry, "retry_after", "`retry_after:`") if "retry_after" in entry else None
        message = self.string(entry, "message", "`message:`") if "message" in entry else f"scripted HTTP {status}"
        return ChatReply("status", text=message, status=status, retry_after=retry, match=match, line=line)


# ---------------------------------------------------------------- helpers


JSON_INT_MIN, JSON_INT_MAX = -(1 << 63), (1 << 64) - 1  # what orjson (and the tools' JSON) can carry


def wide_integer(root: Any) -> tuple[Any, str | None, str, str] | None:
    """The first integer under `root` wider than JSON carries here, as (its mapping or list,
    its key, what, fix); None when there is none. Every value of a script or `mock:` block
    travels as JSON (tool inputs, replies, the mock agent's job, a digest), where an integer
    has 64 bits: a larger one is refused at load, at its line, not met by the encoder as a
    traceback."""
    stack: list[tuple[Any, Any, str]] = [(root, None, "")]
    while stack:
        node, parent, key = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, node, str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, node, key) for v in node)
        elif isinstance(node, int) and not isinstance(node, bool) and not JSON_INT_MIN <= node <= JSON_INT_MAX:
            digits = str(node)
            shown = digits if len(digits) <= 30 else f"{digits[:12]}…{digits[-6:]} ({len(digits)} digits)"
            return parent, key if isinstance(parent, dict) else None, f"`{key}: {shown}` is an integer larger than JSON carries here (64 bits)", f"quote it to send it as text: `{key}: \"{digits[:30]}\"`"
    return None


def _type(value: Any) -> str:
    return "nothing" if value is None else {dict: "a mapping", list: "a list", str: "text", bool: "true/false"}.get(type(value), type(value).__name__)


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


def _walk(steps: list[Any]) -> Iterator[dict[str, Any]]:
    for step in steps:
        if not isinstance(step, dict):
            continue
        yield step
        if isinstance(step.get("parallel"), list):
            yield from _walk(step["parallel"])
        sub = step.get("subagent")
        if isinstance(sub, dict) and isinstance(sub.get("steps"), list):
            yield from _walk(sub["steps"])


def _has_usage(step: dict[str, Any]) -> bool:
    return "usage" in step


def _spread(turns: tuple[Turn, ...], totals: Usage) -> tuple[Turn, ...]:
    """The script's token totals shared over its main turns (the remainder on the last), so the
    harness adds them back up to exactly the totals; subagent turns then report none."""
    n = len(turns)
    out = []
    for i, turn in enumerate(turns):
        share = {}
        for name in TOKEN_FIELDS:
            total = getattr(totals, name)
            share[name] = total // n + (total % n if i == n - 1 else 0)
        out.append(Turn(turn.blocks, Usage(**share), turn.delay, turn.line))
    return tuple(_zero_subagents(out))


def _zero_subagents(turns: list[Turn]) -> list[Turn]:
    out = []
    for turn in turns:
        blocks = []
        for b in turn.blocks:
            if b.subagent is not None:
                sub = b.subagent
                zeroed = Script(turns=tuple(_zero_subagents([Turn(t.blocks, SIDE_USAGE, t.delay, t.line) for t in sub.turns])), source=sub.source, prompt=sub.prompt)
                b = Block(b.kind, b.text, b.tool, b.input, zeroed, b.line)
            blocks.append(b)
        out.append(Turn(tuple(blocks), turn.usage, turn.delay, turn.line))
    return out


