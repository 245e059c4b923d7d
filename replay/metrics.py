"""The bench's declared metrics (`metrics:`, §1.9, and `derivedMetrics:`), measured over a
graded session: the report's numeric schema.

A declared metric is a question the bench asks of each session, answered when the session
is graded: sources that read the session (`session.cost`, `session.steps.all`, …) read the
projection; sources that read checks (`check.score`, `check.pass_rate`, `check.evidence`)
and every derived metric read the grading's verdicts. So the values belong to the grading,
as verdicts do (stored per grading, never in the session's recorded stream): a regrade with
a new `metrics:` block measures again without touching what was recorded.

Unknown is never zero: a value a session cannot give (no cost reported, a subagent that
never spawned) is None (`n/a`), and aggregates skip it (`mean`/`min`/`max` of nothing is
missing, `sum` of nothing 0). Per session, a `check.*` source aggregates that session's
checks with the metric's `aggregate`; over a run, every metric aggregates its sessions'
values. Pure functions of a Session and its verdicts: no store, no sandbox.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from benchtape.core.model import Session
from benchtape.replay.document import check_name

if TYPE_CHECKING:
    from benchtape.store.views import BrowsingStore, GradingStore

# With no `metrics:` block, madbench reports cost, duration, tokens and turns.
BUILT_IN: tuple[dict[str, Any], ...] = (
    {"name": "cost", "source": "session.cost", "aggregate": "sum", "unit": "USD", "better": "lower"},
    {"name": "duration", "source": "session.latency", "aggregate": "mean", "unit": "ms", "better": "lower"},
    {"name": "tokens", "source": "session.tokens", "aggregate": "sum", "unit": "tokens", "better": "lower"},
    {"name": "turns", "source": "session.turns", "aggregate": "mean", "unit": "turns", "better": "lower"},
)
DEFAULT_AGGREGATE = "mean"
SPEC_KEYS = ("name", "source", "aggregate", "unit", "better", "key", "check")


def schema(declared: Sequence[Mapping[str, Any]] | None, derived: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The metric specs a report lists (`metric_specs`): the declared ones (else the built-in
    schema), each with its aggregate made explicit, then the derived ones."""
    specs = [dict(m) for m in (declared if declared is not None else BUILT_IN)]
    out = [{**{k: m.get(k) for k in SPEC_KEYS if m.get(k) is not None}, "aggregate": m.get("aggregate") or DEFAULT_AGGREGATE} for m in specs]
    out += [{"name": d["name"], "derived": d["value"], "aggregate": DEFAULT_AGGREGATE} for d in derived]
    return out


@dataclass
class Measured:
    """One session's values by metric name (None: missing), and why any could not be computed."""

    values: dict[str, float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.values, "errors": self.errors}


def verdict_view(v: Any) -> dict[str, Any]:
    """A verdict as this module reads it, whether fresh (replay.grading.Verdict) or stored (a dict)."""
    if isinstance(v, Mapping):
        return {"type": v.get("type"), "metric": v.get("metric"), "status": v.get("status"), "score": v.get("score"), "evidence": v.get("evidence") or {}, "readout": bool(v.get("readout"))}
    return {"type": v.check.type, "metric": v.check.metric, "status": v.result.status, "score": v.result.score, "evidence": v.result.evidence or {}, "readout": bool(v.check.readout)}


def measure(declared: Sequence[Mapping[str, Any]] | None, derived: Sequence[Mapping[str, Any]], session: Session, verdicts: Iterable[Any]) -> Measured:
    """Every metric of the schema over one graded session."""
    views = [verdict_view(v) for v in verdicts]
    out = Measured()
    for spec in schema(declared, ()):
        try:
            out.values[spec["name"]] = _finite(_session_value(spec, session, views))
        except (TypeError, ValueError) as exc:  # a check's evidence that is not a number, say
            out.values[spec["name"]] = None
            out.errors[spec["name"]] = str(exc)
    scores = _scores(views)
    for d in derived:
        out.values[d["name"]], why = _derived(d, scores)
        if why:
            out.errors[d["name"]] = why
    return out


