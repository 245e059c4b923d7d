"""ATIF trajectories (the Agent Trajectory Interchange Format: a Harbor trial's
`agent/trajectory.json`, or `benchtape export --format atif`) read as actions.

A trajectory is one JSON document, not JSONL, so the parser is fed the file's lines as any
import feeds its parser (they are the raw lines kept, and `reparse` feeds them again) and
reads the document once the stream ends: joined by newlines, the lines are the document
(a blank line is whitespace between JSON tokens: a JSON string cannot hold a raw newline).
The document is validated with the `atif` package's models, then walked:

- steps become actions on their trajectory's thread: a user step `message.user`, an agent
  step its `thinking`, `message.assistant`, `tool.call`s and, for each observation result,
  the `tool.result` of the call it names (`source_call_id`);
- an embedded subagent (`subagent_trajectories`, linked from the delegating call's result by
  `subagent_trajectory_ref.trajectory_id`) is a `subagent.spawned` in place of that call,
  followed by the subagent's own actions on its thread (its `trajectory_id`);
- `final_metrics` (else the step metrics, summed) is the session's `metrics`: ATIF's
  `prompt_tokens` include cached tokens, benchtape's `tokens_in` do not.

What the ATIF fields cannot say, benchtape's own export keeps under `extra.benchtape` (the
`benchtape` key of an object's `extra`): a result's `is_error`, an error's source, the
actions that have no ATIF counterpart (hooks, environment, workspace snapshots), the session's
start and end; this parser reads them back, so an exported session imports as itself. A
field of another producer's document that benchtape has no place for (a system prompt, a
step's `reasoning_effort`, an `extra` key) becomes an `adapter.warning` naming it and holding
its value (and the raw document keeps it whole): never dropped silently.
"""

from __future__ import annotations

from typing import Any

import orjson

from benchtape.adapters.base import warning
from benchtape.adapters.lines import epoch
from benchtape.core.canonical import canonical
from benchtape.core.jsonkeys import duplicate_key
from benchtape.core.model import MAIN, Action

FORMAT = "atif"
OURS = "benchtape"  # the key of `extra` under which benchtape keeps what ATIF has no field for
# What benchtape's export carries that an import has no place for: said, with its value, never dropped.
NOT_IMPORTED = {
    "grading": "the exporting store's grading; an import is graded anew by `benchtape grade` or `regrade`, never handed verdicts",
    "task": "the task cell it was; an imported session is no cell of an evaluation",
}
SCHEMA_VERSION = "ATIF-v1.8"  # what the export writes (the newest the `atif` package models)
# `extra` keys of Harbor's own Claude Code conversion that carry facts benchtape has a place for.
HARBOR_IS_ERROR = "tool_result_is_error"
HARBOR_SIDECHAIN, HARBOR_AGENT_ID = "is_sidechain", "agent_id"
HARBOR_CACHE_WRITES = "cache_creation_input_tokens"  # a step's metrics.extra
HARBOR_TOTAL_CACHE_WRITES = "total_cache_creation_input_tokens"  # final_metrics.extra
HARBOR_COST_SOURCE = "cost_source"  # final_metrics.extra: where total_cost_usd came from (`litellm_estimate`: Harbor priced the tokens)
BLOB_KINDS = frozenset({"workspace.snapshot", "transcript", "handover.snapshot"})  # actions naming bytes in the store's blobs


class Invalid(ValueError):
    """A document that is not an ATIF trajectory the `atif` package accepts."""


def load(text: str | bytes) -> Any:
    """The validated `atif.Trajectory` of a document; Invalid says where and why."""
    from atif import Trajectory
    from pydantic import ValidationError

    found = duplicate_key(text)
    if found is not None:  # a JSON parser keeps the last value silently: which one the author meant is unknown
        raise Invalid(f"line {found[1]}: the key {found[0]!r} appears twice in one object (JSON parsers keep only the last value); keep one")
    try:
        return Trajectory.model_validate_json(text)
    except ValidationError as exc:
        raise Invalid(describe(exc)) from None


