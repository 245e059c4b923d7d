"""Tasks from history: scan time on the real repository's full history, and what the hidden
verifier costs per graded cell against a bare `pytest` run of the same tests.

- scan: `task scan` (the library call) over toolz's whole mainline (shared/realrepos), the
  median of 5;
- verifier overhead: grading one candidate (the reference patch of PR 434) through
  `grade_candidate` (export of the base tree, a fresh home-level box, both patches applied,
  the verify command) against `python3 -m pytest -q FILE` in a tree already patched: the
  difference is what benchtape adds per cell. Median of 5 each.

Run by `make bench` (`python benchmarks/tasks.py`). Not a test: it prints numbers.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "harvest"))
TASK = "434"


def timed(fn, n: int = 5) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    from harvestkit import BUNDLE

    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.sandbox.checkout import export_commit
    from benchtape.sandbox.patches import apply_patch
    from benchtape.spec.project import load_project
    from benchtape.spec.task import load_task, task_dirs
    from benchtape.tasks.harvest import scan

    if BUNDLE is None:
        print("tasks: SKIPPED: shared/realrepos/toolz.bundle not found")
        return 0
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    scratch = Path(tempfile.mkdtemp(prefix="benchtape-bench-tasks-"))
    try:
        repo = scratch / "toolz"
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(repo)], check=True)
        project = load_project(repo)
        commits = int(subprocess.run(["git", "rev-list", "--count", "--first-parent", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout)
        found = scan(project, limit=200)
        scan_s = timed(lambda: scan(project, limit=200))
        print(f"tasks: scan of the full history ({commits} mainline commits, {len(found.candidates)} candidates): {scan_s * 1000:.0f} ms (median of 5)")

        subprocess.run([sys.executable, "-m", "benchtape", "task", "create", TASK], cwd=repo, check=True, capture_output=True)
        task = load_task(task_dirs(repo)[TASK])
        candidate = task.reference()
        assert grade_candidate(project, task, candidate).passed
        graded_s = timed(lambda: grade_candidate(project, task, candidate))
        bare = scratch / "bare"
        export_commit(repo, task.source.base_commit, bare)
        apply_patch(bare, candidate)
        apply_patch(bare, task.tests_patch())
        argv = ["python3", "-m", "pytest", "-q", *task.verify.command.split()[4:]]
        bare_s = timed(lambda: subprocess.run(argv, cwd=bare, capture_output=True, check=True))
        print(f"tasks: verifier per cell (PR {TASK}, level home): {graded_s * 1000:.0f} ms; bare `{' '.join(argv)}`: {bare_s * 1000:.0f} ms; overhead {(graded_s - bare_s) * 1000:+.0f} ms (the machine is shared: within the noise of pytest's own start-up when near 0)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
