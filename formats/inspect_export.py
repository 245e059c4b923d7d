"""Stored sessions as an Inspect AI eval log (`.eval`), so `inspect view` shows benchtape runs.

Built with `inspect_ai`'s own log API (the optional extra `benchtape[inspect]`): one log per
setup (an evaluation cell's arm, else a harness and model), so `inspect view` lists the setups of
a run side by side, each log with its own model, its setup's tool, version, effort and options in
the eval spec, and its own accuracy (the run's id is the logs' eval set). One `EvalSample` per
session, its id naming the task and the attempt (`TASK@attempt-N`, the same in every setup's log,
so one task lines up across them; a workflow's step adds `:STEP`) and the attempt also its epoch
(Inspect's epochs are repeated runs of one sample, as attempts are), the prompt as input,
the main thread's conversation as its messages (assistant turns with their tool calls, each
result a tool message), and events for the viewer's transcript: a model event per agent turn,
a tool event per call, each subagent a span of type "agent" that its spawning tool event
points at. Scores come from the session's latest grading: one per check (its score, its
status and reason) and `scenario` (1 when the scenario passed by benchtape's rule, else 0).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.core.model import Session
from benchtape.core.version import VERSION
from benchtape.formats.conversation import Thread, conversation
from benchtape.formats.grades import Grading, facts, scenario_said, task_ref, unique_names
from benchtape.replay.grading import harness_ok
from benchtape.replay.timeline import session_status
from benchtape.store.database import SessionRow

INSTALL = "pip install 'benchtape[inspect]'"
SCENARIO_SCORE = "scenario"
PROVIDERS = {"claude-code": "anthropic", "codex": "openai", "mock": "mockllm"}  # Inspect names a model provider/model


@dataclass
class Graded:
    """One session to write: its row, its projection, the verdicts of its latest grading."""

    row: SessionRow
    session: Session
    grading: Grading

    @property
    def verdicts(self) -> list[dict[str, Any]]:
        return self.grading.verdicts


@dataclass
class Setup:
    """What the sessions of one log ran as: its key (the arm's, else a hash of harness and
    model), a readable label, and what the run recorded of it (tool, version, model, effort,
    options per step)."""

    key: str
    label: str
    summary: dict[str, Any] = field(default_factory=dict)
    items: list[Graded] = field(default_factory=list)


def setups(items: list[Graded], run: dict[str, Any] | None) -> list[Setup]:
    """The sessions grouped by the setup they ran as, in the order each setup first ran."""
    arms = ((run or {}).get("params") or {}).get("arms") or {}
    out: dict[str, Setup] = {}
    for g in items:
        cell = g.session.started.get("cell") or {}
        harness, model = g.row.harness or g.session.harness or "unknown", g.row.model or g.session.model
        if cell.get("arm"):
            key, label = str(cell["arm"]), str(cell.get("label") or cell["arm"])
            summary = dict(arms.get(key) or {})
        else:
            key = hashlib.sha256(f"{harness}\0{model or ''}".encode()).hexdigest()[:16]
            label = " ".join(x for x in (harness, model) if x)
            summary = {"tool": harness, "steps": [{"tool": harness, "model_id": model}]}
        out.setdefault(key, Setup(key, label, summary)).items.append(g)
    return list(out.values())


def require_inspect() -> None:
    """BadInput naming the install command when the optional extra is missing."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise BadInput("exporting an Inspect log needs the inspect_ai package, which is not installed", fix=f"install the extra: {INSTALL}") from None


def eval_logs(items: list[Graded], run: dict[str, Any] | None) -> list[Any]:
    """One `inspect_ai.log.EvalLog` per setup of these sessions."""
    return [eval_log(setup, run) for setup in setups(items, run)]


