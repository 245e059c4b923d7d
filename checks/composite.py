"""Composite checks: one verdict out of child checks (`checks:`), counted as ONE check
at the scenario level, which is where partial credit belongs.

Children are built when the composite is built, recursively, so a composite nested in a
composite keeps its own children (madbench 0.10 lost them) and a bad grandchild is
refused up front. A child that ERRORs makes the composite an ERROR naming it: a verdict
computed from a check that measured nothing would be a guess. A child that is NOT
APPLICABLE (latency/cost under the negative control) is left out, and a composite whose
children are all not applicable is itself not applicable.

Weights: `weight:` on a child (default 1.0) counts everywhere; `args.weights` (or a
mapping `value`), type → multiplier, overrides it for select-best, max-score, compare.

One session (a scenario without `providers:`, or with one):
- `select-best` always passes and scores the best weighted child;
- `max-score` passes when the best child scores above 0 (or reaches `threshold`);
  `args.method` (average | sum) only shapes the reported aggregate;
- `compare` has no second provider to beat: the one provider's weighted average is
  compared with an absent opponent's 0, so it passes when that average is above 0 (or
  reaches `threshold`), never vacuously.

A multi-provider scenario (`providers:` with two or more labels; `ctx.peers` grades a child
on each provider's session, with that session's own workspace): each provider's aggregate
is Σ(score·w)/Σw of its children (`max-score` with `args.method: sum`: Σ(score·w)), and
- `select-best` always passes; the winner is the provider with the best aggregate (the
  first on a tie); score = the winner's;
- `max-score` passes when the winner's aggregate reaches `threshold` (above 0 without one);
  score = the winner's weighted average;
- `compare` passes when the first provider is strictly higher than every other; score =
  the first provider's.
Every session of the scenario gets the same verdict; its evidence has each provider's
aggregate and children. In such a scenario a composite of these three with no children
takes the scenario's non-composite checks (the loader gives them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from benchtape.checks.common import args_of, as_number, score_threshold
from benchtape.checks.registry import Check, CheckConfigError, CheckContext, Evaluator, build, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "Composite"


@dataclass(frozen=True)
class _Child:
    check: Check
    weight: float


@dataclass(frozen=True)
class _Graded:
    child: _Child
    result: Result


def _children(spec: CheckSpec, *, use_weights_map: bool) -> list[_Child]:
    if not spec.checks:
        raise CheckConfigError(f"{spec.type}: no child checks ('checks' is empty); list them under checks:")
    if not use_weights_map and args_of(spec).get("weights") is not None:
        raise CheckConfigError(f"{spec.type}: args.weights is read only by select-best, max-score and compare; put weight: on each child instead")
    overrides = _weights_map(spec) if use_weights_map else {}
    out: list[_Child] = []
    for i, child_spec in enumerate(spec.checks):
        try:
            check = build(child_spec)
        except CheckConfigError as exc:
            raise CheckConfigError(f'{spec.type}: child "{child_spec.type}" (#{i + 1}): {exc}') from exc
        w = overrides.get(child_spec.type, child_spec.weight)
        w = as_number(w, type=spec.type, name=f'weight of child "{child_spec.type}"')
        if w < 0:
            raise CheckConfigError(f'{spec.type}: child "{child_spec.type}" has a negative weight {w:g}')
        out.append(_Child(check, w))
    if sum(c.weight for c in out) <= 0:
        raise CheckConfigError(f"{spec.type}: the children's weights add up to 0, so nothing would count")
    return out


def _weights_map(spec: CheckSpec) -> dict[str, Any]:
    args = args_of(spec)
    raw = args.get("weights")
    if raw is None and isinstance(spec.value, Mapping):
        raw = spec.value
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise CheckConfigError(f"{spec.type}: weights must be a mapping of check type to multiplier")
    types = {c.type for c in spec.checks}
    unknown = sorted(set(raw) - types)
    if unknown:
        raise CheckConfigError(f"{spec.type}: weights name {unknown}, which no child has (children: {sorted(types)})")
    return dict(raw)


def _grade(spec: CheckSpec, children: list[_Child], session: Session, ctx: CheckContext) -> tuple[list[_Graded], Result | None]:
    """Every child's result, and the composite's own ERROR / NA result when one decides it."""
    graded = [_Graded(c, c.check.evaluate(session, ctx)) for c in children]
    for g in graded:
        if g.result.status == "ERROR":
            cause = g.result.evidence.get("unavailable") if isinstance(g.result.evidence, dict) else None
            evidence = {"children": _evidence(graded), **({"unavailable": cause} if cause else {})}  # why it could not measure, carried up
            return graded, Result.error(f'{spec.type}: child "{g.child.check.type}": {g.result.reason}', evidence)
    if all(g.result.status == "NA" for g in graded):
        return graded, Result.not_applicable(f"{spec.type}: every child is not applicable here")
    return graded, None


def _evidence(graded: list[_Graded]) -> list[dict[str, Any]]:
    return [
        {"type": g.child.check.type, "metric": g.child.check.spec.metric, "status": g.result.status, "score": g.result.score, "weight": g.child.weight, "reason": g.result.reason}
        for g in graded
    ]


def _composite(decide: Callable[[CheckSpec, list[_Graded]], Result], *, weights_map: bool, prepare: Callable[[CheckSpec], object] | None = None) -> Callable[[CheckSpec], Evaluator]:
    def builder(spec: CheckSpec) -> Evaluator:
        score_threshold(spec, 1.0)  # a bad threshold is refused now, not at every evaluation
        if prepare is not None:
            prepare(spec)
        children = _children(spec, use_weights_map=weights_map)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            if spec.type in _ACROSS and ctx.peers is not None and len(ctx.peers) > 1:
                return _across_providers(spec, children, ctx.peers)
            graded, decided = _grade(spec, children, session, ctx)
            if decided is not None:
                return decided
            result = decide(spec, [g for g in graded if g.result.status != "NA"])
            return Result(result.status, result.score, result.reason, {**result.evidence, "children": _evidence(graded)})

        return evaluate

    return builder


# ---------------------------------------------------------------- the six


def _assert_set(spec: CheckSpec, graded: list[_Graded]) -> Result:
    threshold = score_threshold(spec, 1.0)
    total = sum(g.child.weight for g in graded)
    passed = sum(g.child.weight for g in graded if g.result.passed)
    ratio = passed / total if total else 0.0
    ok = ratio >= threshold
    n_pass = sum(1 for g in graded if g.result.passed)
    return Result.of(ok, f"{n_pass} of {len(graded)} children passed (weighted {ratio:.3f} {'≥' if ok else '<'} {threshold:g})", {"passed_weight": passed, "total_weight": total, "threshold": threshold}, score=ratio)


def _any_of(spec: CheckSpec, graded: list[_Graded]) -> Result:
    winners = [g.child.check.type for g in graded if g.result.passed]
    best = max(g.result.score for g in graded)
    return Result.of(bool(winners), f"passed: {', '.join(winners)}" if winners else f"none of {len(graded)} children passed", {"passed": winners}, score=best)


def _not_any_of(spec: CheckSpec, graded: list[_Graded]) -> Result:
    offenders = [g.child.check.type for g in graded if g.result.passed]
    best = max(g.result.score for g in graded)
    return Result.of(not offenders, f"forbidden and passed: {', '.join(offenders)}" if offenders else f"none of {len(graded)} children passed", {"passed": offenders}, score=1.0 - best)


def _best(graded: list[_Graded]) -> _Graded:
    """The child with the highest weighted score; the first one on a tie."""
    return max(graded, key=lambda g: g.result.score * g.child.weight)


def _select_best(spec: CheckSpec, graded: list[_Graded]) -> Result:
    b = _best(graded)
    idx = graded.index(b)
    return Result.of(True, f'best child: "{b.child.check.type}" (#{idx + 1}) scored {b.result.score:.3f}', {"best": b.child.check.type, "best_index": idx}, score=b.result.score)


def _method(spec: CheckSpec) -> str:
    method = args_of(spec).get("method", "average")
    if method not in ("average", "sum"):
        raise CheckConfigError(f"{spec.type}: args.method must be average or sum, got {method!r}")
    return str(method)


def _max_score(spec: CheckSpec, graded: list[_Graded]) -> Result:
    method = _method(spec)
    best = max(g.result.score for g in graded)
    weighted = sum(g.result.score * g.child.weight for g in graded)
    total = sum(g.child.weight for g in graded)
    aggregate = weighted if method == "sum" else (weighted / total if total else 0.0)
    threshold = score_threshold(spec, None)
    ok = best >= threshold if threshold is not None else best > 0
    bar = f"≥ {threshold:g}" if threshold is not None else "> 0"
    return Result.of(ok, f"best child score {best:.3f} {bar if ok else 'is not ' + bar}", {"max": best, "aggregate": aggregate, "method": method, "threshold": threshold}, score=best)


def _compare(spec: CheckSpec, graded: list[_Graded]) -> Result:
    total = sum(g.child.weight for g in graded)
    normalized = sum(g.result.score * g.child.weight for g in graded) / total if total else 0.0
    threshold = score_threshold(spec, None)
    ok = normalized >= threshold if threshold is not None else normalized > 0
    bar = f"≥ {threshold:g}" if threshold is not None else "> 0 (an absent opponent scores 0)"
    return Result.of(
        ok,
        f"single session: this provider's weighted score {normalized:.3f} {bar if ok else 'is not ' + bar}",
        {"providers": 1, "normalized": normalized, "threshold": threshold},
        score=normalized,
    )


# ---------------------------------------------------------------- across a scenario's providers


def _across_providers(spec: CheckSpec, children: list[_Child], peers: Mapping[str, Callable[[Check], Result]]) -> Result:
    """The multi-provider forms: every child graded on every provider's session, each
    provider's weighted aggregate, then the type's rule over the aggregates."""
    sums = args_of(spec).get("method", "average") == "sum" and spec.type == "max-score"
    per: dict[str, dict[str, Any]] = {}
    for label, grade in peers.items():
        graded = [_Graded(c, grade(c.check)) for c in children]
        broken = next((g for g in graded if g.result.status == "ERROR"), None)
        if broken is not None:
            return Result.error(f'{spec.type}: provider {label!r}: child "{broken.child.check.type}": {broken.result.reason}', {"provider": label, "children": _evidence(graded)})
        counted = [g for g in graded if g.result.status != "NA"]
        total = sum(g.child.weight for g in counted)
        weighted = sum(g.result.score * g.child.weight for g in counted)
        per[label] = {"aggregate": weighted if sums else (weighted / total if total else 0.0), "normalized": weighted / total if total else 0.0, "children": _evidence(graded)}
    if all(not p["children"] or all(c["status"] == "NA" for c in p["children"]) for p in per.values()):
        return Result.not_applicable(f"{spec.type}: every child is not applicable here")
    labels = list(per)
    winner = max(labels, key=lambda label: per[label]["aggregate"])  # max() keeps the first on a tie
    scores = ", ".join(f"{label} {per[label]['aggregate']:.3f}" for label in labels)
    evidence: dict[str, Any] = {"providers": per, "order": labels, "winner": winner}
    if spec.type == "select-best":
        return Result.of(True, f"best provider: {winner!r} ({scores})", evidence, score=per[winner]["normalized"])
    if spec.type == "max-score":
        threshold = score_threshold(spec, None)
        best = per[winner]["aggregate"]
        ok = best >= threshold if threshold is not None else best > 0
        bar = f"≥ {threshold:g}" if threshold is not None else "> 0"
        return Result.of(ok, f"best provider {winner!r} scored {best:.3f} {bar if ok else 'is not ' + bar} ({scores})", {**evidence, "method": "sum" if sums else "average", "threshold": threshold}, score=min(1.0, per[winner]["normalized"]))
    first = labels[0]
    beaten = [label for label in labels[1:] if per[first]["aggregate"] <= per[label]["aggregate"]]
    ok = not beaten
    why = f"{first!r} scored higher than every other provider" if ok else f"{first!r} is not strictly higher than {', '.join(repr(b) for b in beaten)}"
    return Result.of(ok, f"{why} ({scores})", evidence, score=per[first]["normalized"])


_ACROSS = ("select-best", "max-score", "compare")
_CHILDREN_ARG = {"checks": "the child checks (required; alias assert:)", "weight (on a child)": "its multiplier (default 1.0)"}
_WEIGHTS_ARG = {"args.weights": "type → multiplier, overriding children's weight (a mapping `value` works too)"}
_ERRORS = ("no children", "a child that is refused", "a negative weight, or weights adding up to 0")
_EX_CHILDREN = "\n  - {type: contains, value: PASS}\n  - {type: not-contains, value: FAIL}"

_SPECS = [
    ("assert-set", "the weighted share of passing children reaches `threshold` (default 1.0); score = passed weight / total weight", _assert_set, False, None, {"threshold": "share of weight that must pass (default 1.0)"}, "type: assert-set\nthreshold: 0.5\nchecks:" + _EX_CHILDREN),
    ("any-of", "at least one child passes; score = the best child's score", _any_of, False, None, {}, "type: any-of\nchecks:\n  - {type: contains, value: Write}\n  - {type: contains, value: Edit}"),
    ("not-any-of", "no child passes; score = 1 − the best child's score", _not_any_of, False, None, {}, "type: not-any-of\nchecks:\n  - {type: icontains, value: as an ai}\n  - {type: is-refusal}"),
    ("select-best", "a scoring operation: always passes; one session: score = the best child by score × weight; with `providers:`: the provider with the best weighted aggregate wins, score = its aggregate", _select_best, True, None, _WEIGHTS_ARG, "type: select-best\nchecks:" + _EX_CHILDREN),
    ("max-score", "one session: passes when the best child scores above 0 (or reaches `threshold`), score = that score; with `providers:`: passes when the best provider's aggregate (weighted average, or Σ score × weight with `args.method: sum`) reaches `threshold` (above 0 without one), score = its weighted average", _max_score, True, _method, {**_WEIGHTS_ARG, "args.method": "average (default) or sum: the aggregate", "threshold": "optional bar for the best score (aggregate)"}, "type: max-score\nargs: {method: average}\nchecks:" + _EX_CHILDREN),
    ("compare", "with `providers:`: passes when the first provider's weighted aggregate is strictly higher than every other's, score = the first's; one session: no other provider to beat, so it passes when the weighted average is above 0 (an absent opponent's score) or reaches `threshold`", _compare, True, None, {**_WEIGHTS_ARG, "threshold": "one session: optional bar for the weighted average"}, "type: compare\nchecks:" + _EX_CHILDREN),
]

for _type, _summary, _decide, _weights, _prepare, _args, _example in _SPECS:
    register(
        _type,
        family=FAMILY,
        summary=_summary,
        reads="its children's results",
        args={**_CHILDREN_ARG, **_args},
        example=_example,
        errors=_ERRORS
        + (("args.method other than average or sum",) if _type == "max-score" else ())
        + (("weights naming a type no child has",) if _weights else ("args.weights (only select-best, max-score and compare read it)",)),
    )(_composite(_decide, weights_map=_weights, prepare=_prepare))