def _finite(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def aggregate(name: str, values: Iterable[float | None]) -> float | None:
    """sum / mean / max / min over the values that are known. Of no values at all, `sum` is
    0 and the others are missing; of values every one of which is missing, every aggregate
    is missing (a total of unknown costs is unknown, never $0)."""
    values = list(values)
    known = [v for v in values if v is not None]
    if not known:
        return 0.0 if name == "sum" and not values else None
    if name == "sum":
        return float(sum(known))
    if name == "max":
        return max(known)
    if name == "min":
        return min(known)
    return sum(known) / len(known)


# ---------------------------------------------------------------- the sources


def _session_value(spec: Mapping[str, Any], s: Session, verdicts: list[dict[str, Any]]) -> Any:
    source = spec["source"]
    m = s.metrics
    if source == "session.latency":
        return m.latency_ms
    if source == "session.cost":  # what the session spent, as sessions and compare say it: a scripted model's pretend tokens cost nothing
        from benchtape.spec.pricing import reported_cost

        return reported_cost(s.model, m.cost_usd)
    if source == "session.tokens":
        return m.tokens
    if source == "session.prompt_tokens":
        return m.tokens_in
    if source == "session.output_tokens":
        return m.tokens_out
    if source in ("session.steps", "session.steps.main"):
        return m.step_count
    if source in ("session.steps.all", "session.tool_calls"):
        return len(s.calls)
    if source == "session.steps.agent":
        key = spec.get("key")
        threads = [t for t, sub in s.subagents.items() if t == key or sub.agent == key]
        return sum(len(s.subagents[t].calls) for t in threads) if threads else None  # never spawned: missing, not 0
    if source == "session.turns":
        return len(s.turns) if s.turns else None
    if source == "session.model_requests":
        return None  # no harness reports a request count benchtape can read, and madbench has no fallback
    if source in ("session.plugins_reported", "session.plugins_failed", "session.skills_registered"):
        from benchtape.checks.environment import reported_counts

        counts = reported_counts(s)
        return None if counts is None else counts[source.split(".", 1)[1]]
    if source == "check.pass_rate":
        graded = [v for v in verdicts if v["status"] in ("PASS", "FAIL")]
        return sum(v["status"] == "PASS" for v in graded) / len(graded) if graded else None
    if source == "check.score":
        return aggregate(spec.get("aggregate") or DEFAULT_AGGREGATE, [v["score"] for v in _checks(spec, verdicts) if v["status"] in ("PASS", "FAIL")])
    if source == "check.evidence":
        return aggregate(spec.get("aggregate") or DEFAULT_AGGREGATE, [_number(v["evidence"].get(spec["key"]), spec) for v in _checks(spec, verdicts) if spec["key"] in v["evidence"]])
    if source in ("event.duration", "action.duration"):
        return aggregate(spec.get("aggregate") or DEFAULT_AGGREGATE, _call_durations(s))
    if source in ("event.tokens", "action.tokens"):
        return None  # benchtape records tokens per session (the harness's totals), not per action
    raise ValueError(f"unknown source {source!r}")


def _checks(spec: Mapping[str, Any], verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts a check-scoped metric reads: `check:` names one (its `metric:` name, or its type)."""
    wanted = spec.get("check")
    if wanted is None:
        return verdicts
    return [v for v in verdicts if check_name(v["metric"], v["type"]) == wanted or v["type"] == wanted]


def _number(value: Any, spec: Mapping[str, Any]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"check evidence {spec['key']!r} is {type(value).__name__}, not a number")
    return float(value)


def _call_durations(s: Session) -> list[float | None]:
    """Each main-thread and subagent call's time from its call to its result, in ms."""
    at = {a.seq: a.at for a in s.actions}
    return [(at[c.result_seq] - at[c.seq]) * 1000 for c in s.calls if c.has_result and c.seq in at and c.result_seq in at and at[c.result_seq] >= at[c.seq]]


def _scores(verdicts: list[dict[str, Any]]) -> dict[str, float | None]:
    """Each check's score by its name (`metric:`, else its type): what derived metrics read.
    A check that could not measure (ERROR, NA) has no score."""
    out: dict[str, float | None] = {}
    for v in verdicts:
        out.setdefault(check_name(v["metric"], v["type"]), v["score"] if v["status"] in ("PASS", "FAIL") else None)
    return out


def _derived(d: Mapping[str, Any], scores: Mapping[str, float | None]) -> tuple[float | None, str | None]:
    from benchtape.spec.arith import parse

    expression = parse(d["value"])
    unknown = sorted(expression.names - set(scores))
    if unknown:
        return None, f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not the name of a check of this scenario (a check's name is its `metric:`, else its type); names: {', '.join(sorted(scores)) or 'none'}"
    return expression.evaluate(scores), None




def declares(bench: Any) -> bool:
    """Whether the bench declares metrics of its own (`metrics:` or `derivedMetrics:`): then
    each grading measures and keeps them; the built-in schema reads the session alone."""
    return bench.metrics is not None or bool(bench.derived_metrics)


def grade_metrics(store: GradingStore, grading_id: str, bench: Any, session_id: str, session: Session, verdicts: Iterable[Any]) -> Measured:
    """A graded session's metrics (the bench's schema); kept with the grading when declared."""
    measured = measure(bench.metrics, bench.derived_metrics, session, verdicts)
    if declares(bench):
        store.add_metric_values(grading_id, [(session_id, measured.to_dict())])
    return measured


@dataclass
class Accumulator:
    """A run's values of one metric, as rows go by (no row is kept): enough for sum, mean, min, max."""

    total: float = 0.0
    n: int = 0
    missing: int = 0
    low: float = math.inf
    high: float = -math.inf

    def add(self, value: float | None) -> None:
        if value is None:
            self.missing += 1
            return
        self.total += value
        self.n += 1
        self.low, self.high = min(self.low, value), max(self.high, value)

    def value(self, name: str) -> float | None:
        if not self.n:
            return 0.0 if name == "sum" and not self.missing else None  # as `aggregate`
        if name == "sum":
            return self.total
        return {"max": self.high, "min": self.low}.get(name, self.total / self.n)


def summarize(specs: Sequence[Mapping[str, Any]], accumulators: Mapping[str, Accumulator]) -> dict[str, dict[str, Any]]:
    """The run's value of each metric of the schema: {value, aggregate, n, missing, unit, better}."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        acc = accumulators.get(spec["name"]) or Accumulator()
        agg = spec.get("aggregate") or DEFAULT_AGGREGATE
        out[spec["name"]] = {"value": acc.value(agg), "aggregate": agg, "n": acc.n, "missing": acc.missing, **{k: spec[k] for k in ("unit", "better") if spec.get(k)}}
    return out


def stored_or_built_in(store: BrowsingStore, session_id: str, session: Session) -> dict[str, Any]:
    """What a reader shows of a session's metrics (`show`, the query document's
    `bench_metrics`): the declared ones its newest measuring grading kept, {values, errors,
    grading_id}; else the built-in schema, which the session alone answers (grading_id None)."""
    kept: dict[str, Any] | None = store.metric_values([session_id]).get(session_id)
    if kept is not None:
        return kept
    return {**measure(None, (), session, ()).to_dict(), "grading_id": None}


def by_setup(store: BrowsingStore, members: Iterable[tuple[str, str]]) -> dict[str, dict[str, float | None]]:
    """`compare`'s metric columns: per setup (arm), the mean of each declared metric over the
    cells whose grading measured it ((arm, session id) pairs); setups none measured are absent."""
    members = list(members)
    kept = store.metric_values([sid for _, sid in members])
    values: dict[str, dict[str, list[float | None]]] = {}
    for arm, sid in members:
        for name, value in ((kept.get(sid) or {}).get("values") or {}).items():
            values.setdefault(arm, {}).setdefault(name, []).append(value)
    return {arm: {name: aggregate("mean", vs) for name, vs in named.items()} for arm, named in values.items()}