def eval_log(setup: Setup, run: dict[str, Any] | None) -> Any:
    """An `inspect_ai.log.EvalLog` of one setup's sessions (one sample each), with results per score."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalPlan, EvalPlanStep, EvalSpec, EvalStats

    items = setup.items
    task = task_name(run)
    samples = _samples(items)
    models = sorted({model_of(g.session) for g in items})
    model = models[0] if len(models) == 1 else "benchtape/mixed"  # a workflow whose steps use several models
    # the earliest of the run's start and its samples': an import's run starts when the import ran,
    # its sessions months before, and a log that ended before it began was the result
    starts = [g.row.started_at for g in items if g.row.started_at] + [_epoch(str(s.started_at)) for s in samples if s.started_at]
    begun = [t for t in [(run or {}).get("started_at"), *starts] if t]
    created = _iso(min(begun) if begun else 0.0) or datetime.now(UTC).replace(microsecond=0).isoformat()
    run_id = str((run or {}).get("id") or items[0].row.run_id or "")
    steps = setup.summary.get("steps") or []
    first = steps[0] if steps else {}
    harnesses = sorted({g.session.harness or "unknown" for g in items})
    errored = [s for s in samples if s.error is not None]
    # benchtape runs every sample past another's error, as Inspect does with fail_on_error=False:
    # the log is a success that holds errored samples, unless none of them measured anything
    failed = bool(samples) and len(errored) == len(samples)
    return EvalLog(
        version=2,
        status="error" if failed else "success",
        error=EvalError(message=f"every sample errored ({len(samples)}); the first: {errored[0].error.message}", traceback="", traceback_ansi="") if failed else None,
        eval=EvalSpec(
            eval_set_id=run_id or None,
            eval_id=hashlib.sha256(f"{run_id}\0{setup.key}".encode()).hexdigest()[:22],
            created=created,
            task=task,
            task_id=setup.key,
            task_display_name=f"{task} · {setup.label}",
            run_id=run_id,
            task_file=(run or {}).get("bench_path"),
            task_args={"setup": setup.label},
            dataset=EvalDataset(name=task, samples=len(samples), sample_ids=[s.id for s in samples]),
            model=model,
            model_args={k: v for k, v in {"effort": first.get("effort"), **(first.get("options") or {})}.items() if v is not None},
            config=EvalConfig(epochs=max((s.epoch for s in samples), default=1), fail_on_error=False),
            solver=str(setup.summary.get("tool") or ", ".join(harnesses)),
            solver_args={k: v for k, v in {"tool_version": first.get("tool_version"), "effort": first.get("effort"), "options": first.get("options") or None, "pre": setup.summary.get("pre") or None, "steps": [s.get("name") for s in steps] if len(steps) > 1 else None}.items() if v is not None},
            tags=[setup.label],
            metadata={"producer": f"benchtape {VERSION}", "run": run, "setup": {"key": setup.key, "label": setup.label, **setup.summary}, "models": models},
        ),
        plan=EvalPlan(name="benchtape", steps=[EvalPlanStep(solver=h, params={}) for h in harnesses]),
        results=_results(samples),
        stats=EvalStats(started_at=created, completed_at=max((str(s.completed_at) for s in samples if s.completed_at), default=created), model_usage=_total_usage(samples)),
        samples=samples,
    )


def write(logs: list[Any], dest: Path) -> list[Path]:
    """Write the logs as `.eval` files into the folder `dest` (made when missing), each named as
    Inspect names its logs (`<created>_<task>_<task id>.eval`: `inspect view` lists a log by the
    task and id in its name; the task id is the setup's key); or one log to `dest` itself when it
    ends in `.eval`. Every file is written beside its target first and all are moved in at the
    end, so a failure leaves nothing half-written."""
    from inspect_ai.log import write_eval_log

    if dest.suffix == ".eval":
        if len(logs) != 1:
            labels = ", ".join(str(log.eval.task_args.get("setup")) for log in logs)
            raise BadInput(f"these sessions ran as {len(logs)} setups ({labels}): Inspect keeps one log per setup", file=str(dest), fix="name a folder (-o DIR) to write one .eval log per setup into")
        targets = [dest]
    else:
        if dest.exists() and not dest.is_dir():
            raise BadInput(f"{dest} is a file that does not end in .eval", file=str(dest), fix="name the log FILE.eval, or a folder to write the logs into")
        targets = [dest / f"{log.eval.created.replace(':', '-')}_{_file_part(log.eval.task)}_{_file_part(log.eval.task_id or log.eval.eval_id)}.eval" for log in logs]
    try:
        (targets[0].parent).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot write there: {exc.strerror or exc}", file=str(dest), fix="name a file in a writable place") from None
    tmps = [t.with_name(f".{t.name}.{os.getpid()}.tmp") for t in targets]
    try:
        for log, tmp in zip(logs, tmps):
            write_eval_log(log, str(tmp), format="eval")
        for tmp, target in zip(tmps, targets):
            os.replace(tmp, target)
    except OSError as exc:  # a place the folder could be made in (or existed) but not written (/proc, a read-only mount)
        raise BadInput(f"cannot write there: {exc.strerror or exc}", file=str(dest), fix="name a file in a writable place") from None
    finally:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)
    return targets


def task_name(run: dict[str, Any] | None) -> str:
    """What Inspect calls the task: the run's bench (its file, or its folder for `bench.yaml`)."""
    path = (run or {}).get("bench_path")
    if not path:
        return f"benchtape-{(run or {}).get('kind') or 'run'}"
    p = Path(path)
    return p.parent.name if p.stem in ("bench", "eval", "evaluation") and p.parent.name else p.stem


def model_of(session: Session) -> str:
    provider = PROVIDERS.get(session.harness or "", session.harness or "unknown")
    return f"{provider}/{session.model or 'default'}"


# ---------------------------------------------------------------- samples


def sample_id(scenario: str, attempt: int, step: str | None = None) -> str:
    """A sample's id: the task and the attempt (and a workflow's step), the same in every setup's log."""
    return f"{scenario}@attempt-{attempt}" + (f":{step}" if step else "")


def _samples(items: list[Graded]) -> list[Any]:
    seen: dict[str, int] = {}
    out = []
    for g in sorted(items, key=lambda g: (g.row.scenario, int(g.row.attempt or 1), g.row.id)):
        cell = g.session.started.get("cell") or {}
        epoch = max(1, int(g.row.attempt or 1))
        name = sample_id(g.row.scenario, epoch, str(cell["step"]) if int(cell.get("steps") or 1) > 1 and cell.get("step") else None)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:  # a reparse shares its session's place: numbered after it, in id order
            name = f"{name}~{seen[name]}"
        out.append(_sample(g, name, epoch))
    return out


def _sample(g: Graded, sample_id: str, epoch: int) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput

    s = g.session
    model = model_of(s)
    start = min((a.at for a in s.actions if a.at), default=g.row.started_at or 0.0)
    end = max((a.at for a in s.actions if a.at), default=start)
    render = _Render(s, model, start)
    messages, events = render.thread(render.conv.main, None)
    usage = _usage(s)
    error = None
    if not s.finished:  # killed with its run, or still running: nothing it did was judged whole
        error = EvalError(message="the harness never finished (its run was killed, or is still running)", traceback="", traceback_ansi="")
    elif not harness_ok(s):
        error = EvalError(message=f"the harness ended {s.status}: " + ("; ".join(s.errors[:3]) or "no error message"), traceback="", traceback_ansi="")
    return EvalSample(
        id=sample_id,
        epoch=epoch,
        input=s.prompt or "",
        target="",
        messages=messages,
        output=ModelOutput.from_content(model, s.final_output or ""),
        scores=_scores(s, g.grading) or None,
        metadata={
            "session_id": g.row.id, "run_id": g.row.run_id, "scenario": g.row.scenario, "attempt": g.row.attempt,
            "harness": s.harness, "model": s.model, "status": s.status, "cell_id": g.row.cell_id,
            "metrics": s.metrics.to_dict(), "subagents": {t: sub.to_dict() for t, sub in s.subagents.items()},
            **({"task": task} if (task := task_ref(s)) is not None else {}),
            **({"outcome": g.grading.outcome} if g.grading.outcome is not None else {}),
        },
        events=events,
        model_usage={model: usage} if usage is not None else {},
        started_at=_iso(start),
        completed_at=_iso(end),
        total_time=(s.metrics.wall_ms / 1000) if s.metrics.wall_ms is not None else max(0.0, end - start),
        error=error,
    )


class _Render:
    """A session's threads as Inspect messages (the main thread's) and events (every thread's)."""

    def __init__(self, session: Session, model: str, start: float):
        self.conv = conversation(session)
        self.model, self.start = model, start

    def _when(self, at: float) -> dict[str, Any]:
        if not at:
            return {}
        return {"timestamp": datetime.fromtimestamp(at, UTC), "working_start": max(0.0, at - self.start)}

    def thread(self, t: Thread, span: str | None) -> tuple[list[Any], list[Any]]:
        from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
        from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ContentReasoning, ContentText, GenerateConfig, ModelOutput
        from inspect_ai.tool import ToolCall, ToolCallError

        messages: list[Any] = []
        events: list[Any] = []
        for step in t.steps:
            when = self._when(step.at)
            if step.source == "user":
                messages.append(ChatMessageUser(content=step.text))
                continue
            if step.source == "system":
                events.append(InfoEvent(source="benchtape", data={"error": step.text, **{k: v for k, v in step.error.data.items() if k != "message"}} if step.error else step.text, span_id=span, **when))
                continue
            thinking = step.thinking.data.get("text") if step.thinking is not None else None
            content: Any = [ContentReasoning(reasoning=thinking), ContentText(text=step.text)] if isinstance(thinking, str) and thinking else step.text
            calls = [ToolCall(id=u.call_id, function=u.tool, arguments=u.input) for u in step.uses]
            said = ChatMessageAssistant(content=content, tool_calls=calls or None, model=self.model)
            events.append(ModelEvent(model=self.model, input=list(messages), tools=[], tool_choice="auto", config=GenerateConfig(), output=ModelOutput(model=self.model, choices=[ChatCompletionChoice(message=said, stop_reason="tool_calls" if calls else "stop")]), span_id=span, **when))
            messages.append(said)
            for use in step.uses:
                error = ToolCallError("unknown", use.output_text or "the tool reported an error") if use.is_error else None
                agent_span = None
                if use.spawned is not None:
                    child = self.conv.threads[use.spawned]
                    agent_span = f"agent:{child.thread}"
                    events.append(SpanBeginEvent(id=agent_span, parent_id=span, type="agent", name=child.agent or "subagent", span_id=span, **when))
                    events.extend(self.thread(child, agent_span)[1])
                    events.append(SpanEndEvent(id=agent_span, span_id=span, **self._when(use.result.at if use.result is not None else step.at)))
                events.append(ToolEvent(id=use.call_id, function=use.tool, arguments=use.input, result=use.output_text or "", error=error, agent=self.conv.threads[use.spawned].agent if use.spawned else None, agent_span_id=agent_span, span_id=span, **when))
                if use.result is not None:
                    messages.append(ChatMessageTool(content=use.output_text or "", tool_call_id=use.call_id, function=use.tool, error=error))
            for orphan in step.orphans:
                messages.append(ChatMessageTool(content=str(orphan.data.get("output") or ""), tool_call_id=str(orphan.data.get("call_id")), error=ToolCallError("unknown", "error") if orphan.data.get("is_error") else None))
        for child in self.conv.children_of(t.thread):
            if child.spawn is None:  # a thread nobody said it spawned: its events in a span of its own
                agent_span = f"agent:{child.thread}"
                events.append(SpanBeginEvent(id=agent_span, parent_id=span, type="agent", name=child.agent or "subagent", span_id=span))
                events.extend(self.thread(child, agent_span)[1])
                events.append(SpanEndEvent(id=agent_span, span_id=span))
        return messages, events


def _scores(session: Session, grading: Grading) -> dict[str, Any]:
    """One score per verdict of the latest grading (any verdict by its name: a check's, a task
    cell's `task:verify`), and the scenario's outcome ({} when never graded)."""
    from inspect_ai.scorer import Score

    verdicts = grading.verdicts
    if not verdicts:
        return {}
    outcome = session_status(session, verdicts)
    cell = grading.outcome or {}
    said = scenario_said(outcome)
    if cell:
        said += f"; the cell's outcome: {cell['outcome']}" + (f" ({cell['reason']})" if cell.get("reason") else "")
    out: dict[str, Any] = {SCENARIO_SCORE: Score(value=1.0 if outcome == "pass" else 0.0, answer=cell.get("outcome") or outcome, explanation=said, metadata={"outcome": outcome, "grading_id": grading.grading_id, **({"cell_outcome": cell["outcome"], "cell_reason": cell.get("reason")} if cell else {})})}
    for name, v in zip(unique_names(verdicts, frozenset({SCENARIO_SCORE})), verdicts):
        found = facts(v)
        answer = found.get("outcome") if isinstance(found.get("outcome"), str) else None
        out[name] = Score(value=float(v["score"]), answer=answer, explanation=f"{v['status']}: {v.get('reason') or ''}".rstrip(": "), metadata={"status": v["status"], "pass": v["pass"], "type": v["type"], "check_path": v["check_path"], "readout": v["readout"], **found})
    return out


def _results(samples: list[Any]) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    values: dict[str, list[float]] = {}
    for s in samples:
        for name, score in (s.scores or {}).items():
            values.setdefault(name, []).append(float(score.value))
    scores = []
    for name, got in values.items():
        metric = "accuracy" if name == SCENARIO_SCORE else "mean"
        scores.append(EvalScore(name=name, scorer=name, scored_samples=len(got), unscored_samples=len(samples) - len(got), metrics={metric: EvalMetric(name=metric, value=sum(got) / len(got))}))
    return EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores)