def describe(exc: Any) -> str:
    """A pydantic ValidationError as a line a user can act on: the first few errors, each at its JSON path."""
    errors = exc.errors()
    shown = [f"{_path(e.get('loc') or ())}: {e.get('msg')}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(shown) + more


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the document)"


def ours(extra: dict[str, Any] | None) -> dict[str, Any]:
    """What benchtape's export kept in an object's `extra` ({} for another producer's object)."""
    value = (extra or {}).get(OURS)
    return value if isinstance(value, dict) else {}


class AtifParser:
    """Every line of one ATIF file, then the document read at the end of the stream."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self.meta: dict[str, Any] = {"format": FORMAT, "session_id": None, "model": None, "cwd": None, "first_prompt": None, "version": None}

    def feed(self, line: str) -> list[Action]:
        self._lines.append(line)
        return []

    def finish(self) -> list[Action]:
        text = "\n".join(self._lines)
        self._lines = []
        if not text.strip():
            return [warning("an empty file: no ATIF trajectory to read", "")]
        try:
            doc = load(text)
        except Invalid as exc:
            return [warning(f"not an ATIF trajectory the atif package accepts: {exc}", text)]
        try:
            reading = _Reading(doc)
        except Exception as exc:  # noqa: BLE001 - an `extra` of a shape nobody expected must never lose the import
            return [warning(f"AtifParser could not read this document ({type(exc).__name__}: {exc}); kept raw", text)]
        self.meta.update(reading.meta)
        return reading.actions


# Payloads here are spliced from the document (the fields benchtape kept under extra.benchtape,
# a foreign agent's dicts): built with Action.untyped, so the store's writer checks them where
# mypy cannot see their fields.
class _Reading:
    """One validated document walked into actions, in the order benchtape records them: a
    subagent's actions right after the call that spawned it, before that call's result."""

    def __init__(self, doc: Any):
        self.actions: list[Action] = []
        self.threads: set[str] = {MAIN}
        self.odd: dict[tuple[str, str], dict[int, Any]] = {}  # (trajectory, field) -> step id -> value
        self.late: list[Action] = []  # warnings, after everything else
        self.running: dict[str, float] = {}  # step metrics summed so far (benchtape's fields)
        # Harbor's converter prices a transcript that says no cost (`cost_source: litellm_estimate`):
        # its steps' and total's cost_usd are an estimate, never recorded as a cost the tool reported
        final_extra = (doc.final_metrics.extra if doc.final_metrics is not None else None) or {}
        self.estimated = final_extra.get(HARBOR_COST_SOURCE) not in (None, "reported")
        self.own = ours(doc.extra)
        self.meta: dict[str, Any] = self._meta(doc)
        if not self.own:
            self.actions.append(_agent_environment(doc.agent))
        self._trajectory(doc, MAIN, root=True)
        totals = self._final_metrics(doc)
        if totals:
            self.actions.append(Action.untyped("metrics", totals))
        self.actions.extend(self.late)
        self.actions.extend(self._odd_warnings())

    # ------------------------------------------------------------ the session
    def _meta(self, doc: Any) -> dict[str, Any]:
        started: dict[str, Any] = self.own["started"] if isinstance(self.own.get("started"), dict) else {}
        meta: dict[str, Any] = {
            "format": FORMAT,
            "session_id": doc.session_id,
            "model": doc.agent.model_name or started.get("model"),
            "version": doc.agent.version,
            "harness": started.get("harness") or doc.agent.name,
            "cwd": started.get("work_dir"),
            "first_prompt": next((_text(s.message) for s in doc.steps if s.source == "user"), None) or started.get("prompt"),
            "atif": {"schema_version": doc.schema_version, "trajectory_id": doc.trajectory_id, "agent": doc.agent.name},
        }
        if started.get("scenario"):
            meta["scenario"] = started["scenario"]
        if started:
            meta["exported_from"] = started
        if isinstance(self.own.get("finished"), dict):
            meta["finished"] = self.own["finished"]
        for name in ("notes", "continued_trajectory_ref"):
            if getattr(doc, name) is not None:
                self.late.append(_kept(f"the trajectory's `{name}`" + (" (the continuation file is not read)" if name == "continued_trajectory_ref" else ""), getattr(doc, name)))
        self._foreign_extra(doc.extra, "the trajectory's", MAIN)
        self._foreign_extra(doc.agent.extra, "the agent's", MAIN)
        for key, why in NOT_IMPORTED.items():
            if key in self.own:
                self.late.append(_kept(f"the trajectory's extra.benchtape.{key} ({why})", self.own[key]))
        return meta

    def _final_metrics(self, doc: Any) -> dict[str, Any]:
        """The session's metric totals: `final_metrics`, else the step metrics summed."""
        final = doc.final_metrics
        if final is None:
            return dict(self.running)
        extra = dict(final.extra or {})
        writes = extra.pop(HARBOR_TOTAL_CACHE_WRITES, None)
        kept = extra.pop(OURS, None) or {}
        self._foreign_extra(extra, "final_metrics'", MAIN)
        totals = _benchtape_tokens(final.total_prompt_tokens, final.total_cached_tokens, writes, final.total_completion_tokens)
        if final.total_cost_usd is not None and not self.estimated:
            totals["cost_usd"] = final.total_cost_usd
        elif final.total_cost_usd is not None:
            # an estimate is no cost the tool reported: recorded as one, it priced a transcript that
            # says no cost at $1.32 where its own import says unknown; kept as the warning's value
            self.late.append(_kept(f"final_metrics.total_cost_usd ({final.total_cost_usd}), an estimate ({extra.get(HARBOR_COST_SOURCE)}), not a cost the tool reported: not recorded as one", final.total_cost_usd))
        for name in ("duration_ms", "turns"):
            if _dict(kept).get(name) is not None:
                totals[name] = kept[name]
        return totals

    # ------------------------------------------------------------ one trajectory
    def _trajectory(self, traj: Any, thread: str, root: bool = False) -> None:
        subagents = {s.trajectory_id: s for s in traj.subagent_trajectories or []}
        spawned: set[str] = set()
        for step in traj.steps:
            self._step(step, thread, traj, subagents, spawned)
        for sub_id, sub in subagents.items():
            if sub_id not in spawned:  # embedded, never linked from a step: spawned by its parent all the same
                kept = ours(sub.extra)
                sub_thread = self._thread_for(sub_id)
                if kept.get("spawned", True):
                    self.actions.append(Action("subagent.spawned", {"thread": sub_thread, "agent": sub.agent.name}, thread=thread))
                self._trajectory(sub, sub_thread)
        self.actions.extend(_carried(ours(traj.extra).get("after"), thread, 0.0))
        if not root:
            self._foreign_extra(traj.extra, f"subagent trajectory {traj.trajectory_id}'s", thread)
            self._foreign_extra(traj.agent.extra, f"subagent trajectory {traj.trajectory_id}'s agent", thread)
            if traj.final_metrics is not None and not ours(traj.extra):
                self.late.append(_kept(f"subagent trajectory {traj.trajectory_id}'s `final_metrics` (benchtape keeps one set of totals per session: the root's)", traj.final_metrics.model_dump(mode="json", exclude_none=True), thread))

    def _thread_for(self, trajectory_id: str | None) -> str:
        """A subagent's thread: its trajectory id, made unique within the session."""
        base = trajectory_id or "subagent"
        name, n = base, 1
        while name in self.threads:
            n += 1
            name = f"{base}-{n}"
        self.threads.add(name)
        return name

    def _step(self, step: Any, thread: str, traj: Any, subagents: dict[str, Any], spawned: set[str]) -> None:
        kept = ours(step.extra)
        extra = {k: v for k, v in (step.extra or {}).items() if k != OURS}
        if not kept and extra.get(HARBOR_SIDECHAIN) is True and isinstance(extra.get(HARBOR_AGENT_ID), str):
            thread = str(extra[HARBOR_AGENT_ID])  # Harbor's Claude Code conversion inlines a subagent's steps
        for name in (HARBOR_SIDECHAIN, HARBOR_AGENT_ID, HARBOR_IS_ERROR):
            extra.pop(name, None)
        at = epoch(step.timestamp)
        where = traj.trajectory_id or ("main" if thread == MAIN else thread)
        self.actions.extend(_carried(kept.get("before"), thread, at))
        for name in ("reasoning_effort", "llm_call_count", "is_copied_context"):
            if getattr(step, name) is not None:
                self.odd.setdefault((where, f"steps[].{name}"), {})[step.step_id] = getattr(step, name)
        for key, value in extra.items():
            self.odd.setdefault((where, f"steps[].extra.{key}"), {})[step.step_id] = value
        if step.model_name is not None and step.model_name != (traj.agent.model_name or self.meta.get("model")):
            self.odd.setdefault((where, "steps[].model_name"), {})[step.step_id] = step.model_name
        text = _text(step.message)
        self._media(step.message, f"step {step.step_id}'s message", thread)
        if step.source == "user":
            if not kept.get("derived"):
                self.actions.append(Action.untyped("message.user", {"text": text, **_data(kept)}, thread=thread, at=at))
        elif step.source == "system":
            self._system(step, kept, text, thread, at)
        else:
            self._agent(step, kept, text, thread, at, subagents, spawned)
        if step.metrics is not None:
            self._add_metrics(step.metrics, where, step.step_id)

    def _system(self, step: Any, kept: dict[str, Any], text: str, thread: str, at: float) -> None:
        if kept.get("kind") == "error":
            self.actions.append(Action.untyped("error", {"message": text, **_data(kept)}, thread=thread, at=at))
        elif text:
            self.late.append(_kept(f"system step {step.step_id} (benchtape has no action for a system message)", text, thread))
        if step.observation is not None:
            self.late.append(_kept(f"system step {step.step_id}'s observation (an infrastructure event benchtape has no action for)", step.observation.model_dump(mode="json", exclude_none=True), thread))

    def _agent(self, step: Any, kept: dict[str, Any], text: str, thread: str, at: float, subagents: dict[str, Any], spawned: set[str]) -> None:
        if kept.get("kind") == "final_output":
            if not kept.get("derived"):
                self.actions.append(Action.untyped("final_output", {"text": text, **_data(kept)}, thread=thread, at=at))
            return
        if step.reasoning_content is not None:
            self.actions.append(Action.untyped("thinking", {"text": step.reasoning_content, **_dict(kept.get("thinking"))}, thread=thread, at=at))
        if text or "message" in kept:
            self.actions.append(Action.untyped("message.assistant", {"text": text, **_dict(kept.get("message"))}, thread=thread, at=at))
        results = step.observation.results if step.observation is not None else []
        for call in step.tool_calls or []:
            refs = [r for result in results if result.source_call_id == call.tool_call_id for r in result.subagent_trajectory_ref or []]
            linked = [subagents[r.trajectory_id] for r in refs if r.trajectory_id in subagents and r.trajectory_id not in spawned]
            call_kept = ours(call.extra)
            self._foreign_extra({k: v for k, v in (call.extra or {}).items() if k != OURS}, f"step {step.step_id}'s call {call.tool_call_id!r}", thread)
            if linked or "spawn" in call_kept:
                self._spawn(call, call_kept, linked[0] if linked else None, thread, at, spawned)
            else:
                derived = canonical(call.function_name, call.arguments).fields()  # what it did, unless the trajectory kept benchtape's own
                self.actions.append(Action.untyped("tool.call", {"call_id": call.tool_call_id, "tool": call.function_name, "input": call.arguments, **derived, **call_kept}, thread=thread, at=at))
        for result in results:
            self._result(step, result, thread, at, subagents, spawned)

    def _spawn(self, call: Any, kept: dict[str, Any], sub: Any, thread: str, at: float, spawned: set[str]) -> None:
        sub_thread = self._thread_for(sub.trajectory_id if sub is not None else (kept.get("spawn") or {}).get("thread") or call.tool_call_id)
        if isinstance(kept.get("spawn"), dict):
            data = {**kept["spawn"], "thread": sub_thread}
        else:
            args = call.arguments
            prompt = args.get("prompt") if isinstance(args.get("prompt"), str) else None
            data = {"thread": sub_thread, "call_id": call.tool_call_id, "agent": sub.agent.name if sub is not None else args.get("subagent_type"), "prompt": prompt, "tool": call.function_name}
            if sub is not None and sub.agent.model_name:
                data["model"] = sub.agent.model_name
        self.actions.append(Action.untyped("subagent.spawned", data, thread=thread, at=at))
        if sub is not None:
            spawned.add(sub.trajectory_id)
            self._trajectory(sub, sub_thread)

    def _result(self, step: Any, result: Any, thread: str, at: float, subagents: dict[str, Any], spawned: set[str]) -> None:
        kept = ours(result.extra)
        extra = {k: v for k, v in (result.extra or {}).items() if k != OURS}
        is_error = extra.pop(HARBOR_IS_ERROR, None) if not kept else None
        if not kept and is_error is None and isinstance((step.extra or {}).get(HARBOR_IS_ERROR), bool) and len(step.tool_calls or []) == 1:
            is_error = step.extra[HARBOR_IS_ERROR]  # Harbor puts it on a one-call step for a result it found on its own
        self._foreign_extra(extra, f"step {step.step_id}'s result", thread)
        self._media(result.content, f"step {step.step_id}'s result", thread)
        for ref in result.subagent_trajectory_ref or []:
            self._foreign_extra(ref.extra, f"step {step.step_id}'s subagent ref", thread)
            if ref.trajectory_id is None or ref.trajectory_id not in subagents:
                self.late.append(_kept(f"step {step.step_id}'s ref to a subagent trajectory not embedded in this document (benchtape reads embedded subagents only)", ref.model_dump(mode="json", exclude_none=True), thread))
            elif result.source_call_id is None and ref.trajectory_id not in spawned:  # a delegation with no call: the subagent all the same
                sub_thread = self._thread_for(ref.trajectory_id)
                self.actions.append(Action("subagent.spawned", {"thread": sub_thread, "agent": subagents[ref.trajectory_id].agent.name}, thread=thread, at=at))
                spawned.add(ref.trajectory_id)
                self._trajectory(subagents[ref.trajectory_id], sub_thread)
        if kept.get("unanswered"):  # benchtape's link to a subagent whose call never got its result
            return
        call_id = result.source_call_id or kept.get("call_id")
        if call_id is None:
            if result.content is not None and not result.subagent_trajectory_ref:
                self.late.append(_kept(f"step {step.step_id}'s observation result tied to no tool call (benchtape pairs a result with its call)", _content_value(result.content), thread))
            return
        if not kept and call_id not in {c.tool_call_id for c in step.tool_calls or []}:
            # Harbor's validator refuses it ("references source_call_id … not found in step N's
            # tool_calls"); imported, it was an orphan result, said nowhere
            self.late.append(_kept(f"step {step.step_id}'s observation result for the call {call_id!r}, which is none of that step's tool_calls (recorded as the result of a call never made)", _content_value(result.content), thread))
        data: dict[str, Any] = {"call_id": call_id, "output": _content_value(result.content)}
        if not kept:
            data["is_error"] = is_error if isinstance(is_error, bool) else None
        data.update(kept)
        self.actions.append(Action.untyped("tool.result", data, thread=thread, at=at))

    # ------------------------------------------------------------ what has no place
    def _add_metrics(self, metrics: Any, where: str, step_id: int) -> None:
        """A step's metrics, added to the running totals; the totals so far as a `metrics`
        action (cumulative, as every harness's are), so the per-step figures stay readable."""
        extra = dict(metrics.extra or {})
        writes = extra.pop(HARBOR_CACHE_WRITES, None)
        extra.pop("cache_read_input_tokens", None)  # Harbor repeats cached_tokens there
        step = _benchtape_tokens(metrics.prompt_tokens, metrics.cached_tokens, writes, metrics.completion_tokens)
        if metrics.cost_usd is not None and not self.estimated:
            step["cost_usd"] = metrics.cost_usd
        for name, value in step.items():
            self.running[name] = self.running.get(name, 0) + value
        if step:
            self.actions.append(Action.untyped("metrics", dict(self.running)))
        odd = {f"metrics.{name}": getattr(metrics, name) for name in ("prompt_token_ids", "completion_token_ids", "logprobs") if getattr(metrics, name) is not None}
        odd.update({f"metrics.extra.{key}": value for key, value in extra.items()})
        for name, value in odd.items():
            self.odd.setdefault((where, f"steps[].{name}"), {})[step_id] = value

    def _foreign_extra(self, extra: dict[str, Any] | None, owner: str, thread: str) -> None:
        rest = {k: v for k, v in (extra or {}).items() if k != OURS}
        if rest:
            self.late.append(_kept(f"{owner} `extra` ({', '.join(sorted(rest))})", rest, thread))

    def _media(self, content: Any, where: str, thread: str) -> None:
        if isinstance(content, list):
            media = [p.model_dump(mode="json", exclude_none=True) for p in content if p.type != "text"]
            if media:
                self.late.append(_kept(f"{where}: {len(media)} image/audio part(s) (benchtape keeps text)", media, thread))

    def _odd_warnings(self) -> list[Action]:
        """One warning per field benchtape has no place for, with every step's value."""
        out = []
        for (where, name), values in self.odd.items():
            out.append(_kept(f"`{name}` on {len(values)} step(s) of trajectory {where} (benchtape has no place for it)", {str(k): v for k, v in values.items()}))
        return out


