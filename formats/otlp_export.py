"""Stored sessions as OpenTelemetry traces under the GenAI semantic conventions, so the
observability tools teams already run (Phoenix, Langfuse, Jaeger, Grafana Tempo) show benchtape's
runs beside their own agents' traces.

Built with the OpenTelemetry SDK and its OTLP/HTTP exporter (the optional extra
`benchtape[otlp]`, imported only here): the spans are made by the SDK's tracer with the times
the actions were recorded at, collected in memory, then handed to `OTLPSpanExporter` (a
receiver) or encoded by the exporter's own protobuf encoder into OTLP/JSON (a file). One trace
per session, its ids derived from the session's id, so exporting a session twice gives the same
trace (a receiver that keeps span ids unique keeps it once):

- an `invoke_agent {harness}` span for the session (the agent's name, provider, model, the
  session's id as the conversation id, its token totals: input tokens counting cached ones, as
  the convention asks, and the cache reads and writes among them; its cost and status);
- per agent turn a `chat {model}` span (the turn's text and tool calls as output messages, its
  finish reason), and per tool call an `execute_tool {tool}` span (the tool's name, call id,
  arguments and result; a failing call's status is ERROR), both children of their agent's span;
- a subagent is an `invoke_agent {type}` span under the `execute_tool` span that spawned it,
  holding its own turns and calls;
- each verdict of the latest grading is a `gen_ai.evaluation.result` event on the session's
  span (name, score, label = its status, explanation = its reason), and `scenario` (1 when the
  scenario passed) with the cell outcome as its label.

Every text goes through the redactor as everywhere else (known secret values of this
environment, credential shapes); long texts are cut at TEXT_LIMIT characters.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import orjson

from benchtape.core.canonical import SUBAGENT
from benchtape.core.errors import BadInput
from benchtape.core.model import Session
from benchtape.core.redact import redactor, secret_values
from benchtape.core.version import VERSION
from benchtape.formats.conversation import Step, Thread, Use, conversation
from benchtape.formats.grades import Grading, scenario_said, unique_names
from benchtape.replay.grading import harness_ok
from benchtape.replay.timeline import session_status, spent
from benchtape.store.database import SessionRow

INSTALL = "pip install 'benchtape[otlp]'"
PROVIDERS = {"claude-code": "anthropic", "codex": "openai"}  # gen_ai.provider.name's well-known values; others named by their harness
TEXT_LIMIT = 16_384
EVALUATION_EVENT = "gen_ai.evaluation.result"
SCENARIO_SCORE = "scenario"
TRACES_PATH = "/v1/traces"


@dataclass
class Item:
    """One session to export: its row, its projection, its latest grading, its setup's label."""

    row: SessionRow
    session: Session
    grading: Grading
    setup: str | None = None


def require_otlp() -> None:
    """BadInput naming the install command when the optional extra is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise BadInput("exporting OpenTelemetry traces needs the OpenTelemetry SDK and its OTLP exporter, which are not installed", fix=f"install the extra: {INSTALL}") from None


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of an endpoint: as given when it names a path, else the base
    with `/v1/traces` (as OTEL_EXPORTER_OTLP_ENDPOINT is read)."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadInput(f"--endpoint {endpoint!r} is not an http(s) URL", fix="give the receiver's OTLP/HTTP address, e.g. http://127.0.0.1:6006 (Phoenix) or http://127.0.0.1:4318")
    return endpoint if parts.path not in ("", "/") else endpoint.rstrip("/") + TRACES_PATH


def spans(items: list[Item], project: Callable[[Item], str]) -> list[Any]:
    """The finished SDK spans (`ReadableSpan`) of the sessions, one trace each, under each
    one's project (a resource each: Phoenix files a trace by its resource's project, so a
    session's traces land in one project whatever else was exported with it)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    ids = _session_ids()
    memory = InMemorySpanExporter()
    redact = redactor(secret_values(dict(os.environ)))
    by_project: dict[str, list[Item]] = {}
    for item in items:
        by_project.setdefault(project(item), []).append(item)
    for name, group in by_project.items():
        resource = Resource.create({"service.name": "benchtape", "service.version": VERSION, "openinference.project.name": name})
        provider = TracerProvider(resource=resource, id_generator=ids)
        provider.add_span_processor(SimpleSpanProcessor(memory))
        tracer = provider.get_tracer("benchtape.formats.otlp", VERSION)
        for item in group:
            ids.seed(item.row.id)
            _Session(tracer, item, redact).emit()
        provider.shutdown()
    return list(memory.get_finished_spans())


