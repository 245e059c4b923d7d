"""A session's actions grouped the way the interchange formats tell a run: per thread (the main
agent, each subagent), a list of steps, each a user message, an error, or one agent turn (its
thinking, its text, its tool calls each with its result).

Both writers (ATIF, Inspect) render this one grouping, so the two formats tell the same story.
The grouping is a fold over the session's actions in order, like the projection:

- a tool result joins the step holding its call (a result may come after later calls, as
  parallel calls' results do), wherever it arrives in that thread;
- a new agent step starts when the open one cannot take what comes: a tool call once a result
  has arrived (the model has been called again), a text once it has a text or calls, a
  thought once it has anything;
- a `subagent.spawned` is a call of the spawning thread (its tool, its prompt), whose result
  is the subagent's answer;
- actions the formats have no place for (environment, hooks, skills, snapshots, a subagent's
  end) are `carried`: kept beside the step that follows them in their thread, or at the
  thread's end, so a writer can keep them where the format allows private data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchtape.core.model import MAIN, Action, Session, text_of

# Kinds that belong to the session as a whole, not to a step: the writers read them from the Session.
SESSION_KINDS = frozenset({"session.started", "session.finished", "metrics"})


@dataclass
class Use:
    """A tool call (or a subagent's spawn) and its result."""

    call_id: str
    tool: str
    input: dict[str, Any]
    action: Action  # the tool.call or subagent.spawned
    result: Action | None = None
    spawned: str | None = None  # the subagent's thread, for a spawn

    @property
    def is_error(self) -> bool | None:
        value = self.result.data.get("is_error") if self.result is not None else None
        return None if value is None else bool(value)

    @property
    def output_text(self) -> str | None:
        return text_of(self.result.data.get("output")) if self.result is not None else None


@dataclass
class Step:
    source: str  # user | agent | system
    at: float
    carried: list[Action] = field(default_factory=list)  # actions before this step that no format has a place for
    user: Action | None = None  # message.user
    error: Action | None = None  # error (a system step)
    final: Action | None = None  # final_output, when it is not the last text already
    thinking: Action | None = None
    message: Action | None = None  # message.assistant
    uses: list[Use] = field(default_factory=list)
    orphans: list[Action] = field(default_factory=list)  # results of calls this thread never made
    derived: str | None = None  # "prompt": a user step made from the session's prompt (`user`), recorded as no action

    @property
    def text(self) -> str:
        for a in (self.user, self.error, self.final, self.message):
            if a is not None:
                value = a.data.get("message" if a is self.error else "text")
                return value if isinstance(value, str) else (text_of(value) or "")
        return ""

    @property
    def has_results(self) -> bool:
        return bool(self.orphans) or any(u.result is not None for u in self.uses)


@dataclass
class Thread:
    thread: str
    agent: str | None = None
    parent: str | None = None  # the spawning thread (None: main)
    spawn: Action | None = None
    steps: list[Step] = field(default_factory=list)
    after: list[Action] = field(default_factory=list)  # carried actions after the last step
    children: list[str] = field(default_factory=list)
    open: Step | None = None  # the agent step still taking thoughts, text and calls
    calls: dict[str, tuple[Step, Use]] = field(default_factory=dict)

    def new_step(self, source: str, at: float) -> Step:
        step = Step(source, at, carried=self.after)
        self.after = []
        self.steps.append(step)
        self.open = step if source == "agent" else None
        return step

    def agent_step(self, at: float, fits: bool) -> Step:
        """The open agent step when what comes `fits` it, else a new one."""
        if self.open is not None and fits:
            return self.open
        return self.new_step("agent", at)


@dataclass
class Conversation:
    threads: dict[str, Thread]  # main first, then each subagent as first seen

    @property
    def main(self) -> Thread:
        return self.threads[MAIN]

    def children_of(self, thread: str) -> list[Thread]:
        return [self.threads[t] for t in self.threads[thread].children]


def conversation(session: Session) -> Conversation:
    """The session's actions grouped into threads of steps (see the module's docstring)."""
    threads: dict[str, Thread] = {MAIN: Thread(MAIN)}

    def thread_of(name: str) -> Thread:
        if name not in threads:
            threads[name] = Thread(name, agent=session.thread_agent(name), parent=MAIN)
            threads[MAIN].children.append(name)
        return threads[name]

    for a in session.actions:
        kind, t = a.kind, thread_of(a.thread)
        if kind in SESSION_KINDS:
            continue
        if kind == "message.user":
            t.new_step("user", a.at).user = a
        elif kind == "error":
            t.new_step("system", a.at).error = a
        elif kind == "thinking":
            step = t.agent_step(a.at, fits=t.open is not None and t.open.thinking is None and t.open.message is None and not t.open.uses)
            step.thinking = a
        elif kind == "message.assistant":
            step = t.agent_step(a.at, fits=t.open is not None and t.open.message is None and not t.open.uses)
            step.message = a
        elif kind == "tool.call":
            step = t.agent_step(a.at, fits=t.open is not None and not t.open.has_results)
            call_id = str(a.data.get("call_id") or f"seq-{a.seq}")
            value = a.data.get("input")
            use = Use(call_id, str(a.data.get("tool") or ""), value if isinstance(value, dict) else {"value": value}, a)
            step.uses.append(use)
            t.calls[call_id] = (step, use)
        elif kind == "subagent.spawned":
            _spawn(a, t, threads, session)
        elif kind == "tool.result":
            _result(a, t)
        elif kind == "final_output" and _said_last(threads, a):
            t.after.append(a)
        elif kind == "final_output":
            t.new_step("agent", a.at).final = a
            t.open = None
        else:
            t.after.append(a)
    _prompt_first(threads[MAIN], session)
    return Conversation(threads)


def _spawn(a: Action, parent: Thread, threads: dict[str, Thread], session: Session) -> None:
    child_name = str(a.data.get("thread") or a.data.get("call_id") or f"agent-{a.seq}")
    child = threads.get(child_name)
    if child is None:
        child = threads[child_name] = Thread(child_name)
    else:  # seen before its spawn (an import files a subagent's lines first): move it under its parent
        for t in threads.values():
            if child_name in t.children:
                t.children.remove(child_name)
    child.agent, child.parent, child.spawn = a.data.get("agent") or child.agent, parent.thread, a
    parent.children.append(child_name)
    step = parent.agent_step(a.at, fits=parent.open is not None and not parent.open.has_results)
    call_id = str(a.data.get("call_id") or f"spawn-{child_name}")
    args = {"prompt": a.data.get("prompt"), "subagent_type": child.agent}
    if a.data.get("description") is not None:
        args["description"] = a.data["description"]
    use = Use(call_id, str(a.data.get("tool") or "Task"), {k: v for k, v in args.items() if v is not None}, a, spawned=child_name)
    step.uses.append(use)
    if a.data.get("call_id"):
        parent.calls[call_id] = (step, use)


def _result(a: Action, t: Thread) -> None:
    call_id = str(a.data.get("call_id"))
    found = t.calls.get(call_id)
    if found is not None and (found[1].result is None or a.data.get("from_transcript")):
        found[1].result = a  # a later result read from the harness's own record stands for the call (as in the projection)
        return
    step = t.agent_step(a.at, fits=t.open is not None)
    step.orphans.append(a)


def _said_last(threads: dict[str, Thread], a: Action) -> bool:
    """Whether an explicit final output is the text its thread's last agent step already says."""
    t = threads[a.thread]
    last = next((s for s in reversed(t.steps) if s.source == "agent"), None)
    return last is not None and last.message is not None and last.text == a.data.get("text")


def _prompt_first(main: Thread, session: Session) -> None:
    """A session whose prompt was recorded as no message (a TUI run) still opens with it."""
    if session.prompt and not any(s.user is not None for s in main.steps):
        at = main.steps[0].at if main.steps else 0.0
        main.steps.insert(0, Step("user", at, user=Action("message.user", {"text": session.prompt}, at=at), derived="prompt"))