def _agent_environment(agent: Any) -> Action:
    """What another producer's document says about its agent, as what the tool reported."""
    data: dict[str, Any] = {"source": "atif:agent", "agent": agent.name, "version": agent.version}
    if agent.model_name:
        data["model"] = agent.model_name
    if agent.tool_definitions:
        data["tools"] = [_dict(d.get("function")).get("name") or d.get("name") for d in agent.tool_definitions if isinstance(d, dict)]
        data["tool_definitions"] = agent.tool_definitions
    return Action.untyped("environment.reported", data)


def _benchtape_tokens(prompt: int | None, cached: int | None, cache_writes: Any, completion: int | None) -> dict[str, Any]:
    """ATIF token counts as benchtape's fields: `prompt_tokens` include the cached (read) tokens
    and, as Harbor counts Anthropic's, the tokens written to the cache; `tokens_in` are neither."""
    out: dict[str, Any] = {}
    writes = cache_writes if isinstance(cache_writes, int) and not isinstance(cache_writes, bool) else None
    if prompt is not None:
        out["tokens_in"] = max(0, prompt - (cached or 0) - (writes or 0))
    if cached is not None:
        out["cache_read_tokens"] = cached
    if writes is not None:
        out["cache_write_tokens"] = writes
    if completion is not None:
        out["tokens_out"] = completion
    return out


