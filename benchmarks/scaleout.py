"""Scale-out (issue 37): what running cells on a Ray cluster costs the run.

1. Fold throughput: sessions/s the driver folds into the run's store (Writer.fold_bundle, one
   transaction per bundle, from the bundles' bytes as they arrive), against a plain local run
   of the same sessions into a store (each raw line committed with its actions as the harness
   prints it: the recorder's own writes). The driver folds every session of the cluster, so it
   must fold far faster than one machine records.
2. Per-cell dispatch overhead: cells that record a small session and nothing else, through the
   Ray executor and through the local executor with the same slots; the extra slot-time each
   cell costs on the cluster (shipping, the ledger's calls, the shard, its bundle, the spool and
   the fold), and the cells/s the driver dispatches at most.
3. A simulated evaluation (default 1,000 cells) on 3 local nodes: each cell records a mock
   session into its worker's shard (the same store writes as a recording: its row, its lines
   with their actions, a snapshot blob) around a sleep of `--duration` s (the agent), folded by
   the driver. Wall time against the ideal, cells × duration / slots.

The simulated cells leave out the agent's process and the sandbox: those cost a cell the same
on a cluster as locally (they are the cell's own work, not its dispatch). A real local cluster:
`ray.cluster_utils.Cluster` (a head with no CPUs, 3 nodes of 1 CPU each).

    python benchmarks/scaleout.py [--cells 1000] [--duration 0.05] [--nodes 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_USAGE_STATS_REPORT_URL", "http://127.0.0.1:9/")

from benchmarks.figures import record as figure  # noqa: E402

LINES = 12  # a mock session's stream lines (each with one action)
SNAPSHOT = bytes(range(256)) * 16  # 4 KB: the same workspace in every cell (content-addressed: stored once)


# ---------------------------------------------------------------- a simulated cell


@dataclass
class SimRecord:
    sessions: list[str]
    identity: Any = None
    retried: bool = False


@dataclass(frozen=True)
class SleepWork:
    """What a worker runs for one simulated cell: a mock session recorded around a sleep."""

    number: int
    duration: float

    def record(self, runner: Any, matrix: Any = None, seed: Any = None, folder: Any = None) -> SimRecord:
        from benchtape.core.model import Action

        store = runner.store
        sid = store.new_session(runner.run_id, f"task-{self.number % 50}", cell_id=f"cell-{self.number}", attempt=1, harness="mock", model="sleep")
        store.append(sid, [Action("session.started", {"scenario": f"task-{self.number % 50}", "harness": "mock", "model": "sleep", "prompt": "sleep"}), Action("message.user", {"text": "sleep"})])
        if self.duration:
            time.sleep(self.duration)
        for n in range(1, LINES + 1):
            store.append_line(sid, n, f'{{"type": "assistant", "n": {n}, "cell": {self.number}}}', [Action("message.assistant", {"text": f"step {n} of cell {self.number}"})])
        blob = store.prepare_blob(SNAPSHOT)
        store.append(sid, [Action("workspace.snapshot", {"sha256": blob.sha256, "files": 1, "bytes": len(SNAPSHOT)}), Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": self.duration * 1000})], blobs=[blob])
        return SimRecord([sid])


@dataclass
class SleepShipment:
    """How a simulated cell travels (recorder.remote_cell.CellShipment's members)."""

    work: SleepWork
    matrix: Any = None
    seed_key: str = "sim"

    @property
    def name(self) -> str:
        return f"sim cell {self.work.number}"

    def ship_seed(self) -> None:
        return None

    def shipped_matrix(self) -> None:
        return None

    def worker(self) -> SleepWork:
        return self.work

    def received(self, identity: Any, sessions: list[str]) -> SimRecord:
        return SimRecord(list(sessions), identity)

    def lost(self, runner: Any, message: str, *, retried: bool, source: str | None = None) -> SimRecord:
        sid = runner.store.new_session(runner.run_id, "lost", source=source)
        return SimRecord([sid], retried=retried)


@dataclass
class SleepJob:
    work: SleepWork
    level: str = "home"

    def record(self, runner: Any) -> SimRecord:  # the local executor's path
        return self.work.record(runner)

    def prepare_ahead(self, runner: Any) -> None:
        pass

    def shipment(self) -> SleepShipment:  # the Ray executor's
        return SleepShipment(self.work)


# ---------------------------------------------------------------- measuring


@dataclass
class Timed:
    seconds: float
    records: list[Any] = field(default_factory=list)


def run_cells(db: Path, cells: int, duration: float, slots: int, executor: Any = None) -> Timed:
    """`cells` simulated cells through the scheduler (the local executor unless `executor`)."""
    from benchtape.recorder.scheduler import LocalExecutor, Scheduler
    from benchtape.store.database import Store

    store = Store(db)
    run_id = store.new_run("evaluation")
    jobs = [SleepJob(SleepWork(i, duration)) for i in range(cells)]
    scheduler = Scheduler(store, run_id, concurrency=slots, executor=executor or LocalExecutor)
    with scheduler:
        started = time.perf_counter()
        ran = scheduler.run(jobs, lambda record: None)
        seconds = time.perf_counter() - started
    assert not ran.interrupted and len(ran.records) == cells, (len(ran.records), ran.unscheduled)
    assert len(list(store.session_rows())) == cells
    store.close()
    return Timed(seconds, ran.records)


def fold_throughput(tmp: Path, sessions: int) -> tuple[float, float]:
    """(sessions/s folded from bundle bytes, sessions/s of a plain local recording of them)."""
    from benchtape.recorder.runner import Runner
    from benchtape.store.bundles import Bundle
    from benchtape.store.database import Store

    local = Store(tmp / "local.db")
    runner = Runner(local, local.new_run("evaluation"))
    started = time.perf_counter()
    records = [SleepWork(i, 0).record(runner) for i in range(sessions)]
    recorded = time.perf_counter() - started
    runner.scripted.close()
    wire = []
    for rec in records:
        row = local.session_row(rec.sessions[0])
        wire.append(local.export_bundle(rec.sessions, run_id="R", key={"scenario": row.scenario, "cell_id": row.cell_id, "attempt": row.attempt}, token=rec.sessions[0]).to_bytes())
    target = Store(tmp / "folded.db")
    run_id = target.new_run("evaluation")
    started = time.perf_counter()
    for data in wire:
        bundle = Bundle.from_bytes(data)
        bundle.run_id = run_id
        assert target.fold_bundle(bundle)
    folded = time.perf_counter() - started
    assert len(list(target.session_rows())) == sessions
    return sessions / folded, sessions / recorded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=int, default=1000, help="cells of the simulated evaluation")
    ap.add_argument("--duration", type=float, default=0.05, help="seconds each simulated agent sleeps")
    ap.add_argument("--nodes", type=int, default=3, help="local worker nodes (1 CPU each: one cell at a time)")
    ap.add_argument("--dispatch-cells", type=int, default=200, help="cells of the dispatch-overhead run")
    ap.add_argument("--fold-sessions", type=int, default=500)
    args = ap.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from benchtape.recorder.ray_executor import RayOptions, ray_executor

    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    cluster = None
    try:
        fold_rate, local_rate = fold_throughput(tmp, args.fold_sessions)
        print(f"fold: {fold_rate:,.0f} sessions/s folded into the store (one transaction per bundle, from its bytes), against {local_rate:,.0f} sessions/s recorded by a plain local run of the same {args.fold_sessions} sessions ({fold_rate / local_rate:.1f}×)")
        figure("scale-out: fold throughput", f"{fold_rate:,.0f} sessions/s", f"local recording {local_rate:,.0f}/s", "faster than recording", fold_rate > local_rate)

        started = time.perf_counter()
        head = {"num_cpus": 0, "object_store_memory": 100 << 20, "include_dashboard": False, "temp_dir": str(tmp / "ray")}
        cluster = Cluster(initialize_head=True, head_node_args=head)
        for n in range(args.nodes):
            (tmp / f"node-{n}").mkdir()
            cluster.add_node(num_cpus=1, object_store_memory=100 << 20, env_vars={"TMPDIR": str(tmp / f"node-{n}"), "BENCHTAPE_REAPER_IDLE": "5"})
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
        print(f"cluster: a head and {args.nodes} nodes up in {time.perf_counter() - started:.1f}s")
        slots = args.nodes
        on_ray = ray_executor(RayOptions(cluster.address), tmp / "spool")
        run_cells(tmp / "warm.db", slots * 2, 0, slots, on_ray)  # every node's worker process started

        # per cell: the difference of a run of 2N cells and one of N (a run's fixed cost cancels:
        # the ledger actor, the node sweeps at its start and end)
        n = args.dispatch_cells
        local = [run_cells(tmp / f"dispatch-local-{k}.db", k * n, 0, slots).seconds for k in (1, 2)]
        remote = [run_cells(tmp / f"dispatch-ray-{k}.db", k * n, 0, slots, on_ray).seconds for k in (1, 2)]
        per_local, per_ray = (local[1] - local[0]) * slots / n, (remote[1] - remote[0]) * slots / n
        fixed = remote[0] - (remote[1] - remote[0])
        print(f"dispatch: cells of no work, {slots} slots: {per_ray * 1000:.1f} ms of slot time per cell on the cluster against {per_local * 1000:.1f} locally ({(per_ray - per_local) * 1000:.1f} ms more); the driver dispatches {n / (remote[1] - remote[0]):,.0f} cells/s at most; a run's fixed cost on the cluster {fixed:.1f}s (its ledger, the node sweeps)")
        figure("scale-out: per-cell dispatch overhead", f"{(per_ray - per_local) * 1000:.1f} ms/cell", f"local executor {per_local * 1000:.1f} ms/cell", "≪ a real cell (seconds)", None)

        sim = run_cells(tmp / "sim.db", args.cells, args.duration, slots, on_ray)
        ideal = args.cells * args.duration / slots
        print(f"simulated evaluation: {args.cells} cells × {args.duration:g}s on {slots} nodes: {sim.seconds:.1f}s against the ideal {ideal:.1f}s ({ideal / sim.seconds:.0%} of ideal; {(sim.seconds - ideal) / args.cells * slots * 1000:.1f} ms per cell over its sleep)")
        figure("scale-out: 1,000-cell simulated evaluation", f"{sim.seconds:.1f}s", f"ideal {ideal:.1f}s", "reported", None)
    finally:
        if cluster is not None:
            ray.shutdown()
            cluster.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
