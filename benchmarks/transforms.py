"""The cost of output transforms at grading, now that they run in the grading host's
interpreter (a process) instead of inside benchtape.

A bench of K checks, each with its own JavaScript transform, and a scenario transform, is
graded over N stored sessions (recorded once, by the real mock harness) four ways:

- no transforms: the same checks without them (the floor);
- as shipped: every transform of a session in one node process, started when a check first
  reads a transformed output;
- one process per check: each check graded alone, so each starts its own (what batching avoids);
- a marked Python transform on every check, batched: one python3 process per session.

It counts the node processes each way starts (a counting `node` first on PATH) and prints
wall milliseconds per session and the CPU of the processes started (RUSAGE_CHILDREN). The
target: one process per language per session, whatever K is. Before this change a transform
was a Python `eval` inside benchtape (microseconds, and no isolation at all).

Run by `make bench`; `--sessions 5 --checks 10` for a quick run. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchtape.core.results import CheckSpec  # noqa: E402
from benchtape.replay.grading import GradingContext, NoWorkspace, build_checks, grade_session  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

BENCH = """
harness: mock
defaults: {interactive: false}
scenarios:
  - name: t
    prompt: p
    mock: {steps: [{say: "  The answer is 42.  "}]}
"""


def sessions(folder: Path, n: int) -> list:
    """N sessions recorded by `benchtape run` with the mock harness, loaded from the store."""
    (folder / "bench.yaml").write_text(BENCH)
    db = folder / "t.db"
    subprocess.run([sys.executable, "-m", "benchtape", "run", str(folder / "bench.yaml"), "--db", str(db), "--repeat", str(n), "--concurrency", "1"], check=True, capture_output=True)
    store = Store(db)
    return [store.load_session(row.id, row) for row in store.session_rows()]


def counting_node(folder: Path) -> Path:
    """A `node` first on PATH that logs each start, then is the real node."""
    real = shutil.which("node")
    if real is None:
        sys.exit("node is not on PATH: nothing to measure (apt-get install nodejs)")
    shim, log = folder / "shim", folder / "node-starts"
    shim.mkdir()
    (shim / "node").write_text(f"#!/bin/sh\necho x >> {log}\nexec {real} \"$@\"\n")
    (shim / "node").chmod(0o755)
    os.environ["PATH"] = f"{shim}:{os.environ['PATH']}"
    return log


def specs(k: int, transform: bool, python: bool = False) -> list[CheckSpec]:
    def t(i: int):
        if not transform:
            return None
        return {"python": f"output.strip()[:{i + 5}]"} if python else f"output.trim().slice(0, {i + 5})"

    return [CheckSpec(type="contains", value="The", transform=t(i)) for i in range(k)]


def measure(label: str, all_sessions: list, checks_of, log: Path, scenario: str | None, one_by_one: bool = False) -> tuple[float, float, float]:
    """(wall ms per session, node starts per session, child CPU ms per session)."""
    before_starts = len(log.read_text().splitlines()) if log.exists() else 0
    before_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for s in all_sessions:
        checks = checks_of()
        context = GradingContext(None, {}, scenario)
        groups = [[c] for c in checks] if one_by_one else [checks]
        for group in groups:
            verdicts = grade_session(s, group, NoWorkspace(), context)
            assert all(v.result.status == "PASS" for v in verdicts), [(v.result.status, v.result.reason) for v in verdicts]
    wall = (time.perf_counter() - started) * 1000 / len(all_sessions)
    after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after_cpu.ru_utime + after_cpu.ru_stime) - (before_cpu.ru_utime + before_cpu.ru_stime)) * 1000 / len(all_sessions)
    starts = ((len(log.read_text().splitlines()) if log.exists() else 0) - before_starts) / len(all_sessions)
    print(f"  {label:<44} {wall:9.1f} ms/session  {starts:5.1f} node starts/session  {cpu:8.1f} ms child CPU/session")
    return wall, starts, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--checks", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchtape-bench-transforms-") as tmp:
        folder = Path(tmp)
        recorded = sessions(folder, args.sessions)
        log = counting_node(folder)
        k = args.checks
        built = {key: build_checks(specs(k, *flags)) for key, flags in {"none": (False,), "js": (True,), "py": (True, True)}.items()}
        print(f"output transforms: {len(recorded)} sessions × {k} checks, each check with its own transform, plus a scenario transform")
        measure("no transforms (floor)", recorded, lambda: built["none"], log, None)
        _, shipped, _ = measure("JavaScript, batched per session (shipped)", recorded, lambda: built["js"], log, "output.trim()")
        measure("JavaScript, one process per check", recorded, lambda: built["js"], log, "output.trim()", one_by_one=True)
        measure("Python ({python: ...}), batched per session", recorded, lambda: built["py"], log, None)
        record("transforms: node processes per session", f"{shipped:g} for {k + 1} transforms", "one per check would be " + str(k), "1 per language", shipped == 1)


if __name__ == "__main__":
    main()
