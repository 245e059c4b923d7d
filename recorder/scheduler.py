"""One run loop: the scheduler owns a run's sessions and cells; an executor records them.

    with Scheduler(store, run_id, concurrency=4) as scheduler:   # the orphan sweep; the run's resources
        ran = scheduler.run(jobs, on_record)                    # jobs: a bench run's sessions, an evaluation's cells

A job (`Job`) is one unit of a run: a bench run's (scenario, attempt)
(benchtape.recorder.bench_run), an evaluation's cell (benchtape.recorder.cellrun). The
scheduler does what is done once per run, for every kind of run: first the sweep of what a
killed benchtape left (its sessions finished, its sandboxes removed), then the run's own
sandbox resources (benchtape.sandbox.run_resources: the inode pool, the spare folders, the
parked cleanups), given back at its end. It hands jobs to an `Executor`, at most as many at
once as it has slots (one when any job's level runs alone), and receives each finished
record: it folds what the executor recorded elsewhere into the store, then hands the record
to `on_record` (the front door's live grading). Nothing else in the run path knows which
executor ran.

Recording and folding. The local executor records into the run's store as the harness
prints, line by line (a `kill -9` keeps every action stored so far, and `recover` finishes
the session from its capture files): its records arrive already stored, with nothing to
fold. An executor that records elsewhere (another machine's shard) hands a `Bundle` with
its record, which the scheduler writes into the store in one transaction: the store's one
writer for what did not stream into it.

Ctrl-C (`Stopping`): the first stops scheduling; the `cancel_at`-th stops the jobs in flight
too (their sessions are kept, as interrupted). A bench run cancels at the first, an
evaluation at the second (the cells in flight finish and are measured).
"""

from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from benchtape.recorder.runner import Event, Interrupted, Runner
from benchtape.sandbox.levels import runs_alone
from benchtape.sandbox.run_resources import RunResources
from benchtape.store.views import RecordingStore

POLL = 0.2  # seconds the scheduler waits for a job at a time (Ctrl-C is taken between waits)


class Job(Protocol):
    """One unit of a run, recorded by an executor into a finished record."""

    @property
    def level(self) -> str:
        """Its sandbox level (a level that runs alone makes the run one job at a time)."""

    def record(self, runner: Runner) -> Any:
        """Record it with `runner` (its sandbox opened and closed here); returns its record."""

    def prepare_ahead(self, runner: Runner) -> None:
        """Start making its sandbox, while the job before it runs its harness (one slot only)."""


class Bundle(Protocol):
    """What an executor recorded away from the run's store (a node-local shard): written into
    the store by the scheduler, in one transaction, idempotent on the sessions' ids."""

    def fold_into(self, store: RecordingStore) -> None: ...


Receive = Callable[..., None]  # receive(record, bundle=None): the scheduler's, called once per finished job


class Executor(Protocol):
    """Where jobs are recorded. `submit` returns at once; the executor hands the job's finished
    record to `receive` (with the `Bundle` to fold when it recorded elsewhere) on a thread of
    its own, never the scheduler's (which only schedules, and takes Ctrl-C); the future is done
    once `receive` returned, and raises what recording raised."""

    slots: int

    def submit(self, job: Job, receive: Receive, following: Job | None = None) -> Future[None]:
        """`following`: with one slot, the job that will be submitted next (its sandbox may be made ahead)."""

    def cancel(self) -> None:
        """Stop the jobs in flight (their sessions are kept, as interrupted)."""

    def shutdown(self) -> None:
        """Wait for the jobs in flight; none is started any more."""


class LocalExecutor:
    """Today's thread pool: `slots` jobs at once in this process, each recorded by the run's
    runner into the run's store as it happens, and received on the thread that recorded it
    (so a session is graded while the other slots record)."""

    def __init__(self, runner: Runner, slots: int):
        self.runner = runner
        self.slots = slots
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="benchtape-session")

    def submit(self, job: Job, receive: Receive, following: Job | None = None) -> Future[None]:
        return self._pool.submit(self._one, job, receive, following)

    def _one(self, job: Job, receive: Receive, following: Job | None) -> None:
        if self.slots == 1:  # one job at a time: the runner may hold this one's lookahead
            self.runner.ahead = (lambda: following.prepare_ahead(self.runner)) if following is not None else None
        receive(job.record(self.runner))

    def cancel(self) -> None:
        self.runner.cancel.set()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class Stopping:
    """What Ctrl-C does to a run: the first stops scheduling (`stopping` is emitted), the
    `cancel_at`-th stops the jobs in flight too (`cancelling` is emitted)."""

    cancel_at: int = 1
    stopping: str | None = None
    cancelling: str | None = None


