"""The shape of the session document, so a query naming a field it does not have is told so.

JMESPath answers null for a field that does not exist, so `call[].tool` (for `calls`)
prints nothing and exits 0: a typo looks like an empty store. The document's shape is
taken from the real projection (a few synthetic actions folded by `benchtape.core.model` and
laid out by `benchtape.replay.document`), so it cannot drift from what `query` evaluates; parts
whose content is free-form (an action's data, a tool's input, a check's spec) are not
checked below their own name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from benchtape.core.errors import closest


class Any_:
    """Nothing known below here: every field is accepted."""

    def __repr__(self) -> str:
        return "any"


ANY = Any_()


@dataclass(frozen=True)
class Obj:
    keys: dict[str, Any]  # field → shape


@dataclass(frozen=True)
class Map:
    value: Any  # keys are data (subagent thread ids); every value has this shape


@dataclass(frozen=True)
class List:
    item: Any


@dataclass(frozen=True)
class Scalar:
    kind: str  # text | number | boolean


class NoSuchField(Exception):
    def __init__(self, what: str, fix: str):
        super().__init__(what)
        self.what, self.fix = what, fix


# Where the document holds what agents, harnesses and bench authors wrote: any field may be there.
FREE = frozenset({
    "actions[].data", "calls[].input", "calls[].output", "subagents.*.output", "session.params", "session.snapshot",
    "session.staged_snapshot", "session.skills", "session.warnings", "environment.expected", "environment.reported",
    "verdicts[].spec", "verdicts[].evidence", "outcome.diff", "outcome.steps", "bench_metrics",  # bench_metrics: the bench names its metrics
})
# An outcome as Store.outcomes reads it (what replay.evaluate.CellGrader stores; `action_seq`
# only for an outcome an older store appended to the stream), with a value of each field's type.
OUTCOME_SAMPLE = {"outcome": "passed", "reason": "r", "grading_id": "g", "at": 1.0, "cell_id": "c", "source": "live", "diff": {}, "cost_usd": 0.0, "steps": [], "action_seq": 1}
VERDICT_KEYS = ("grading_id", "session_id", "check_path", "type", "metric", "spec", "spec_sha256", "status", "pass", "score", "reason", "evidence", "readout", "created_at")


@lru_cache(maxsize=1)
def document_shape() -> Obj:
    """The session document's shape, from a sample built by the code that builds real ones."""
    from benchtape.core.model import Action, project
    from benchtape.replay.document import document
    from benchtape.store.database import SessionRow

    actions = [
        Action("session.started", {"scenario": "s", "harness": "h", "model": "m", "prompt": "p"}),
        Action("tool.call", {"call_id": "c1", "tool": "Bash", "input": {}}),
        Action("tool.result", {"call_id": "c1", "output": "", "is_error": False}),
        Action("subagent.spawned", {"thread": "t1", "call_id": "c2", "agent": "a", "prompt": "p"}),
        Action("tool.call", {"call_id": "c3", "tool": "Read", "input": {}}, thread="t1"),
        Action("subagent.finished", {"thread": "t1", "output": "o"}, thread="t1"),
        Action("metrics", {"cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0}),
        Action("final_output", {"text": "o"}),
        Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1.0}),
    ]
    for i, a in enumerate(actions, 1):
        a.seq, a.at = i, float(i)
    session = project(actions)
    session.id, session.work_dir = "id", "/w"
    row = SessionRow("id", "run", "s", "cell", 1, "h", "m", {}, "/w", 1.0, "parent", "source")
    doc = document(row, session, [dict.fromkeys(VERDICT_KEYS, "")], outcome=OUTCOME_SAMPLE)
    shape = _shape(doc, "")
    assert isinstance(shape, Obj)
    return shape


def _shape(value: Any, path: str) -> Any:
    if path.lstrip(".") in FREE or value is None:
        return ANY
    if path.lstrip(".") == "subagents":
        return Map(_shape(next(iter(value.values())), "subagents.*") if value else ANY)
    if isinstance(value, dict):
        return Obj({k: _shape(v, f"{path}.{k}") for k, v in value.items()})
    if isinstance(value, list):
        return List(_shape(value[0], f"{path}[]") if value else ANY)
    if isinstance(value, bool):
        return Scalar("boolean")
    if isinstance(value, (int, float)):
        return Scalar("number")
    return Scalar("text")


def check_fields(node: dict[str, Any]) -> None:
    """Walk a parsed expression against the document's shape; NoSuchField names the first field it does not have."""
    _walk(node, document_shape(), "")


