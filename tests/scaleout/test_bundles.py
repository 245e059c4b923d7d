"""Bundles without a cluster: what a worker's shard exports is what the run's store gets, once.

A shard is a real store the demo bench was recorded into (the same recorder a worker runs); its
sessions travel as bundles (benchtape.store.bundles) through their byte form and are folded into
another store, as the driver folds them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from storekit import cli

from benchtape.core.errors import BadInput
from benchtape.recorder.bench_run import record_bench
from benchtape.recorder.runner import RunOptions
from benchtape.recorder.spool import spool, spool_folder, spooled
from benchtape.spec.bench import load_bench
from benchtape.store.bundles import Bundle
from benchtape.store.database import Store

DEMO = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"


def shard(path: Path) -> Store:
    store = Store(path)
    record_bench(store, load_bench(DEMO), RunOptions(concurrency=2))
    return store


def bundles(source: Store, run_id: str, *, have: set[str] | frozenset[str] = frozenset(), token: str = "t") -> list[Bundle]:
    out = []
    for row in source.session_rows():
        b = source.export_bundle([row.id], run_id=run_id, key={"scenario": row.scenario, "cell_id": row.cell_id, "attempt": row.attempt}, token=f"{token}{row.id}", have=have)
        out.append(Bundle.from_bytes(b.to_bytes()))  # as it crosses the wire and waits in the spool
    return out


def kept(store: Store, sid: str) -> tuple:
    """Everything a session is in the store: its row's facts, its actions, raw lines and the blobs they name."""
    row = store.session_row(sid)
    assert row is not None
    return (row.scenario, row.cell_id, row.attempt, row.harness, row.model, row.params, row.workdir, row.started_at,
            [(a.kind, a.thread, a.at, a.data) for a in store.actions(sid)], store.raw_lines(sid),
            {sha: store.get_blob(sha) for sha in store.bundle_blob_names([sid])})


def integrity(path: Path) -> str:
    c = sqlite3.connect(path)  # closed here: `with` would only end its transaction
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        c.close()


def test_a_bundle_is_folded_as_the_shard_stored_it_and_once_whatever_arrives_again(tmp_path):
    source = shard(tmp_path / "shard.db")
    store = Store(tmp_path / "run.db")
    run_id = store.new_run("evaluation")
    first = bundles(source, run_id)
    assert len(first) == 3 and all(b.blobs for b in first)
    for b in first:
        assert store.fold_bundle(b) == b.session_ids
    for row in source.session_rows():
        assert kept(store, row.id) == kept(source, row.id)
        assert store.session_row(row.id).run_id == run_id and store.session_row(row.id).source == f"worker:t{row.id}"
    # the same bundles again (a retried delivery), and another attempt's bundles of the same places
    # (a duplicated cell: other session ids) add nothing
    again = shard(tmp_path / "again.db")
    for b in first + bundles(again, run_id, token="u"):
        assert store.fold_bundle(b) == []
    assert len(list(store.session_rows())) == 3
    assert integrity(store.path) == "ok"


def test_blobs_the_store_holds_are_not_shipped_and_a_bundle_short_of_one_is_refused_whole(tmp_path):
    source = shard(tmp_path / "shard.db")
    names = {sha for row in source.session_rows() for sha in source.bundle_blob_names([row.id])}
    store = Store(tmp_path / "run.db")
    light = bundles(source, store.new_run("evaluation"), have=names)
    assert all(b.blob_names and not b.blobs for b in light)  # named, not carried
    with pytest.raises(ValueError, match="does not carry and the store does not hold"):
        store.fold_bundle(light[0])
    assert list(store.session_rows()) == [] and store.held_blobs(names) == set()  # nothing of it written
    full = bundles(source, light[0].run_id)
    assert store.fold_bundle(full[0]) == full[0].session_ids  # the same session, now with its blobs
    assert store.held_blobs(full[0].blob_names) == set(full[0].blob_names)


def test_a_cut_bundle_is_refused_naming_where_it_came_from(tmp_path):
    source = shard(tmp_path / "shard.db")
    data = bundles(source, "R")[0].to_bytes()
    for broken in (data[:-1], b"not a bundle", data + b"x"):
        with pytest.raises(BadInput, match="spool/x.bundle is not a readable bundle"):
            Bundle.from_bytes(broken, "spool/x.bundle")


def test_recover_folds_the_bundles_that_reached_the_spool_and_leaves_what_it_cannot_read(tmp_path):
    source = shard(tmp_path / "shard.db")
    db = tmp_path / "run.db"
    store = Store(db)
    run_id = store.new_run("evaluation")
    folder = spool_folder(db)
    arrived = bundles(source, run_id)
    for i, b in enumerate(arrived):
        spool(folder, run_id, f"{i}-{b.token}", b.to_bytes())
    store.fold_bundle(arrived[0])  # folded before the driver died, not yet removed from the spool
    (folder / run_id / "9-cut.bundle").write_bytes(arrived[1].to_bytes()[:100])
    store.close()
    out = cli("recover", "--db", db)
    assert out.code == 0, out.stderr
    assert out.stdout.count("folded a bundle that arrived before its run stopped") == 2, out.stdout
    assert out.stdout.count("folded already") == 1 and "9-cut.bundle in the spool" in out.stdout, out.stdout
    assert [p.name for p in spooled(folder)] == ["9-cut.bundle"]
    store = Store(db)
    assert {r.id for r in store.session_rows()} == {b.session_ids[0] for b in arrived}
    for b in arrived:
        assert kept(store, b.session_ids[0]) == kept(source, b.session_ids[0])
    assert integrity(db) == "ok"
