"""A stored session as an ATIF trajectory (ATIF v1.8, built with the `atif` package's models).

The main thread is the root trajectory; each subagent is an embedded trajectory
(`subagent_trajectories`, nested under the thread that spawned it) whose `trajectory_id` is
its thread, linked from the delegating call's observation result by
`subagent_trajectory_ref`. Steps come from benchtape.formats.conversation. The session's
metric totals are `final_metrics` (ATIF's `total_prompt_tokens` count cached and
cache-written tokens too; the cache writes are also named as Harbor's Claude Code conversion
names them, `total_cache_creation_input_tokens`). The final output is the last agent step's
message, as ATIF readers take it: when the session's final output is not what the last agent
step says (a delegated answer, an API error), a step saying it closes the trajectory.

What no ATIF field says is kept under `extra.benchtape` (benchtape.adapters.atif_trajectory
reads it back): a result's `is_error` and other payload fields, an error step's source, the
actions no step can hold, the session's start and end. The document is valid by the `atif`
package and by Harbor's stricter rules (benchtape.formats.harbor_rules).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from benchtape.adapters.atif_trajectory import HARBOR_TOTAL_CACHE_WRITES, OURS, SCHEMA_VERSION
from benchtape.core.model import Action, Session, text_of
from benchtape.core.version import VERSION
from benchtape.formats.conversation import Conversation, Step, Thread, Use, conversation
from benchtape.formats.grades import Grading, task_ref, unique_names, verdict_record
from benchtape.formats.harbor_rules import check

if TYPE_CHECKING:  # imported where used: atif (pydantic) is loaded only by an export
    from atif import Trajectory


def trajectory(session: Session, grading: Grading | None = None) -> dict[str, Any]:
    """The session as one ATIF document (a JSON-ready dict, None fields left out); with its
    latest grading, when given, under the root's `extra.benchtape.grading`."""
    conv = conversation(session)
    doc = _Writer(session, conv, grading).root().to_json_dict()
    check(doc, f"the ATIF export of session {session.id}")
    return doc


def iso(at: float) -> str | None:
    """An action's time as ISO 8601 (None when the action has none)."""
    return datetime.fromtimestamp(at, UTC).isoformat() if at and at > 0 else None


def started_data(session: Session) -> dict[str, Any]:
    return next((dict(a.data) for a in session.actions if a.kind == "session.started"), {})


def finished_data(session: Session) -> dict[str, Any]:
    return next((dict(a.data) for a in reversed(session.actions) if a.kind == "session.finished"), {})


def agent_version(session: Session) -> str:
    """The harness's version as recorded: its binary, what it reported, what an import's files said."""
    started = started_data(session)
    for value in ((started.get("binary") or {}).get("version"), (session.environment.get("reported") or {}).get("version"), (started.get("meta") or {}).get("version")):
        if isinstance(value, str) and value:
            return value
    return VERSION if session.harness == "mock" else "unknown"


