"""The Ray executor: an evaluation's cells as Ray tasks on a cluster, folded into one store.

    benchtape run NAME --executor ray --address HEAD:6379

It implements the scheduler's executor seam (benchtape.recorder.scheduler.Executor), so the
scheduler, the live grading, reuse and the outcomes are the local run's; only where a cell is
recorded differs. Per cell:

1. the driver stages the cell's task (once per task, as a local run does) and ships its tree
   and the run's planning through Ray's object store, once each;
2. one Ray task records the cell on a worker (benchtape.recorder.ray_worker.run_attempt): it
   asks for what the cell needs (`cpus` CPUs, and one `docker_slot` for a container cell), so
   placement follows what each node offers; `--concurrency` caps the cells in flight;
3. the worker returns its shard as a bundle; the driver writes it to the spool, folds it into
   the store in one transaction (the store's one writer), grades it, and removes it.

Faults. A node lost mid-cell: Ray runs the cell again on another node (`retries` times);
agent failures are never retried (they are results: a cell's recording never raises for
them, and `retry_exceptions` is off). The ledger (an actor beside the driver) saw every
attempt start: each that never came back is recorded as an attempt of the cell that ended in
an infrastructure error (`retried` when a later attempt measured the cell), never dropped and
never a measurement. Ctrl-C twice: the ledger tells the cells in flight to stop, and they come
back as interrupted sessions, as locally (after CANCEL_GRACE seconds, Ray cancels them). A
dead driver: Ray ends its workers, each node's reaper removes their containers and processes
(benchtape.recorder.node_reaper), and `benchtape recover` folds what reached the spool.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.recorder.ray_messages import RayMessages
from benchtape.recorder.remote_cell import CellShipment, shipment_of
from benchtape.recorder.runner import Interrupted, Runner
from benchtape.recorder.scheduler import ExecutorFactory, Job, Receive
from benchtape.recorder.spool import SpooledBundle, spool, tidy

DOCKER_SLOT = "docker_slot"  # the custom resource a node offers per container cell it can run at once
REMOTE_LEVELS = ("home", "container")  # the levels a worker runs (the others change the worker's real files)
POLL = 0.5  # seconds between looks at a cell in flight
CANCEL_GRACE = 30.0  # seconds a cell told to stop has to come back before Ray cancels it
FEASIBLE_EVERY = 5.0  # seconds between checks that some live node can still run a waiting cell
# Ray's usage statistics stay off, and its one "disabled" report goes to a dead loopback port.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/"}


NAMESPACE = "benchtape"


def ledger_name(run_id: str) -> str:
    """The run's ledger, by name in NAMESPACE (`ray.get_actor`): what an operator reads to see its attempts."""
    return f"ledger-{run_id}"


@dataclass(frozen=True)
class RayOptions:
    address: str
    retries: int = 3
    cpus: float = 1.0
    runtime_env: dict[str, Any] = field(default_factory=dict)


def ray_executor(options: RayOptions, spool_dir: Path) -> ExecutorFactory:
    """The scheduler's executor factory for this cluster."""
    return lambda runner, slots: RayExecutor(runner, slots, options, spool_dir)


def import_ray() -> Any:
    """Ray, once its environment is set (only the Ray executor ever imports it)."""
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)
    try:
        import ray
    except ImportError:
        raise BadInput("--executor ray needs Ray, which is not installed", fix="pip install 'benchtape[ray]' (the same version on the driver and every node)") from None
    return ray


