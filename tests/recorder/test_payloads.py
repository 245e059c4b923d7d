"""Typed events: one payload type per action kind (benchtape.core.payloads), the store's writer
refusing an action whose payload does not match its kind, DESIGN's list of kinds held to the
code, and a Result whose `passed` is read from its status."""

from __future__ import annotations

import re
import typing
from enum import StrEnum
from pathlib import Path

import pytest

from benchtape.adapters.mock import MockParser
from benchtape.core import payloads
from benchtape.core.model import Action, project
from benchtape.core.payloads import KINDS, PayloadError, check_payload
from benchtape.core.results import STATUSES, Result, Status
from benchtape.store.database import Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "bt.db")
    yield s
    s.close()


def _session(store: Store) -> str:
    return store.new_session(store.new_run("run"), "sc")


GOOD = Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {"file_path": "a.py"}})

REFUSED = [  # (the bad action, what the refusal says)
    (Action.untyped("tool.cal", {"call_id": "c1"}), "unknown action kind 'tool.cal' (did you mean 'tool.call'?)"),
    (Action.untyped("tool.call", {"call_id": 42, "tool": "Read"}), "a tool.call action's 'call_id' is int (42), but ToolCall declares it a string"),
    (Action.untyped("session.finished", {"status": "ok", "timed_out": "no"}), "a session.finished action's 'timed_out' is string ('no'), but SessionFinished declares it true or false"),
    (Action.untyped("metrics", {"tokens_in": True}), "a metrics action's 'tokens_in' is bool (True), but Metrics declares it a number"),
    (Action.untyped("message.user", ["hi"]), "a message.user action's data is list, not an object"),
]


@pytest.mark.parametrize("bad,said", REFUSED, ids=lambda v: v.kind if isinstance(v, Action) else "")
def test_the_writer_refuses_a_payload_that_does_not_match_its_kind_and_writes_nothing(store, bad, said):
    sid = _session(store)
    blob = store.prepare_blob(b"a snapshot written with the actions")
    with pytest.raises(PayloadError) as refused:
        store.append(sid, [GOOD, bad], blobs=[blob])
    assert said in str(refused.value)
    assert store.actions(sid) == [] and store.get_blob(blob.sha256) is None  # the whole batch, and its blob, refused
    with pytest.raises(PayloadError):
        store.append_line(sid, 1, '{"the": "line"}', [bad])
    assert store.raw_lines(sid) == [] and store.actions(sid) == []  # the line is not kept without its actions
    store.append(sid, [GOOD])  # the store is fine: the next append starts at seq 1
    assert [(a.seq, a.kind) for a in store.actions(sid)] == [(1, "tool.call")]


def test_an_import_batch_is_refused_whole(store):
    sid = _session(store)
    with pytest.raises(PayloadError, match="'tool' is int"), store.transaction(), store.batch_writer(sid) as writer:
        writer.add([(1, "a raw line")], [GOOD, Action.untyped("tool.call", {"call_id": "c2", "tool": 7})])
    assert store.actions(sid) == [] and store.raw_lines(sid) == []


def test_what_the_writer_takes():
    class Tool(StrEnum):
        READ = "Read"

    check_payload("tool.call", {"call_id": "c", "tool": Tool.READ, "input": 5, "raw_ref": 12})  # a str subclass; `input` is Any; undeclared fields pass
    check_payload("metrics", {"duration_ms": 120, "cost_usd": 0, "turns": 3.0})  # one JSON number: int and float alike
    check_payload("session.finished", {"status": "ok", "exit_code": None, "wall_ms": None})  # declared `| None`
    check_payload("session.started", {"follow_ups": ("a", "b"), "imported_from": []})  # a tuple is written as a list
    check_payload("hook", {"event": ["odd"], "output": {"x": 1}})  # fields copied from the harness as it wrote them
    with pytest.raises(PayloadError, match="'exit_code' is string"):
        check_payload("session.finished", {"exit_code": "0"})


def test_every_kind_in_designs_list_has_its_payload_type_and_the_same_fields():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| `([a-z_.]+)` \| `(\w+)` \| (.+) \|$", doc, re.MULTILINE)
    listed = {kind: (name, {f.strip() for f in fields.replace(", and the tree's facts:", ",").split(",")}) for kind, name, fields in rows}
    assert set(listed) == set(KINDS), "docs/architecture.md's list of kinds and core/payloads.py's KINDS differ"
    for kind, payload in KINDS.items():
        name, fields = listed[kind]
        assert name == payload.__name__, kind
        assert fields == set(typing.get_type_hints(payload)), f"{kind}: the doc's fields differ from {payload.__name__}'s"