def _walk(node: Any, shape: Any, where: str) -> Any:
    """The shape `node` produces from `shape` (ANY when unknown); `where` names the value for messages."""
    if not isinstance(node, dict):
        return ANY
    kind, kids = node.get("type"), node.get("children") or []
    if kind == "field":
        return _field(shape, node["value"], where)
    if kind == "current":
        return shape
    if kind in ("subexpression", "pipe"):  # `a.b.c` is one subexpression of three fields
        for k in kids:
            shape, where = _walk(k, shape, where), _name(k, where)
        return shape
    if kind == "index_expression":
        left = _walk(kids[0], shape, where)
        _not_a_list(left, _name(kids[0], where))
        if len(kids) > 1 and isinstance(kids[1], dict) and kids[1].get("type") == "slice":
            return left
        return left.item if isinstance(left, List) else ANY
    if kind == "flatten":
        inner = _walk(kids[0], shape, where)
        _not_a_list(inner, _name(kids[0], where))
        if isinstance(inner, List) and isinstance(inner.item, List):
            return inner.item
        return inner if isinstance(inner, List) else ANY
    if kind == "projection":
        left = _walk(kids[0], shape, where)
        item = left.item if isinstance(left, List) else ANY
        return List(_walk(kids[1], item, _name(kids[0], where) + "[]") if len(kids) > 1 else item)
    if kind == "value_projection":
        left = _walk(kids[0], shape, where)
        item = left.value if isinstance(left, Map) else ANY
        return List(_walk(kids[1], item, _name(kids[0], where) + ".*") if len(kids) > 1 else item)
    if kind == "filter_projection":
        left = _walk(kids[0], shape, where)
        item = left.item if isinstance(left, List) else ANY
        each = _name(kids[0], where) + "[]"
        if len(kids) > 2:
            _walk(kids[2], item, each)
        return List(_walk(kids[1], item, each))
    if kind == "function_expression":
        args = [_walk(k, shape, where) for k in kids if not (isinstance(k, dict) and k.get("type") == "expref")]
        return _function_result(node.get("value"), args, kids, where)
    if kind in ("multi_select_list", "multi_select_dict", "key_val_pair", "comparator", "and_expression", "or_expression", "not_expression"):
        for k in kids:
            _walk(k, shape, where)
        return ANY
    return ANY  # literals, slices, exprefs, and anything newer: nothing to check


def _function_result(name: str | None, args: list[Any], kids: list[Any], where: str) -> Any:
    """What a function gives back, where it keeps a list's elements (so fields after it are still checked)."""
    first = args[0] if args else ANY
    for k in kids:  # `sort_by(calls, &tool)`: the expression is applied to each element of the list
        if isinstance(k, dict) and k.get("type") == "expref" and isinstance(first, List):
            _walk(k["children"][0], first.item, _name(kids[0], where) + "[]")
    if name == "values" and isinstance(first, Map):  # `values(subagents)`: the subagents, a list
        return List(first.value)
    if name == "values" and isinstance(first, Obj):
        return List(ANY)
    if name == "keys" and isinstance(first, (Map, Obj)):
        return List(Scalar("text"))
    if name in ("sort_by", "sort", "reverse") and isinstance(first, List):
        return first
    if name in ("max_by", "min_by") and isinstance(first, List):
        return first.item
    return ANY


def _not_a_list(shape: Any, where: str) -> None:
    """`subagents[]`, `subagents[0]`: an object keyed by thread indexed as a list, always null."""
    if isinstance(shape, Map):
        raise NoSuchField(
            f"`{where}` is an object keyed by subagent thread, not a list, so `{where}[...]` is always null",
            fix=f"write `{where}.*.FIELD` for each subagent (its fields: {', '.join(shape.value.keys) if isinstance(shape.value, Obj) else 'see `benchtape show SESSION --json`'}), `values({where})[]` for them as a list, or `{where}.THREAD` for one",
        )


def _name(node: Any, where: str) -> str:
    """A readable name for the value a node produces (`calls`, `session.id`)."""
    if isinstance(node, dict):
        if node.get("type") == "field":
            return f"{where}.{node['value']}" if where else node["value"]
        kids = node.get("children") or []
        if node.get("type") == "subexpression":
            for k in kids:
                where = _name(k, where)
            return where
        if node.get("type") == "index_expression" and kids:
            return _name(kids[0], where) + "[]"
        if node.get("type") in ("flatten", "projection", "filter_projection", "value_projection") and kids:
            return _name(kids[0], where)
        if node.get("type") == "function_expression":
            return f"{node.get('value')}({', '.join(_name(k, where) if not (isinstance(k, dict) and k.get('type') == 'expref') else '&…' for k in kids)})"
    return where or "@"


def _field(shape: Any, name: str, where: str) -> Any:
    here = f"`{where}`" if where else "the session document"
    if isinstance(shape, Obj):
        if name in shape.keys:
            return shape.keys[name]
        near = closest(name, shape.keys)
        hint = f"did you mean `{near}`? " if near else ""
        raise NoSuchField(f"field `{name}` does not exist in {here}", fix=f"{hint}its fields: {', '.join(shape.keys)} (see `benchtape show SESSION --json`)")
    if isinstance(shape, Map):
        return shape.value
    if isinstance(shape, List):
        raise NoSuchField(f"{here} is a list, so `{where}.{name}` is always null", fix=f"write `{where}[].{name}` to read `{name}` of each element")
    if isinstance(shape, Scalar):
        raise NoSuchField(f"{here} is {'a ' + shape.kind if shape.kind != 'text' else 'text'}, so it has no field `{name}`", fix="see the document's shape with `benchtape show SESSION --json`")
    return ANY
