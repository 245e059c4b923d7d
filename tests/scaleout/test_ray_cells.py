"""An evaluation's cells on a real local Ray cluster (head + 2 worker nodes, one cluster for the
module): the same cells, outcomes, verdicts and compare table as a local run; reuse, --dry-run,
--fresh and --task as locally; and a node killed mid-cell: the cell completes once on another
node, the lost attempt is on record, nothing is duplicated or left running."""

from __future__ import annotations

import os
import time

import pytest
from raykit import (
    cells,
    docker_up,
    integrity,
    ledger_attempts,
    left_running,
    make_project,
    need_ray,
    preview,
    run_evaluation,
    start_cluster,
    stop_cluster,
    table,
    wait_for,
)

need_ray()

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def cluster():
    local = start_cluster(("a", "b"))
    yield local
    stop_cluster(local)


def sans_cell_ids(found: dict) -> dict:
    return {k: [(o, v) for o, _, v in attempts] for k, attempts in found.items()}


def test_a_run_on_the_cluster_stores_what_a_local_run_stores_and_reuses_as_one(cluster, tmp_path):
    project = make_project(tmp_path / "proj")
    local, remote = tmp_path / "local.db", tmp_path / "ray.db"
    here = run_evaluation(project, local)
    there = run_evaluation(project, remote, executor="ray", address=cluster.address)
    assert there.done.outcomes == here.done.outcomes and there.done.retried == 0
    assert cells(remote) == cells(local) and len(cells(local)) == 6  # same cells, identities, outcomes and verdicts
    assert table(project, remote) == table(project, local)
    assert integrity(remote) == "ok"
    # reuse reads the store, whoever filled it: nothing to run, every measured cell re-graded
    shown = preview(project, remote)
    assert (shown["to_run"], shown["measured"]) == (0, 6)
    again = run_evaluation(project, remote, executor="ray", address=cluster.address)
    assert again.done.started_sessions == 0 and again.done.regraded == 6
    # --task with --fresh measures just those cells again, on the cluster
    fresh = run_evaluation(project, remote, executor="ray", address=cluster.address, tasks=["fix-add"], fresh=True)
    assert (fresh.done.started_sessions, fresh.done.regraded) == (2, 0)
    assert {k: v[-1][0] for k, v in cells(remote).items() if k[0] == "fix-add"} == {k: v[-1][0] for k, v in cells(local).items() if k[0] == "fix-add"}
    assert [len(v) for k, v in sorted(cells(remote).items())] == [1, 1, 2, 2, 1, 1]  # explain, fix-add (twice now), fix-sub
    assert not list((cluster.tmp).glob("node-*/benchtape-node/*/*.db"))  # every shard removed once shipped


@pytest.mark.parametrize("level", ["home", pytest.param("container", marks=pytest.mark.docker)])
def test_a_node_killed_mid_cell_loses_an_attempt_not_the_cell(cluster, tmp_path, level):
    if level == "container" and not docker_up():
        if os.environ.get("CI") == "true":
            pytest.fail("the container level's scale-out test needs a Docker engine in CI (bash .ci/docker.sh)")
        pytest.skip("no Docker engine")
    project = make_project(tmp_path / "proj", sleep=4, models="scripted")
    db = tmp_path / "ray.db"
    run = run_evaluation(project, db, executor="ray", address=cluster.address, tasks=["fix-add"], concurrency=1, sandbox=level, background=True)
    first = wait_for(ledger_attempts, 120)
    assert first, f"no attempt started: {run.error!r}"
    victim = first[0]["node"]
    # mid-cell: its session folder exists on that node (the sandbox is open, the agent sleeping)
    assert wait_for(lambda: list(cluster.tmpdirs[victim].glob("benchtape-*/session.json")), 60), "the cell's session never started"
    time.sleep(1.0)
    cluster.kill_node(victim)
    try:
        run.thread.join(180)
        assert not run.thread.is_alive() and run.error is None, repr(run.error)
        done = run.done
        assert dict(done.outcomes) == {"mock@latest scripted": {"passed": 1}} and done.retried == 1
        from benchtape.store.database import Store

        store = Store(db, readonly=True)
        sessions = list(store.session_rows())
        assert len(sessions) == len({s.id for s in sessions}) == 2
        by_source = {s.source.split(":")[0]: s for s in sessions}
        assert set(by_source) == {"worker", "lost"}  # the cell folded once; the lost attempt recorded once
        outcomes = store.latest_outcomes([s.id for s in sessions])
        assert outcomes[by_source["worker"].id]["outcome"] == "passed"
        lost = outcomes[by_source["lost"].id]
        assert lost["outcome"] == "infrastructure_error" and f"lost on node {victim[:12]}" in lost["reason"] and "Ray ran the cell again" in lost["reason"]
        assert store.actions(by_source["worker"].id)[0].data["cell"]["id"] == by_source["lost"].cell_id
        assert integrity(db) == "ok"
        # nothing of the dead node is left: its processes, session folders and containers are gone
        assert wait_for(lambda: not left_running(cluster.tmpdirs[victim]), 60), left_running(cluster.tmpdirs[victim])
        for node, tmp in cluster.tmpdirs.items():
            if node in cluster.nodes:
                assert wait_for(lambda tmp=tmp: not [x for x in left_running(tmp) if not x.startswith("process")], 30), left_running(tmp)
    finally:
        cluster.add_node("c")  # the module's cluster keeps two worker nodes