class _Writer:
    def __init__(self, session: Session, conv: Conversation, grading: Grading | None = None):
        self.session, self.conv, self.grading = session, conv, grading
        self.version = agent_version(session)

    def root(self) -> Trajectory:
        from atif import Agent, Trajectory

        s = self.session
        main = self.conv.main
        steps = self._steps(main)
        final = s.final_output
        last = next((st for st in reversed(steps) if st.source == "agent"), None)
        if final and (last is None or last.message != final):
            steps.append(self._step(len(steps) + 1, "agent", final, None, {"kind": "final_output", "derived": True}))
        if not steps:  # ATIF wants a step: a session that recorded nothing still had its prompt
            steps = [self._step(1, "user", s.prompt or "", None, {"derived": "prompt"})]
        kept: dict[str, Any] = {"producer": f"benchtape {VERSION}", "started": started_data(s), "finished": finished_data(s)}
        if main.after:
            kept["after"] = _carried(main.after)
        task = task_ref(s)
        if task is not None:
            kept["task"] = task
        if self.grading is not None and (self.grading.verdicts or self.grading.outcome):
            kept["grading"] = _grading(self.grading)
        return Trajectory(
            schema_version=SCHEMA_VERSION,
            session_id=s.id,
            trajectory_id="main",
            agent=Agent(name=s.harness or "unknown", version=self.version, model_name=s.model),
            steps=steps,
            final_metrics=self._final_metrics(len(steps)),
            extra={OURS: kept},
            subagent_trajectories=self._children(main),
        )

    def _subagent(self, thread: Thread) -> Any:
        from atif import Agent, Trajectory

        steps = self._steps(thread)
        if not steps:  # ATIF wants a step: what the subagent was asked
            prompt = thread.spawn.data.get("prompt") if thread.spawn is not None else None
            steps = [self._step(1, "user", prompt if isinstance(prompt, str) else "", None, {"derived": "prompt"})]
        kept: dict[str, Any] = {}
        if thread.spawn is None:
            kept["spawned"] = False  # a thread the harness named but never said it spawned
        if thread.after:
            kept["after"] = _carried(thread.after)
        model = thread.spawn.data.get("model") if thread.spawn is not None else None
        return Trajectory(
            schema_version=SCHEMA_VERSION,
            session_id=self.session.id,
            trajectory_id=thread.thread,
            agent=Agent(name=thread.agent or "subagent", version=self.version, model_name=model if isinstance(model, str) else None),
            steps=steps,
            extra={OURS: kept} if kept else None,
            subagent_trajectories=self._children(thread),
        )

    def _children(self, thread: Thread) -> list[Any] | None:
        return [self._subagent(child) for child in self.conv.children_of(thread.thread)] or None

    # ------------------------------------------------------------ steps
    def _steps(self, thread: Thread) -> list[Any]:
        return [self._render(i, step) for i, step in enumerate(thread.steps, start=1)]

    def _step(self, step_id: int, source: Literal["system", "user", "agent"], message: str, at: float | None, kept: dict[str, Any], **fields: Any) -> Any:
        from atif import Step as AtifStep

        return AtifStep(step_id=step_id, timestamp=iso(at or 0.0), source=source, message=message, extra={OURS: kept} if kept else None, **fields)

    def _render(self, step_id: int, step: Step) -> Any:
        kept: dict[str, Any] = {}
        if step.carried:
            kept["before"] = _carried(step.carried)
        if step.source == "user":
            assert step.user is not None
            if step.derived:
                kept["derived"] = step.derived
            _rest_into(kept, step.user, {"text"})
            return self._step(step_id, "user", step.text, step.at, kept)
        if step.source == "system":
            assert step.error is not None
            kept["kind"] = "error"
            _rest_into(kept, step.error, {"message"})
            return self._step(step_id, "system", step.text, step.at, kept)
        if step.final is not None:
            kept["kind"] = "final_output"
            _rest_into(kept, step.final, {"text"})
            return self._step(step_id, "agent", step.text, step.at, kept)
        return self._agent_step(step_id, step, kept)

    def _agent_step(self, step_id: int, step: Step, kept: dict[str, Any]) -> Any:
        from atif import Observation

        reasoning = None
        if step.thinking is not None:
            text = step.thinking.data.get("text")
            reasoning = text if isinstance(text, str) else (text_of(text) or "")
            rest = _rest(step.thinking, {"text"} if isinstance(text, str) else set())
            if rest:
                kept["thinking"] = rest
        if step.message is not None:
            rest = _rest(step.message, {"text"} if isinstance(step.message.data.get("text"), str) else set())
            if rest or not step.text:
                kept["message"] = rest
        calls = [self._call(u) for u in step.uses]
        results = [r for u in step.uses if (r := self._use_result(u)) is not None] + [self._orphan(a) for a in step.orphans]
        return self._step(
            step_id, "agent", step.text, step.at, kept,
            reasoning_content=reasoning,
            tool_calls=calls or None,
            observation=Observation(results=results) if results else None,
        )

    def _call(self, use: Use) -> Any:
        from atif import ToolCall

        if use.spawned is not None:
            kept: dict[str, Any] = {"spawn": dict(use.action.data)}
        else:
            data = use.action.data
            drop = {"tool"} | ({"call_id"} if data.get("call_id") == use.call_id else set()) | ({"input"} if isinstance(data.get("input"), dict) else set())
            kept = _rest(use.action, drop)
        return ToolCall(tool_call_id=use.call_id, function_name=use.tool, arguments=use.input, extra={OURS: kept} if kept else None)

    def _use_result(self, use: Use) -> Any:
        from atif import ObservationResult, SubagentTrajectoryRef

        refs = [SubagentTrajectoryRef(trajectory_id=use.spawned)] if use.spawned is not None else None
        if use.result is None:
            if refs is None:
                return None
            return ObservationResult(source_call_id=use.call_id, subagent_trajectory_ref=refs, extra={OURS: {"unanswered": True}})
        kept = _result_rest(use.result, {"call_id"})
        return ObservationResult(source_call_id=use.call_id, content=_content(use.result), subagent_trajectory_ref=refs, extra={OURS: kept} if kept else None)

    def _orphan(self, result: Action) -> Any:
        """A result of a call this thread never made: tied to no call, its call id kept."""
        from atif import ObservationResult

        kept = _result_rest(result, set())
        kept.setdefault("call_id", result.data.get("call_id"))
        return ObservationResult(content=_content(result), extra={OURS: kept})

    def _final_metrics(self, steps: int) -> Any:
        from atif import FinalMetrics

        from benchtape.replay.timeline import spent

        m = self.session.metrics
        prompt = None if m.tokens_in is None else m.tokens_in + (m.cache_read_tokens or 0) + (m.cache_write_tokens or 0)
        extra: dict[str, Any] = {}
        if m.cache_write_tokens is not None:
            extra[HARBOR_TOTAL_CACHE_WRITES] = m.cache_write_tokens
        more = {k: v for k, v in (("duration_ms", m.duration_ms), ("turns", m.turns)) if v is not None}
        if more:
            extra[OURS] = more
        return FinalMetrics(
            total_prompt_tokens=prompt,
            total_completion_tokens=m.tokens_out,
            total_cached_tokens=m.cache_read_tokens,
            total_cost_usd=spent(self.session),  # a scripted model spent nothing, as compare prices it
            total_steps=steps,
            extra=extra or None,
        )