def _carried(entries: Any, thread: str, at: float) -> list[Action]:
    """Actions benchtape's export kept beside a step (or at a trajectory's end) because ATIF has
    no place for them. One naming a blob of the store it came from (a workspace snapshot, a
    harness's own transcript) is a warning instead: the bytes did not travel with the document."""
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("kind"), str) and isinstance(entry.get("data"), dict):
            when = float(entry.get("at") or at)
            if entry["kind"] in BLOB_KINDS:
                out.append(Action.untyped("adapter.warning", {**_kept(f"a {entry['kind']} recorded where the session was exported from (its bytes are not in the document)", entry["data"], thread).data, "source": FORMAT}, thread=thread, at=when))
            else:
                out.append(Action(entry["kind"], entry["data"], thread=thread, at=when))
    return out


def _data(kept: dict[str, Any]) -> dict[str, Any]:
    return _dict(kept.get("data"))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(message: Any) -> str:
    """A step message's text: the string, or its text parts joined."""
    if isinstance(message, str):
        return message
    return "\n".join(p.text for p in message or [] if p.type == "text" and p.text)


def _content_value(content: Any) -> Any:
    """An observation result's content as a tool output: a string, or its text parts joined."""
    if content is None or isinstance(content, str):
        return content
    return _text(content)


def _kept(what: str, value: Any, thread: str = MAIN) -> Action:
    """A field benchtape has no place for, kept as a warning holding its value."""
    line = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return warning(f"ATIF {what}: kept here, not read", line, thread=thread)
