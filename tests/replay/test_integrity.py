"""History stays history: gradings and verdicts are append-only, every grading names its
check set and catalog version, and stored specs rebuild the exact checks."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchtape.checks import CATALOG_VERSION, build, spec_hash
from benchtape.core.model import Action
from benchtape.core.results import CheckSpec, Result
from benchtape.replay.specs import spec_from_dict
from benchtape.store.database import Store


@pytest.mark.parametrize("table", ["gradings", "verdicts", "grading_scenarios"])
def test_grading_history_refuses_update_and_delete(tmp_path, table):
    store = Store(tmp_path / "a.db")
    run = store.new_run("run")
    sid = store.new_session(run, "s")
    gid = store.new_grading("live", checkset_sha256="x", catalog_version=CATALOG_VERSION)
    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "h", "result": Result.of(False)}])
    store.add_grading_scenarios(gid, {"s": {"vars": {}, "transform": None, "control": False}})
    for sql in (f"UPDATE {table} SET grading_id = grading_id" if table != "gradings" else "UPDATE gradings SET source = 'x'", f"DELETE FROM {table}"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            store.db.execute(sql)


def test_every_grading_records_its_check_set_and_catalog(demo_db, tmp_path):
    from replaykit import DEMO, cli

    assert cli("regrade", "--bench", DEMO, "--db", demo_db).code == 0
    assert cli("grade", "--all", "--db", demo_db).code == 0
    rows = Store(demo_db).gradings()
    assert {g["source"] for g in rows} >= {"live", "regrade", "control"}
    for g in rows:
        assert len(g["checkset_sha256"]) == 64 and g["catalog_version"] == CATALOG_VERSION


def test_stored_actions_equal_constructed_ones(tmp_path):
    store = Store(tmp_path / "b.db")
    sid = store.new_session(store.new_run("run"), "s")
    sent = [Action("message.user", {"text": "hi"}, at=1.5), Action("tool.call", {"call_id": "c", "tool": "Read", "input": {}}, thread="agent-1", at=2.0)]
    store.append(sid, sent)
    got = store.actions(sid)
    assert got == [a.stamped(seq=i + 1) for i, a in enumerate(sent)]
    assert store.actions(sid, kinds=["tool.call"]) == got[1:]
    got[0].kind = "x"  # an Action in memory is a plain value (slots, for speed); history is the store's
    assert store.actions(sid)[0].kind == "message.user"
    with pytest.raises(sqlite3.IntegrityError):
        store.db.execute("UPDATE actions SET kind = 'x' WHERE session_id = ?", [sid])


_leaf = st.builds(
    CheckSpec,
    type=st.sampled_from(["contains", "regex", "cost", "session:tool-used", "exec"]),
    value=st.one_of(st.none(), st.text(max_size=8), st.lists(st.text(max_size=4), max_size=3)),
    args=st.dictionaries(st.sampled_from(["gte", "lte", "thread", "cmd"]), st.one_of(st.integers(0, 5), st.text(max_size=4)), max_size=2),
    weight=st.sampled_from([1.0, 0.5, 2.0]),
    threshold=st.one_of(st.none(), st.floats(0.01, 10, allow_nan=False)),
    metric=st.one_of(st.none(), st.text(min_size=1, max_size=5)),
    readout=st.booleans(),
    transform=st.sampled_from([None, "output.trim()", {"python": "output.strip()"}]),
)
_specs = st.recursive(_leaf, lambda kids: st.builds(CheckSpec, type=st.sampled_from(["any-of", "assert-set"]), checks=st.lists(kids, min_size=1, max_size=3).map(tuple), threshold=st.one_of(st.none(), st.just(0.5))), max_leaves=6)


@given(_specs)
def test_a_stored_spec_rebuilds_the_same_check_identity(spec):
    back = spec_from_dict(spec.to_dict())
    assert back.to_dict() == spec.to_dict()
    assert spec_hash(back) == spec_hash(spec)


def test_rebuilt_checks_are_buildable_and_the_same_identity():
    spec = CheckSpec(type="any-of", checks=(CheckSpec(type="session:tool-used", value="Edit"), CheckSpec(type="cost", threshold=0.05)))
    assert build(spec_from_dict(spec.to_dict())).identity == build(spec).identity
