"""What runs on the Ray cluster for an evaluation: the attempt ledger (an actor beside the
driver) and one attempt of one cell (a task on a worker node). Imported only by the Ray
executor (benchtape.recorder.ray_executor), and by Ray on the workers: it needs `ray`.

An attempt (`run_attempt`):
1. tells the ledger it started (a synchronous call: an attempt is on record before it does
   anything) and which node, host and process it is, and makes sure the node's reaper runs;
2. records the cell into a shard of its own in the node folder (a real store, the same
   recorder as a local run: benchtape.recorder.remote_cell), beating to the ledger once a
   second (a `cancel` answer stops the cell's session as Ctrl-C does locally);
3. exports the shard as a bundle, shipping only the blobs the ledger says the run's store
   does not hold, tells the ledger it finished, removes the shard, and returns the bundle's
   bytes with the cell's recorded identity and session ids.

The ledger remembers every attempt of every job of the run (its token, node, process, when it
started, its last beat, whether it finished): the driver reads it to put on record the
attempts that never came back (their node died; Ray ran the cell again elsewhere). It lives
in memory for the run's length, owned by the driver; the driver copies what matters into the
store as it goes.
"""

from __future__ import annotations

import os
import platform
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import ray

BEAT = 1.0  # seconds between an attempt's beats to the ledger


@ray.remote(num_cpus=0, max_restarts=0, max_concurrency=16)  # type: ignore[call-overload]  # Ray 2.60's stubs type the function decorator only
class Ledger:
    """Every attempt of the run's jobs; the blobs the run's store holds; which jobs to cancel."""

    def __init__(self) -> None:
        self.attempts: dict[str, dict[str, Any]] = {}  # token -> the attempt
        self.by_job: dict[str, list[str]] = {}  # job -> its tokens, in the order they started
        self.blobs: set[str] = set()
        self.cancelled: set[str] = set()
        self.lock = threading.Lock()

    def start(self, job: str, token: str, facts: dict[str, Any]) -> int:
        """An attempt starts; returns its number (1 for the first of its job)."""
        with self.lock:
            tokens = self.by_job.setdefault(job, [])
            tokens.append(token)
            now = time.time()
            self.attempts[token] = {"job": job, "token": token, "number": len(tokens), "started": now, "beat": now, "finished": None, **facts}
            return len(tokens)

    def beat(self, token: str) -> str:
        """The attempt is alive; `cancel` when its job is to stop (Ctrl-C twice on the driver)."""
        with self.lock:
            attempt = self.attempts.get(token)
            if attempt is None:
                return "unknown"
            attempt["beat"] = time.time()
            return "cancel" if attempt["job"] in self.cancelled else "go"

    def finish(self, token: str) -> None:
        with self.lock:
            if token in self.attempts:
                self.attempts[token]["finished"] = time.time()

    def of_job(self, job: str) -> list[dict[str, Any]]:
        """The job's attempts, in the order they started."""
        with self.lock:
            return [dict(self.attempts[t]) for t in self.by_job.get(job, [])]

    def all(self) -> list[dict[str, Any]]:
        """Every attempt of the run, in the order they started."""
        with self.lock:
            return sorted((dict(a) for a in self.attempts.values()), key=lambda a: a["started"])

    def cancel(self, jobs: list[str]) -> None:
        with self.lock:
            self.cancelled.update(jobs)

    def held(self, shas: list[str]) -> list[str]:
        """Which of these blobs the run's store holds already (a bundle need not ship them)."""
        with self.lock:
            return [s for s in shas if s in self.blobs]

    def hold(self, shas: list[str]) -> None:
        """The run's store now holds these blobs (the driver says so once a fold committed)."""
        with self.lock:
            self.blobs.update(shas)

    def ping(self) -> bool:
        return True


def node_folder() -> Path:
    """This node's folder for benchtape's shards and seeds (BENCHTAPE_NODE_DIR, else the temp dir's)."""
    import tempfile

    return Path(os.environ.get("BENCHTAPE_NODE_DIR") or Path(tempfile.gettempdir()) / "benchtape-node")