def _usage(session: Session) -> Any:
    from inspect_ai.model import ModelUsage

    from benchtape.replay.timeline import spent

    m = session.metrics
    if m.tokens_in is None and m.tokens_out is None and m.cost_usd is None:
        return None
    total = sum(v for v in (m.tokens_in, m.tokens_out, m.cache_read_tokens, m.cache_write_tokens) if v is not None)
    cost = spent(session)  # a scripted model spent nothing, as compare prices it
    return ModelUsage(input_tokens=m.tokens_in or 0, output_tokens=m.tokens_out or 0, total_tokens=total, input_tokens_cache_read=m.cache_read_tokens, input_tokens_cache_write=m.cache_write_tokens, total_cost=cost)


def _total_usage(samples: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in samples:
        for model, usage in (s.model_usage or {}).items():
            out[model] = out[model] + usage if model in out else usage
    return out


def _epoch(iso: str) -> float:
    """An ISO 8601 time as `_iso` writes it, back to seconds since the epoch."""
    return datetime.fromisoformat(iso).timestamp()


def _iso(at: float) -> str | None:
    """ISO 8601 to the second, as Inspect writes its times (and names its files by them)."""
    return datetime.fromtimestamp(at, UTC).replace(microsecond=0).isoformat() if at else None


def _file_part(text: str) -> str:
    """A task name as a part of Inspect's file name, which `_` separates."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-") or "benchtape"