class RayExecutor:
    """`slots` cells in flight on the cluster, each waited for on a thread of its own, where its
    bundle is folded and its record handed to the scheduler (and so graded)."""

    def __init__(self, runner: Runner, slots: int, options: RayOptions, spool_dir: Path):
        self.runner, self.slots, self.options, self.spool_dir = runner, slots, options, spool_dir
        self.run_id = runner.run_id
        self.emit = runner.on_event
        ray = self.ray = import_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from benchtape.recorder import ray_worker

        self._owns = not ray.is_initialized()
        self.messages: RayMessages | None = None
        if self._owns:
            self.messages = RayMessages(ray, spool_dir / f"{self.run_id}.ray.log")  # before init: its first words go there too
            try:
                ray.init(address=options.address, namespace=NAMESPACE, log_to_driver=False, logging_level="WARNING", runtime_env=options.runtime_env or None)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                self.messages.close()
                raise BadInput(f"could not join the Ray cluster at {options.address}: {exc}", fix="start it with `ray start --head` (docs/scale-out.md), and pass its address: --address HOST:PORT or RAY_ADDRESS") from None
            self.emit("sandbox.note", {"kind": "ray", "message": f"Ray's own messages (a node lost, its raylet's state dumps) go to {self.messages.path}, not to this output"})
        try:
            self._start(ray, ray_worker, NodeAffinitySchedulingStrategy, slots)
        except BaseException:
            if self.messages is not None:  # Ray's printer and loggers back as they were
                self.messages.close()
            raise

    def _start(self, ray: Any, ray_worker: Any, NodeAffinitySchedulingStrategy: Any, slots: int) -> None:  # noqa: N803 - Ray's class, passed in
        """The run's ledger, the remote functions and the first sweep, once joined."""
        here = ray.get_runtime_context().get_node_id()
        self._pinned = lambda node, soft=False: NodeAffinitySchedulingStrategy(node_id=node, soft=soft)
        # beside the driver (on the head, when the driver runs there): it outlives any worker node
        self.ledger = ray_worker.Ledger.options(name=ledger_name(self.run_id), namespace=NAMESPACE, scheduling_strategy=self._pinned(here)).remote()  # type: ignore[attr-defined,no-untyped-call]  # an actor class (Ray's stubs lose it)
        ray.get(self.ledger.ping.remote(), timeout=120)
        self._attempt = ray.remote(ray_worker.run_attempt)
        self._sweeper = ray.remote(ray_worker.sweep_node)
        self._threads = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="benchtape-ray-cell")
        self._numbers = itertools.count(1)
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._matrices: dict[int, Any] = {}
        self._seeds: dict[str, Any] = {}
        self._seed_locks: dict[str, threading.Lock] = {}
        self._sweep(None)  # what earlier runs left on the nodes, first

    # ------------------------------------------------------------ the seam
    def submit(self, job: Job, receive: Receive, following: Job | None = None) -> Future[None]:
        cell = shipment_of(job)
        if job.level not in REMOTE_LEVELS:
            raise BadInput(f"a cell at sandbox level {job.level} would change a worker's real files; on a cluster cells run at level home or container", fix="pass --sandbox home (or container), or drop --executor ray")
        return self._threads.submit(self._one, cell, job.level, receive)

    def cancel(self) -> None:
        self._cancel.set()

    def shutdown(self) -> None:
        try:
            self._threads.shutdown(wait=True, cancel_futures=True)
            tidy(self.spool_dir, self.run_id)
            self._sweep(self.run_id)
        finally:
            try:
                self.ray.kill(self.ledger)
            except Exception:  # noqa: BLE001 - the cluster is gone already
                pass
            if self._owns:
                self.ray.shutdown()
            if self.messages is not None:
                self.messages.close()

    # ------------------------------------------------------------ one cell
    def _one(self, cell: CellShipment, level: str, receive: Receive) -> None:
        if self._cancel.is_set():
            raise Interrupted()  # scheduled after Ctrl-C stopped the run: nothing recorded
        key = f"{self.run_id}/{next(self._numbers)}"
        needs = self._needs(cell, level)
        ref = self._attempt.options(**needs).remote(self._matrix(cell), cell.worker(), self._seed(cell), self.ledger, {"run_id": self.run_id, "key": key})
        out, failure = self._wait(key, ref, needs)
        # the first attempt came back: none was lost (Ray runs a task again only once one failed)
        attempts = [] if out is not None and out["attempt"] == 1 else self.ray.get(self.ledger.of_job.remote(key))
        came_back = out["token"] if out is not None else None
        lost = [a for a in attempts if a["token"] != came_back]
        for attempt in lost:
            final = out is None and attempt is attempts[-1]  # the cell's own result: no attempt after it
            receive(cell.lost(self.runner, lost_message(attempt, failure, retried=not final), retried=not final, source=f"lost:{attempt['token']}"))
        if out is not None:
            name = f"{key.rsplit('/', 1)[1]}-{out['token']}"
            arrived = SpooledBundle(spool(self.spool_dir, self.run_id, name, out["bundle"]), out["bundle"])
            receive(cell.received(out["identity"], out["sessions"]), arrived)
            arrived.done()
            self.ledger.hold.remote(arrived.bundle.blob_names)  # committed: later bundles need not ship them
        elif not attempts:
            receive(cell.lost(self.runner, f"the cell never started on the cluster: {failure}", retried=False))

    def _needs(self, cell: CellShipment, level: str) -> dict[str, Any]:
        """What one cell asks of a node, how often Ray runs it again when its node is lost, and
        never again when it raised (a cell's recording raises for no failure of the agent)."""
        return {
            "num_cpus": self.options.cpus,
            "resources": {DOCKER_SLOT: 1} if level == "container" else {},
            "max_retries": self.options.retries,
            "retry_exceptions": False,
            "name": cell.name,
        }

    def _wait(self, key: str, ref: Any, needs: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """The attempt that came back (None, and why, when none did)."""
        ray = self.ray
        told = None  # when the ledger was told to stop this job
        checked = time.monotonic()
        gone: str | None = None
        while not ray.wait([ref], timeout=POLL)[0]:
            now = time.monotonic()
            if self._cancel.is_set() and told is None:
                self.ledger.cancel.remote([key])
                told = now
            elif told is not None and now - told > CANCEL_GRACE:
                ray.cancel(ref, force=True)
            if now - checked > FEASIBLE_EVERY:
                checked = now
                gone = self._infeasible(needs)
                if gone is not None:  # no live node has it at all (not merely busy): Ray would wait for ever
                    ray.cancel(ref, force=True)
        try:
            return ray.get(ref), None
        except ray.exceptions.TaskCancelledError:
            return None, gone or "stopped by Ctrl-C on the driver before it came back (interrupted)"
        except ray.exceptions.RayTaskError as exc:  # the recording raised on the worker (never the agent's failure)
            return None, f"the worker's recording failed: {type(exc.cause).__name__ if exc.cause else 'error'}: {exc.cause or exc}"
        except ray.exceptions.RayError as exc:
            return None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else 'lost'}"

    def _infeasible(self, needs: dict[str, Any]) -> str | None:
        """Why no live node can run this cell any more (its resource left with a node), or None."""
        wanted = {"CPU": needs["num_cpus"], **needs["resources"]}
        have = self.ray.cluster_resources()
        short = [name for name, amount in wanted.items() if amount and have.get(name, 0) < amount]
        return f"no live node of the cluster offers {', '.join(short)} (start a node with it: docs/scale-out.md)" if short else None

    # ------------------------------------------------------------ what is shipped once
    def _matrix(self, cell: CellShipment) -> Any:
        with self._lock:
            ref = self._matrices.get(id(cell.matrix))
            if ref is None:
                ref = self._matrices[id(cell.matrix)] = self.ray.put(cell.shipped_matrix())
            return ref

    def _seed(self, cell: CellShipment) -> Any:
        key = cell.seed_key
        with self._lock:
            lock = self._seed_locks.setdefault(key, threading.Lock())
        with lock:  # staged once per task; other tasks stage meanwhile
            if key not in self._seeds:
                self._seeds[key] = self.ray.put(cell.ship_seed())
            return self._seeds[key]

    # ------------------------------------------------------------ the nodes
    def _sweep(self, run_id: str | None) -> None:
        """On every live node: remove what dead attempts left, and with `run_id` that run's folder."""
        ray = self.ray
        try:
            nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
        except ray.exceptions.RayError as exc:
            self.emit("sandbox.note", {"kind": "recover", "message": f"the node sweep could not list the nodes: {first_line(exc)}"})
            return
        try:
            refs = [self._sweeper.options(num_cpus=0, scheduling_strategy=self._pinned(node)).remote(run_id) for node in nodes]  # type: ignore[no-untyped-call]  # Ray's stubs
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=120)
        except ray.exceptions.RayError as exc:  # the cluster went away under the run's end
            self.emit("sandbox.note", {"kind": "recover", "message": f"the node sweep could not reach the cluster: {first_line(exc)} (each node's reaper removes what this run left there)"})
            return
        for node, ref in zip(nodes, refs):
            if ref not in ready:
                self.emit("sandbox.note", {"kind": "recover", "message": f"node {node[:12]} did not answer its sweep within 120 s: its reaper removes what this run left there"})
                continue
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError:
                # listed alive a moment before, gone now (a lost node): a task pinned to it cannot be
                # scheduled, which is no failure of the sweep; the node's own reaper ends what the run left there
                self.emit("sandbox.note", {"kind": "recover", "message": f"node {node[:12]} left the cluster before its sweep: its reaper removes what this run left there"})
                continue
            for line in result["done"]:
                self.emit("sandbox.note", {"kind": "recover", "message": f"node {result['host']}: {line}"})


def lost_message(attempt: dict[str, Any], failure: str | None, *, retried: bool) -> str:
    """What is known of an attempt that never came back, for its `error` action."""
    started = time.strftime("%H:%M:%S", time.localtime(attempt["started"]))
    beat = attempt["beat"] - attempt["started"]
    where = f"node {attempt['node'][:12]} ({attempt['host']}, pid {attempt['pid']})"
    then = "Ray ran the cell again" if retried else f"no attempt came back ({failure or 'lost'})"
    return f"attempt {attempt['number']} of this cell was lost on {where}: started {started}, last heard of {beat:.1f}s later; {then}"


def first_line(exc: BaseException) -> str:
    """An exception's first line (Ray's carry pages of context)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no detail'}"
