"""`benchtape query`: JMESPath over each stored session's document.

The expression is compiled (and its function names checked) before the store is
touched, so a typo costs nothing. Sessions are streamed one at a time, and each
document is built with only the top-level keys the expression can reach: asking for
`metrics.cost_usd` does not serialize a hundred actions per session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import jmespath
import orjson
from jmespath import exceptions as jexc
from jmespath import functions as jfunctions

from benchtape.core.errors import BadInput
from benchtape.replay.document import DOCUMENT_KEYS, document, kinds_needed
from benchtape.replay.metrics import stored_or_built_in
from benchtape.replay.select import Selection, batch_gc, rows
from benchtape.store.database import SessionRow
from benchtape.store.views import BrowsingStore

ALL = None  # every key of the document


@dataclass(frozen=True)
class Query:
    text: str
    parsed: Any  # jmespath ParsedResult
    keys: frozenset[str] | None  # the document keys it can reach; None = all
    counted: frozenset[str] = frozenset()  # of those, the ones it only counts (`length(calls)`): their elements are never built

    def search(self, doc: dict[str, Any]) -> Any:
        return self.parsed.search(doc)


_KNOWN_FUNCTIONS = frozenset(jfunctions.Functions.FUNCTION_TABLE)


def compile_query(text: str) -> Query:
    """Parse the expression; a bad one is bad input (exit 2) that names the position."""
    try:
        parsed = jmespath.compile(text)
    except jexc.ParseError as exc:  # LexerError and IncompleteExpressionError are ParseErrors
        pos = exc.lex_position if isinstance(exc.lex_position, int) else 0
        token = f" at {exc.token_value!r}" if exc.token_value not in (None, "") else ""
        what = "the expression ends too soon" if isinstance(exc, jexc.IncompleteExpressionError) else exc.msg
        pointer = f"\n  {text}\n  {' ' * pos}^"
        raise BadInput(f"bad JMESPath expression, position {pos}{token}: {what}{pointer}", fix="see https://jmespath.org/specification.html; quote the expression for your shell") from None
    unknown = sorted(_function_names(parsed.parsed) - _KNOWN_FUNCTIONS)
    if unknown:
        raise BadInput(f"bad JMESPath expression: unknown function {unknown[0]}()", fix=f"JMESPath functions: {', '.join(sorted(_KNOWN_FUNCTIONS))}")
    from benchtape.replay.shape import NoSuchField, check_fields

    try:
        check_fields(parsed.parsed)
    except NoSuchField as exc:
        raise BadInput(f"{exc.what}: {text}", fix=exc.fix) from None
    keys = reachable_keys(parsed.parsed)
    return Query(text, parsed, keys, counted_keys(parsed.parsed) if keys is not None else frozenset())


def _function_names(node: Any) -> set[str]:
    if not isinstance(node, dict):
        return set()
    out = {node["value"]} if node.get("type") == "function_expression" else set()
    for child in node.get("children") or ():
        out |= _function_names(child)
    return out


# Node types whose first child is evaluated against the current value and the rest
# against what it produced (or against its elements).
_LEFT_ONLY = {"subexpression", "index_expression", "projection", "value_projection", "filter_projection", "pipe", "flatten"}
# Node types whose every child is evaluated against the current value.
_ALL_CHILDREN = {"function_expression", "or_expression", "and_expression", "not_expression", "comparator", "multi_select_list", "multi_select_dict", "key_val_pair"}


def reachable_keys(node: Any) -> frozenset[str] | None:
    """The root document keys an expression can read, or None when it may read them all
    (`@`, `*`, anything not understood): a conservative answer is always safe."""
    if not isinstance(node, dict):
        return frozenset()
    kind = node.get("type")
    children = node.get("children") or []
    if kind == "field":
        return frozenset({node["value"]})
    if kind in ("literal", "expref", "index", "slice", "raw_string"):
        return frozenset()  # an expref is evaluated later, against elements
    if kind in _LEFT_ONLY:
        return reachable_keys(children[0]) if children else frozenset()
    if kind in _ALL_CHILDREN:
        out: set[str] = set()
        for child in children:
            got = reachable_keys(child)
            if got is None:
                return None
            out |= got
        return frozenset(out)
    return None  # current, identity, and anything newer: the whole document


def counted_keys(node: Any) -> frozenset[str]:
    """The root document keys an expression reads only as `length(<key>)`: it never sees their
    elements, so a document need not build them (a hundred calls' dictionaries to count them).
    Only meaningful where `reachable_keys` understood the whole expression."""
    counted: set[str] = set()
    read: set[str] = set()
    _root_uses(node, counted, read)
    return frozenset(counted - read)


def _root_uses(node: Any, counted: set[str], read: set[str]) -> None:
    """Sort each root field the expression names (as `reachable_keys` walks it) into counted
    (the one argument of `length()`) or read (anything else)."""
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    children = node.get("children") or []
    if kind == "function_expression" and node.get("value") == "length" and len(children) == 1 and children[0].get("type") == "field":
        counted.add(children[0]["value"])
    elif kind == "field":
        read.add(node["value"])
    elif kind in _LEFT_ONLY and children:
        _root_uses(children[0], counted, read)
    elif kind in _ALL_CHILDREN:
        for child in children:
            _root_uses(child, counted, read)


class QueryFailed(BadInput):
    """The expression raised on one session's document (`length()` of a number, say): that
    session's answer is the error; the other sessions are still asked."""

    def __init__(self, session_id: str, reason: str):
        super().__init__(f"the expression failed on session {session_id}: {reason}", fix="check the argument types the functions get (e.g. length() of a number)")
        self.session_id, self.reason = session_id, reason


def run_query(store: BrowsingStore, query: Query, sel: Selection, *, keep_null: bool = False) -> Iterator[dict[str, Any]]:
    """One {session_id, scenario, result} per selected session, streamed; a session the
    expression fails on is {session_id, scenario, error} instead, and the rest go on."""
    with batch_gc():
        for row in rows(store, sel):
            try:
                result = evaluate(store, query, row)
            except QueryFailed as exc:
                yield {"session_id": row.id, "scenario": row.scenario, "error": exc.reason}
                continue
            if result is None and not keep_null:
                continue
            yield {"session_id": row.id, "scenario": row.scenario, "result": result}


def evaluate(store: BrowsingStore, query: Query, row: SessionRow) -> Any:
    keys = query.keys
    wanted = None if keys is None else keys & DOCUMENT_KEYS
    session = store.load_session(row.id, row, kinds_needed(wanted))
    verdicts = latest_verdicts(store, row.id) if wanted is None or "verdicts" in wanted else []
    outcome = store.latest_outcomes([row.id]).get(row.id) if wanted is None or "outcome" in wanted else None
    measured = stored_or_built_in(store, row.id, session) if wanted is None or "bench_metrics" in wanted else None
    doc = document(row, session, verdicts, keys=wanted, outcome=outcome, bench_metrics=measured, counted=query.counted)
    try:
        return query.search(doc)
    except jexc.JMESPathTypeError as exc:
        raise QueryFailed(row.id, type_failure(exc)) from None
    except jexc.JMESPathError as exc:
        raise QueryFailed(row.id, str(exc)) from None


EXCERPT = 80  # characters of the value a type error shows


def type_failure(exc: jexc.JMESPathTypeError) -> str:
    """What a function was given and what it takes, with the value's first characters as
    JSON: jmespath's own message holds the whole value as a Python repr, and `abs(actions)`
    had printed every session's every action (tens of MB)."""
    got = jfunctions.TYPES_MAP.get(exc.actual_type, exc.actual_type)  # a list's element comes as a Python type name
    wanted = " or ".join(t.replace("array-", "array of ") for t in exc.expected_types)
    try:
        text = orjson.dumps(exc.current_value, default=str).decode()
    except orjson.JSONEncodeError:  # nested past orjson's depth: the type says enough
        return f"{exc.function_name}() takes {wanted}, got {got}"
    shown = text if len(text) <= EXCERPT else f"{text[:EXCERPT]}… ({len(text)} chars)"
    return f"{exc.function_name}() takes {wanted}, got {got}: {shown}"


def reproduction_marker(store: BrowsingStore, session_id: str, shown: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the newest positive control (`grade`) found for this session, shown beside its
    verdicts (never as them): its grading, and the checks whose verdict it did not reproduce.

    `grade` reproduces a session's first grading unless told another, and `show` shows its
    newest: after a `regrade`, the control checked verdicts other than the ones on screen, and
    saying REPRODUCED under them would vouch for what nobody checked (status OTHER)."""
    from benchtape.replay.verdicts import reproduced_by

    control = store.latest_reproduction_for(session_id)
    if control is None:
        return None
    row = store.grading(control)
    listed = reproduced_by(row["note"] if row else None)
    target = listed[0] if len(listed) == 1 else store.first_grading_for(session_id)
    on_screen = shown[0]["grading_id"] if shown else store.latest_grading_for(session_id)
    if target != on_screen:
        return {"grading_id": control, "status": "OTHER", "reproduced": target, "shown": on_screen, "diverged": []}
    again = {v["check_path"]: v for v in store.verdicts(grading_id=control, session_id=session_id)}
    diverged = [v["check_path"] for v in shown if v["check_path"] in again and (again[v["check_path"]]["status"], again[v["check_path"]]["score"]) != (v["status"], v["score"])]
    return {"grading_id": control, "status": "DIVERGED" if diverged else "REPRODUCED", "reproduced": target, "shown": on_screen, "diverged": diverged}


def latest_verdicts(store: BrowsingStore, session_id: str) -> list[dict[str, Any]]:
    """The session's verdicts from its newest grading that is not a positive control's
    reproduction (store.latest_grading_for), decoded."""
    grading = store.latest_grading_for(session_id)
    if grading is None:
        return []
    from benchtape.replay.specs import check_index  # the check registry: loaded by the first session that has verdicts

    return sorted(store.verdicts(grading_id=grading, session_id=session_id), key=lambda v: check_index(v["check_path"]))