def run_attempt(matrix: Any, work: Any, seed: Any, ledger: Any, job: dict[str, Any]) -> dict[str, Any]:
    """One attempt of one cell (see the module docstring); a Ray task (made remote by the executor,
    with the cell's resources and retries)."""
    from benchtape.recorder.node_reaper import (
        ensure_reaper,
        register_attempt,
        unregister_attempt,
    )
    from benchtape.recorder.runner import Runner
    from benchtape.sandbox.run_resources import RunResources
    from benchtape.store.database import Store

    token = uuid.uuid4().hex
    node = ray.get_runtime_context().get_node_id()
    facts = {"node": node, "host": platform.node(), "pid": os.getpid()}
    number = ray.get(ledger.start.remote(job["key"], token, facts))
    base = node_folder()
    folder = base / job["run_id"]
    folder.mkdir(parents=True, exist_ok=True)
    register_attempt(base, token)
    ensure_reaper(base)
    shard = Store(fresh_shard(folder, folder / f"{token}.db"))
    resources = RunResources()
    runner = Runner(shard, shard.new_run("shard"), resources=resources)
    beating = _Beats(ledger, token, runner.cancel)
    try:
        resources.open()
        try:
            record = work.record(runner, matrix, seed, folder)
        finally:
            beating.stop()
            resources.close()
            runner.scripted.close()
        root = shard.session_row(record.sessions[0])
        assert root is not None
        key = {"scenario": root.scenario, "cell_id": root.cell_id, "attempt": root.attempt}
        have = ray.get(ledger.held.remote(shard.bundle_blob_names(record.sessions)))
        bundle = shard.export_bundle(record.sessions, run_id=job["run_id"], key=key, token=token, have=have, facts={**facts, "attempt": number})
        ledger.finish.remote(token)  # a note for whoever reads the ledger: the driver goes by what comes back
        return {"bundle": bundle.to_bytes(), "identity": record.identity, "sessions": list(record.sessions), "token": token, "attempt": number, **facts}
    finally:
        shard.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{shard.path}{suffix}").unlink(missing_ok=True)
        unregister_attempt(base, token)


def fresh_shard(folder: Path, path: Path) -> Path:
    """A new shard at `path`: a copy of this process's empty store of the current schema (made
    once per worker process and run), so an attempt does not pay for creating and migrating a
    store (~10-25 ms a cell)."""
    import shutil

    from benchtape.store.database import Store

    template = folder / f".template-{os.getpid()}.db"
    if not template.exists():
        scratch = folder / f".template-{os.getpid()}-{uuid.uuid4().hex[:8]}.db"
        Store(scratch).close()  # its last connection closed: the WAL is checkpointed into the file and removed
        os.rename(scratch, template)
    shutil.copyfile(template, path)
    return path


class _Beats:
    """The attempt's beats to the ledger, on a thread: a `cancel` answer sets the runner's cancel."""

    def __init__(self, ledger: Any, token: str, cancel: threading.Event):
        self.ledger, self.token, self.cancel = ledger, token, cancel
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="benchtape-beats", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(BEAT):
            try:
                if ray.get(self.ledger.beat.remote(self.token), timeout=10) == "cancel":
                    self.cancel.set()
            except Exception:  # noqa: BLE001 - the driver (and its ledger) is gone: Ray ends this worker
                return

    def stop(self) -> None:
        self.done.set()


def sweep_node(run_id: str | None, *, reap: bool = True) -> dict[str, Any]:
    """On one node: remove what dead attempts left (their containers, processes and session
    folders: benchtape.recorder.node_reaper.reap) and, with `run_id`, that run's folder (its shards
    and seeds). A Ray task the driver aims at each node at the run's start and end."""
    import shutil

    from benchtape.recorder.node_reaper import reap as reap_node

    base = node_folder()
    done = reap_node(base) if reap else []
    if run_id:
        shutil.rmtree(base / run_id, ignore_errors=True)
        try:
            base.rmdir()  # the node folder itself, once nothing of any run is left in it (it was left behind in /tmp)
        except OSError:
            pass  # another run's shards, or the reaper's, are still there
    return {"node": ray.get_runtime_context().get_node_id(), "host": platform.node(), "done": done}
