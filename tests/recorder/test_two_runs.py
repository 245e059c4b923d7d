"""Two runs at once in one process (the public API from a notebook) do not interfere: each
records into its own store, and each keeps its own inode pool, spare folders and cleanups
(benchtape.sandbox.run_resources) until its own end, however the other ends first."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import benchtape
from benchtape.sandbox.inodes import InodePool
from benchtape.sandbox.spares import Spares

BENCH = """\
harness: mock
defaults: {{sandbox: home, timeout: 60s}}
scenarios:
  - name: {name}
    prompt: "make the file"
    testdata: tree
    mock:
      steps:
        - {{sleep: {sleep}}}
        - {{tool: Write, input: {{file_path: made.txt, content: "made"}}}}
        - {{say: "made it"}}
    checks:
      - type: exec
        args: {{cmd: [sh, -c, "test -f made.txt && test -f seed.txt"]}}
"""


def _bench(folder: Path, name: str, sleep: float) -> Path:
    (folder / "tree").mkdir(parents=True)
    (folder / "tree" / "seed.txt").write_text("seed\n")
    (folder / "bench.yaml").write_text(BENCH.format(name=name, sleep=sleep))
    return folder / "bench.yaml"


def test_two_runs_at_once_keep_their_stores_pools_and_spares_to_their_own_end(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    grading_folders: list[tuple[int, bool]] = []  # (the pool's id, whether it was still pooling)
    spares_taken: list[tuple[int, bool]] = []  # (the spares' id, whether a spare was ready)
    temp_dir, take = InodePool.temp_dir, Spares.take

    def spy_temp_dir(self, prefix):
        grading_folders.append((id(self), self.enabled))
        return temp_dir(self, prefix)

    def spy_take(self, key):
        folder = take(self, key)
        spares_taken.append((id(self), folder is not None))
        return folder

    monkeypatch.setattr(InodePool, "temp_dir", spy_temp_dir)
    monkeypatch.setattr(Spares, "take", spy_take)
    short = _bench(tmp_path / "short", "short-one", 0.1)
    long = _bench(tmp_path / "long", "long-one", 0.5)
    ended: dict[str, float] = {}
    graded_at: list[float] = []
    errors: list[BaseException] = []
    outcomes: dict[str, object] = {}

    def run(name: str, bench: Path, repeat: int) -> None:
        def on_event(kind: str, data: dict) -> None:
            if kind == "verdicts" and name == "long":
                graded_at.append(time.monotonic())

        try:
            store = benchtape.Store(tmp_path / f"{name}.db")
            outcomes[name] = benchtape.run_benches(benchtape.load_benches([bench]), store, benchtape.RunOptions(repeat=repeat, concurrency=1), on_event=on_event)
        except BaseException as exc:  # noqa: BLE001 - said by the assertion below
            errors.append(exc)
        finally:
            ended[name] = time.monotonic()

    threads = [threading.Thread(target=run, args=("short", short, 1)), threading.Thread(target=run, args=("long", long, 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    try:
        for name, scenario, count in (("short", "short-one", 1), ("long", "long-one", 5)):
            outcome = outcomes[name]
            assert outcome.tally.summary()["passed"] == count  # every session graded from its own store's snapshot
            store = benchtape.Store(tmp_path / f"{name}.db")
            assert [r.scenario for r in store.session_rows()] == [scenario] * count  # each run's sessions in its own store only
    finally:
        for outcome in outcomes.values():
            outcome.close()
    assert any(at > ended["short"] for at in graded_at)  # the runs overlapped: the long one graded after the short one ended
    pools = {pool for pool, _ in grading_folders}
    assert len(pools) == 2 and all(pooling for _, pooling in grading_folders)  # two pools; neither discarded by the other's end
    by_spares: dict[int, list[bool]] = {}
    for spares, ready in spares_taken:
        by_spares.setdefault(spares, []).append(ready)
    assert len(by_spares) == 2
    assert any(any(ready[1:]) for ready in by_spares.values())  # the long run: a later session opened in a spare made ahead
    assert not list(temp.glob("benchtape-*")), "a session folder, spare or pool was left behind"