@dataclass
class Ran:
    """What `Scheduler.run` did: the records in the order they finished, and whether Ctrl-C stopped it."""

    records: list[Any] = field(default_factory=list)
    interrupted: bool = False
    unscheduled: int = 0  # jobs never started


ExecutorFactory = Callable[[Runner, int], Executor]


class Scheduler:
    """One run's loop: made for the run's row (the front door creates it), entered once
    (sweep, resources), its `run` given the jobs."""

    def __init__(self, store: RecordingStore, run_id: str, *, concurrency: int = 4, keep_sandbox: bool = False, on_event: Event | None = None, executor: ExecutorFactory = LocalExecutor):
        self.store = store
        self.run_id = run_id
        self.concurrency = concurrency
        self.keep_sandbox = keep_sandbox
        self.on_event: Event = on_event or (lambda kind, data: None)
        self.resources = RunResources()  # handed to what uses them: the sandboxes, and the grading of this run's sessions
        self.runner = Runner(store, run_id, resources=self.resources, on_event=self.on_event)
        self._executor = executor

    def __enter__(self) -> Scheduler:
        self.recover_orphans()
        self.resources.open()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.resources.close()  # the sessions' folders, removed off their path: gone when the run returns
        finally:
            self.runner.scripted.close()

    def recover_orphans(self) -> None:
        """What a killed benchtape left (sessions to finish, sandboxes, a ~/.claude to put back,
        bundles that reached this store's spool but were not folded), first."""
        from benchtape.recorder.recover import sweep
        from benchtape.recorder.spool import fold_spooled

        for found in sweep() + fold_spooled(self.store):
            self.on_event("sandbox.note", {"kind": "recover", "message": found})

    def run(self, jobs: Sequence[Job], on_record: Callable[[Any], None], *, stopping: Stopping = Stopping()) -> Ran:
        """Record every job, `concurrency` at a time (one when a job's level runs alone), each
        finished record folded and handed to `on_record` on the executor's thread."""
        slots = 1 if any(runs_alone(job.level) for job in jobs) else max(1, self.concurrency)
        executor = self._executor(self.runner, slots)
        ran = Ran()
        lock = threading.Lock()

        def receive(record: Any, bundle: Bundle | None = None) -> None:
            if bundle is not None:
                with self.store.transaction():
                    bundle.fold_into(self.store)
            on_record(record)
            with lock:
                ran.records.append(record)

        pending = list(reversed(jobs))
        flying: set[Future[None]] = set()
        interrupts = 0
        try:
            while flying or (pending and not interrupts):
                try:
                    while pending and len(flying) < slots and not interrupts:
                        job = pending.pop()
                        flying.add(executor.submit(job, receive, pending[-1] if slots == 1 and pending else None))
                    finished, flying = _wait(flying)
                    for fut in finished:
                        try:
                            fut.result()  # a bug in recording or in `on_record` surfaces here, not silently
                        except Interrupted:
                            ran.unscheduled += 1  # it started after the run was cancelled: nothing recorded
                except KeyboardInterrupt:
                    interrupts += 1
                    ran.interrupted = True
                    if interrupts == stopping.cancel_at:
                        executor.cancel()
                        if stopping.cancelling:
                            self.on_event(stopping.cancelling, {"in_flight": len(flying)})
                    elif interrupts < stopping.cancel_at and stopping.stopping:
                        self.on_event(stopping.stopping, {"in_flight": len(flying), "unscheduled": len(pending)})
            ran.unscheduled += len(pending)
        finally:
            executor.shutdown()
        return ran


def _wait(flying: set[Future[None]]) -> tuple[set[Future[None]], set[Future[None]]]:
    if not flying:
        return set(), set()
    finished, rest = wait(flying, timeout=POLL, return_when=FIRST_COMPLETED)
    return set(finished), set(rest)