def _overloads(method: typing.Any) -> dict[str, str]:
    """kind -> the payload type an overload of `method` pairs it with."""
    out = {}
    for overload in typing.get_overloads(method):
        kind = re.fullmatch(r"Literal\['([a-z_.]+)'\]|Literal\[\"([a-z_.]+)\"\]", overload.__annotations__["kind"])
        assert kind is not None, overload.__annotations__
        typed = overload.__annotations__.get("data") or overload.__annotations__["return"]
        out[kind.group(1) or kind.group(2)] = typed.removeprefix("payloads.")
    return out


def test_actions_constructor_and_reader_pair_each_kind_with_its_payload_type():
    """mypy checks a build site and a read site through these overloads: each must name the
    kind's own TypedDict, or a field would be checked against the wrong type."""
    wanted = {kind: payload.__name__ for kind, payload in KINDS.items()}
    assert _overloads(Action.__init__) == wanted
    assert _overloads(Action.payload) == wanted


def test_a_payload_read_as_another_kind_is_refused():
    assert GOOD.payload("tool.call")["tool"] == "Read"
    with pytest.raises(PayloadError, match="a tool.call action read as a tool.result payload"):
        GOOD.payload("tool.result")


def test_a_mock_event_the_writer_would_refuse_is_a_warning():
    (action,) = MockParser().feed('{"kind": "tool.call", "data": {"call_id": 1, "tool": "Read"}}')
    assert action.kind == "adapter.warning" and "'call_id' is int (1)" in action.payload("adapter.warning")["what"]
    (kept,) = MockParser().feed('{"kind": "tool.call", "data": {"call_id": "c1", "tool": "Read", "note": "kept"}}')
    assert kept.kind == "tool.call" and kept.data == {"call_id": "c1", "tool": "Read", "note": "kept", "action": "read"}  # the canonical action, derived


def test_every_payload_type_has_a_json_type_for_each_field():
    """The writer's table is derived from the annotations at import: every kind is in it."""
    assert set(payloads._FIELDS) == set(KINDS)
    assert payloads._FIELDS["tool.call"] == {"call_id": frozenset({str}), "tool": frozenset({str}), "server": frozenset({bool}), "action": frozenset({str}), "files": frozenset({list, tuple}), "command": frozenset({str})}


def test_a_results_passed_is_its_status():
    assert [Result.of(True).status, Result.of(False).status, Result.error("x").status, Result.not_applicable("x").status] == ["PASS", "FAIL", "ERROR", "NA"]
    assert [r.passed for r in (Result.of(True), Result.of(False), Result.error("x"), Result.not_applicable("x"))] == [True, False, False, False]
    assert Result(Status.ERROR, 1.0).passed is False  # a score does not make it pass
    assert STATUSES == ("PASS", "FAIL", "ERROR", "NA") and isinstance(Result.of(True).status, str)
    assert Result.of(True, "ok").to_dict() == {"pass": True, "score": 1.0, "reason": "ok", "evidence": {}, "status": "PASS"}
    assert Result.from_dict({"pass": True, "score": 1}).status is Status.PASS  # a writer that gave no status
    assert Result.from_dict({"pass": True, "status": "ERROR"}).passed is False  # the status decides


def test_the_projection_reads_the_typed_payloads():
    s = project([
        Action("session.started", {"scenario": "s", "harness": "mock", "prompt": "p", "imported_from": ["a.jsonl"]}),
        Action("environment.reported", {"source": "system:init", "tools": ["Read"]}),
        Action("environment.reported", {"commands": ["dev:x"]}),
        Action("workspace.snapshot", {"sha256": "0" * 64, "files": 1, "bytes": 2, "stage": payloads.STAGED}),
        Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 5.0}),
    ])
    assert s.started["scenario"] == "s" and s.imported_from == ["a.jsonl"]
    assert s.environment["reported"] == {"source": "system:init", "tools": ["Read"], "commands": ["dev:x"]}  # merged key by key
    assert s.staged_snapshot == {"sha256": "0" * 64, "files": 1, "bytes": 2, "stage": "staged"} and s.snapshot is None
    assert (s.status, s.metrics.wall_ms) == ("ok", 5.0)