def _grading(grading: Grading) -> dict[str, Any]:
    """A grading as ATIF has no field for it: the cell outcome, each verdict (its name, status,
    score, reason, the facts of its evidence), and each verdict's score by name (as Harbor's
    `verifier_result.rewards` names a task's reward)."""
    out: dict[str, Any] = {"grading_id": grading.grading_id}
    if grading.outcome is not None:
        out["outcome"] = grading.outcome
    out["verdicts"] = [verdict_record(v) for v in grading.verdicts]
    out["scores"] = {name: r["score"] for name, r in zip(unique_names(grading.verdicts), out["verdicts"])}
    return out


def _content(result: Action) -> str | None:
    output = result.data.get("output")
    return output if output is None or isinstance(output, str) else text_of(output)


def _result_rest(result: Action, drop: set[str]) -> dict[str, Any]:
    """A result's payload beyond what `source_call_id` and `content` say (`is_error` always)."""
    output = result.data.get("output")
    return _rest(result, drop | ({"output"} if output is None or isinstance(output, str) else set()))


def _rest(action: Action, drop: set[str]) -> dict[str, Any]:
    return {k: v for k, v in action.data.items() if k not in drop}


def _rest_into(kept: dict[str, Any], action: Action, drop: set[str]) -> None:
    rest = _rest(action, drop)
    if rest:
        kept["data"] = rest


def _carried(actions: list[Action]) -> list[dict[str, Any]]:
    return [{"kind": a.kind, "data": a.data, **({"at": a.at} if a.at else {})} for a in actions]