def send(found: list[Any], endpoint: str) -> None:
    """The spans to a receiver over OTLP/HTTP (protobuf); BadInput naming it when it refuses them.
    The exporter's own settings hold (OTEL_EXPORTER_OTLP_TIMEOUT, its headers and certificates)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = traces_url(endpoint)
    exporter = OTLPSpanExporter(endpoint=url)
    heard: list[str] = []
    try:
        with _exporter_heard(heard):
            for start in range(0, len(found), 512):
                heard.clear()  # this batch's tries alone: an earlier batch's retries that ended well are not this failure's
                if exporter.export(found[start : start + 512]) is not SpanExportResult.SUCCESS:
                    raise BadInput(f"the OTLP receiver at {url} did not take the traces{_why(heard)}", fix="check that the receiver runs and takes OTLP/HTTP protobuf at that address")
    finally:
        exporter.shutdown()


def _why(heard: list[str]) -> str:
    """What the exporter said of the failure: the reason its last retry gave (a refused
    connection), and how many tries it made; else its last word."""
    reasons = [m.group(1) for m in (re.match(r"Transient error (.*) encountered while exporting", line, re.DOTALL) for line in heard) if m]
    if reasons:
        return f" ({len(reasons) + 1} tries, the last {reasons[-1][:300]})"
    return f" ({heard[-1][:300]})" if heard else " (unreachable, or it refused them)"


class _Heard(logging.Handler):
    def __init__(self, heard: list[str]) -> None:
        super().__init__()
        self.heard = heard

    def emit(self, record: logging.LogRecord) -> None:
        self.heard.append(record.getMessage())


@contextlib.contextmanager
def _exporter_heard(heard: list[str]) -> Iterator[None]:
    """The exporter's own log lines (each retry's "Transient error …", then its failure) kept,
    not printed: they went to stderr raw, seconds before benchtape's one message, which now
    ends with the last of them."""
    logger = logging.getLogger("opentelemetry.exporter.otlp")
    handler, propagate = _Heard(heard), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def otlp_json(found: list[Any]) -> bytes:
    """The spans as OTLP/JSON: one `ExportTraceServiceRequest` (what an OTLP/HTTP JSON receiver
    takes, and what the collector's file exporter writes a line of), encoded by the exporter's
    own protobuf encoder, ids in hex as the OTLP/JSON mapping wants them."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    doc = MessageToDict(encode_spans(found))
    for resource in doc.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex(link[key])
    return orjson.dumps(doc) + b"\n"


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def _session_ids() -> Any:
    """An SDK `IdGenerator` whose trace and span ids derive from the session's id (and the span's
    place in its trace), so one session always exports as the same trace."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class SessionIds(IdGenerator):
        def __init__(self) -> None:
            self._seed, self._n = "", 0

        def seed(self, session_id: str) -> None:
            self._seed, self._n = session_id, 0

        def is_trace_id_random(self) -> bool:
            return False

        def generate_trace_id(self) -> int:
            return int(hashlib.sha256(f"trace\0{self._seed}".encode()).hexdigest()[:32], 16) or 1

        def generate_span_id(self) -> int:
            self._n += 1
            return int(hashlib.sha256(f"span\0{self._seed}\0{self._n}".encode()).hexdigest()[:16], 16) or 1

    return SessionIds()


def _ns(at: float) -> int:
    return int(at * 1e9)


class _Session:
    """One session's spans: its agent's span, each thread's turns and calls, its verdicts as events."""

    def __init__(self, tracer: Any, item: Item, redact: Callable[[str], str]):
        self.tracer, self.item, self.redact = tracer, item, redact
        s = item.session
        self.session = s
        self.conv = conversation(s)
        self.canonical = {(c.thread, c.call_id): c.canonical.action for c in s.calls}  # each call's canonical action, as every reader derives it (core/canonical.py)
        self.provider = PROVIDERS.get(s.harness or "", s.harness or "unknown")
        self.model = s.model or "default"
        times = [a.at for a in s.actions if a.at]
        self.start = min(times, default=item.row.started_at or 0.0)
        self.end = max(times, default=self.start)

    def text(self, value: Any) -> str:
        text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
        text = self.redact(text)
        return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f"… [{len(text) - TEXT_LIMIT} more characters in benchtape's store]"

    def common(self) -> dict[str, Any]:
        return {"gen_ai.provider.name": self.provider, "gen_ai.conversation.id": self.item.row.id}

    def emit(self) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        s, row = self.session, self.item.row
        m = s.metrics
        attrs: dict[str, Any] = {
            **self.common(),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": s.harness or "unknown",
            "gen_ai.agent.id": row.id,
            "gen_ai.request.model": self.model,
            "gen_ai.response.model": self.model,
            "gen_ai.usage.input_tokens": _input_tokens(m),
            "gen_ai.usage.output_tokens": m.tokens_out,
            "gen_ai.usage.cache_read.input_tokens": m.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": m.cache_write_tokens,
            "gen_ai.input.messages": self.text([{"role": "user", "parts": [{"type": "text", "content": s.prompt or ""}]}]),
            "gen_ai.output.messages": self.text([{"role": "assistant", "parts": [{"type": "text", "content": s.final_output or ""}], "finish_reason": "stop"}]),
            "benchtape.session.id": row.id,
            "benchtape.run.id": row.run_id,
            "benchtape.scenario": row.scenario,
            "benchtape.attempt": row.attempt,
            "benchtape.harness": s.harness,
            "benchtape.status": s.status,
            "benchtape.cost_usd": spent(s),  # a scripted model spent nothing, as compare prices it
            "benchtape.tokens_in": m.tokens_in,  # benchtape's count: input tokens outside the cache
            "benchtape.setup": self.item.setup,
            "benchtape.cell.id": row.cell_id,
        }
        task = s.started.get("task")
        if isinstance(task, dict) and task.get("id"):
            attrs["benchtape.task.id"], attrs["benchtape.task.kind"] = str(task["id"]), str(task.get("kind") or "")
        root = self.tracer.start_span(f"invoke_agent {s.harness or 'unknown'}", kind=SpanKind.INTERNAL, attributes=_clean(attrs), start_time=_ns(self.start))
        self.thread(self.conv.main, root)
        self.evaluations(root)
        if s.finished and not harness_ok(s):
            root.set_attribute("error.type", s.status or "error")
            root.set_status(Status(StatusCode.ERROR, self.text("; ".join(s.errors[:3]) or f"the harness ended {s.status}")))
        root.end(end_time=_ns(self.end))

    def thread(self, t: Thread, span: Any, began: float | None = None) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

        ctx = set_span_in_context(span)
        asked = began  # when the model was last handed something to answer (a prompt, tool results; a subagent: its spawn)
        for step in t.steps:
            if step.source == "system":
                span.add_event("exception", _clean({"exception.type": "benchtape.error", "exception.message": self.text(step.text), "benchtape.thread": t.thread}), timestamp=_ns(step.at or self.start))
                continue
            if step.source != "agent":
                asked = step.at or asked
                continue
            self.chat(step, t, ctx, asked)
            asked = None
            for use in step.uses:
                start = use.action.at or step.at or self.start
                end = max(start, use.result.at if use.result is not None and use.result.at else start)
                if use.spawned is not None:
                    end = max(end, self._thread_end(self.conv.threads[use.spawned]))
                asked = max(asked or end, end)
                tool = self.tracer.start_span(f"execute_tool {use.tool}", context=ctx, kind=SpanKind.INTERNAL, attributes=_clean(self.tool_attrs(use, t)), start_time=_ns(start))
                if use.is_error:
                    tool.set_attribute("error.type", "tool_error")
                    tool.set_status(Status(StatusCode.ERROR, self.text(use.output_text or "the tool reported an error")[:512]))
                if use.spawned is not None:
                    self.subagent(self.conv.threads[use.spawned], tool, start, end)
                tool.end(end_time=_ns(end))
        for child in self.conv.children_of(t.thread):
            if child.spawn is None:  # a thread nobody said it spawned: its span under its parent's agent
                at = min((st.at for st in child.steps if st.at), default=self.start)
                self.subagent(child, span, at, self._thread_end(child))

    def chat(self, step: Step, t: Thread, ctx: Any, asked: float | None) -> None:
        """The model call that produced this step: from when the model was handed what it
        answers (`asked`: the prompt, or the last tool result before; else the step itself) to
        the step's last action. A step's own actions share one time, so a span of them alone
        lasted 0 ms, which no model call does."""
        from opentelemetry.trace import SpanKind

        own = [a for a in (step.thinking, step.message, step.final) if a is not None] + [u.action for u in step.uses]
        answered = min((a.at for a in own if a.at), default=step.at or self.start)
        start = asked if asked and asked <= answered else answered
        end = max((a.at for a in own if a.at), default=answered)
        parts: list[dict[str, Any]] = []
        if step.thinking is not None and isinstance(step.thinking.data.get("text"), str):
            parts.append({"type": "reasoning", "content": step.thinking.data["text"]})
        if step.text:
            parts.append({"type": "text", "content": step.text})
        parts += [{"type": "tool_call", "id": u.call_id, "name": u.tool, "arguments": u.input} for u in step.uses]
        finish = "tool_call" if step.uses else "stop"
        attrs = {
            **self.common(),
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": self.model,
            "gen_ai.response.model": self.model,
            "gen_ai.response.finish_reasons": [finish],
            "gen_ai.output.messages": self.text([{"role": "assistant", "parts": parts, "finish_reason": finish}]),
            "benchtape.thread": t.thread,
        }
        span = self.tracer.start_span(f"chat {self.model}", context=ctx, kind=SpanKind.CLIENT, attributes=_clean(attrs), start_time=_ns(start))
        span.end(end_time=_ns(end))

    def tool_attrs(self, use: Use, t: Thread) -> dict[str, Any]:
        return {
            **self.common(),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": use.tool,
            "gen_ai.tool.call.id": use.call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": self.text(use.input),
            "gen_ai.tool.call.result": self.text(use.output_text) if use.output_text is not None else None,
            "benchtape.thread": t.thread,
            "benchtape.canonical": self.canonical.get((t.thread, use.call_id)) or (SUBAGENT.action if use.spawned else None),  # was read from a `canonical` field no call has: never sent
        }

    def subagent(self, child: Thread, parent: Any, start: float, end: float) -> None:
        from opentelemetry.trace import SpanKind, set_span_in_context

        sub = self.session.subagents.get(child.thread)
        attrs = {
            **self.common(),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": child.agent or "subagent",
            "gen_ai.agent.id": f"{self.item.row.id}/{child.thread}",
            "gen_ai.request.model": self.model,
            "gen_ai.input.messages": self.text([{"role": "user", "parts": [{"type": "text", "content": sub.prompt or ""}]}]) if sub is not None and sub.prompt else None,
            "gen_ai.output.messages": self.text([{"role": "assistant", "parts": [{"type": "text", "content": sub.output}]}]) if sub is not None and sub.output else None,
            "benchtape.thread": child.thread,
        }
        span = self.tracer.start_span(f"invoke_agent {child.agent or 'subagent'}", context=set_span_in_context(parent), kind=SpanKind.INTERNAL, attributes=_clean(attrs), start_time=_ns(start))
        self.thread(child, span, start)
        span.end(end_time=_ns(max(end, start)))

    def _thread_end(self, t: Thread) -> float:
        times = [a.at for st in t.steps for a in (st.thinking, st.message, st.final, st.user, st.error) if a is not None and a.at]
        times += [x.at for st in t.steps for u in st.uses for x in (u.action, u.result) if x is not None and x.at]
        for child in self.conv.children_of(t.thread):
            times.append(self._thread_end(child))
        return max(times, default=self.start)

    def evaluations(self, span: Any) -> None:
        """Each verdict of the latest grading, and the scenario's outcome, as `gen_ai.evaluation.result` events."""
        grading = self.item.grading
        verdicts = grading.verdicts
        if not verdicts:
            return
        at = _ns(self.end)
        outcome = session_status(self.session, verdicts)
        cell = grading.outcome or {}
        said = scenario_said(outcome)
        if cell:
            said += f"; the cell's outcome: {cell['outcome']}" + (f" ({cell['reason']})" if cell.get("reason") else "")
        common = {"gen_ai.response.id": self.item.row.id, "benchtape.grading.id": grading.grading_id}
        span.add_event(EVALUATION_EVENT, _clean({**common, "gen_ai.evaluation.name": SCENARIO_SCORE, "gen_ai.evaluation.score.value": 1.0 if outcome == "pass" else 0.0, "gen_ai.evaluation.score.label": cell.get("outcome") or outcome, "gen_ai.evaluation.explanation": self.text(said)}), timestamp=at)
        for name, v in zip(unique_names(verdicts, frozenset({SCENARIO_SCORE})), verdicts):
            attrs = {
                **common,
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": float(v["score"]),
                "gen_ai.evaluation.score.label": str(v["status"]),
                "gen_ai.evaluation.explanation": self.text(v.get("reason") or ""),
                "benchtape.check.path": v["check_path"],
                "benchtape.check.type": v["type"],
                "benchtape.check.pass": bool(v["pass"]),
            }
            span.add_event(EVALUATION_EVENT, _clean(attrs), timestamp=at)


def _input_tokens(m: Any) -> int | None:
    """`gen_ai.usage.input_tokens`, which the convention says SHOULD include every input token,
    cached ones too (cache reads and writes are parts of it); benchtape's `tokens_in` counts only
    those outside the cache, so the cache's are added back. Unknown stays absent, never 0."""
    if m.tokens_in is None:
        return None
    return int(m.tokens_in + (m.cache_read_tokens or 0) + (m.cache_write_tokens or 0))


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes OpenTelemetry takes: None left out (an unknown is absent, never zero)."""
    return {k: v for k, v in attrs.items() if v is not None}
