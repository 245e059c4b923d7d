"""The executor seam (benchtape.recorder.scheduler): an executor that records each job away
from the run's store (a shard of its own) and hands back a bundle gives the run the sessions
and verdicts the local executor gives it; the scheduler folds each bundle in one transaction."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchtape.recorder.bench_run import BenchSessions
from benchtape.recorder.runner import Runner, RunOptions
from benchtape.recorder.scheduler import LocalExecutor
from benchtape.replay.grading import GradingContext, build_checks, grade_stored, new_grading, scenario_status
from benchtape.spec.bench import load_bench
from benchtape.store.database import Store

DEMO = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"


class ShardBundle:
    """The sessions one job recorded into a shard: rows, actions, raw lines and the blobs they name."""

    def __init__(self, shard: Store, run_id: str, session_ids: list[str]):
        self.shard, self.run_id, self.session_ids = shard, run_id, session_ids
        self.folded_in_transaction: bool | None = None

    def fold_into(self, store: Store) -> None:
        self.folded_in_transaction = store.db.conn.in_transaction
        for sid in self.session_ids:
            if store.session_row(sid) is not None:
                continue  # folded already: a second bundle of the same session adds nothing
            row = self.shard.session_row(sid)
            store.new_session(self.run_id, row.scenario, cell_id=row.cell_id, attempt=row.attempt, harness=row.harness, model=row.model, params=row.params, workdir=row.workdir, parent_session=row.parent_session, session_id=sid)
            actions = self.shard.actions(sid)
            for action in actions:
                sha = action.data.get("sha256") if isinstance(action.data, dict) else None
                if sha:
                    store.put_blob(self.shard.get_blob(sha))
            store.append_raw(sid, list(enumerate(self.shard.raw_lines(sid), 1)))
            store.append(sid, actions)


class ShardExecutor:
    """Records every job into a store of its own (as a worker on another machine would), then
    hands the scheduler the record and the bundle to fold."""

    def __init__(self, runner: Runner, slots: int, folder: Path):
        self.slots = slots
        self.run_id = runner.run_id
        self.shard = Store(folder / "shard.db")
        self.shard_runner = Runner(self.shard, self.shard.new_run("run"), resources=runner.resources)
        self.pool = ThreadPoolExecutor(max_workers=slots)
        self.bundles: list[ShardBundle] = []

    def submit(self, job: Any, receive: Any, following: Any = None) -> Future[None]:
        def one() -> None:
            record = job.record(self.shard_runner)
            bundle = ShardBundle(self.shard, self.run_id, [record.session_id])
            self.bundles.append(bundle)
            receive(record, bundle)

        return self.pool.submit(one)

    def cancel(self) -> None:
        self.shard_runner.cancel.set()

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True)
        self.shard_runner.scripted.close()


def _run(tmp_path: Path, name: str, executor: Any = None) -> tuple[Store, list[tuple[str, int, str]], list[Any]]:
    bench = load_bench(DEMO)
    store = Store(tmp_path / f"{name}.db")
    sessions = BenchSessions(bench, RunOptions(repeat=2, concurrency=2))
    run_id = sessions.start_run(store)
    grading = new_grading(store, "live", {sc.name: sc.checks for sc in bench.scenarios}, bench_path=str(bench.path), run_id=run_id)
    made: list[Any] = []

    def make(runner: Runner, slots: int) -> Any:
        made.append(executor(runner, slots) if executor is not None else LocalExecutor(runner, slots))
        return made[-1]

    scheduler = sessions.scheduler(store, run_id, executor=make)
    outcomes: list[tuple[str, int, str]] = []

    def graded(record: Any) -> None:
        sc = record.scenario
        session, verdicts = grade_stored(store, grading, record.session_id, build_checks(sc.checks), GradingContext(bench.dir, resources=scheduler.resources))
        outcomes.append((sc.name, record.attempt, scenario_status(verdicts, session)))

    sessions.record(scheduler, graded)
    return store, sorted(outcomes), made


def test_an_executor_that_records_elsewhere_gives_the_run_what_the_local_one_gives(tmp_path):
    local_store, local, [_] = _run(tmp_path, "local")
    remote_store, remote, [executor] = _run(tmp_path, "remote", lambda runner, slots: ShardExecutor(runner, slots, tmp_path))
    assert remote == local and len(local) == 6  # the same sessions, graded the same
    assert all(b.folded_in_transaction for b in executor.bundles)  # each bundle in one transaction of the scheduler's
    for store in (local_store, remote_store):
        kinds = [[a.kind for a in store.actions(r.id)] for r in store.session_rows()]
        assert all(k[0] == "session.started" and k[-1] == "session.finished" for k in kinds)
    assert {r.id for r in remote_store.session_rows()} == {sid for b in executor.bundles for sid in b.session_ids}
    executor.bundles[0].fold_into(remote_store)  # a bundle folded twice adds nothing
    assert len(list(remote_store.session_rows())) == 6
