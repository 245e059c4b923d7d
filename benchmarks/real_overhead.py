"""Per-session time with the real binaries beside the mock, and benchtape's share of it.

Each session is timed from within the run itself: from the `session.started` event (the
sandbox is open, the session row exists) to the `verdicts` event (recorded, snapshotted and
graded), and the harness process's own lifetime is the `wall_ms` the runner recorded for
it. benchtape's share is the difference, per session, so load on the machine moves both
sides together instead of being subtracted across separately timed runs.

    python benchmarks/real_overhead.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchtape.api import run_benches  # noqa: E402
from recorder.runner import RunOptions  # noqa: E402
from recorder.spec.bench import load_bench  # noqa: E402
from recorder.store import Store  # noqa: E402

BENCHES = {
    "mock": ROOT / "fixtures-red" / "demo" / "bench.yaml",
    "claude-code": ROOT / "fixtures-red" / "scripted" / "claude-code.yaml",
    "codex": ROOT / "fixtures-red" / "scripted" / "codex.yaml",
}
SCENARIO = "fixes-the-bug"
TARGET_MS = 10.0  # benchtape's share of a session at concurrency 1 (issue 16, item 6)


def measure(tool: str, repeat: int, db: Path) -> list[tuple[float, float]]:
    """(session total ms, harness process ms) per session."""
    bench = load_bench(BENCHES[tool])
    starts: dict[str, float] = {}
    done: list[tuple[str, float]] = []

    def on_event(kind: str, data: dict) -> None:
        if kind == "session.started":
            starts[data["session_id"]] = time.perf_counter()
        elif kind == "verdicts":
            done.append((data["session_id"], time.perf_counter()))

    store = Store(db)
    run_benches([bench], store, RunOptions(repeat=repeat, concurrency=1, scenarios=[SCENARIO]), on_event=on_event)
    out = []
    for sid, at in done:
        wall = store.load_session(sid).metrics.wall_ms or 0.0
        out.append(((at - starts[sid]) * 1000, wall))
    store.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from adapters.binaries import resolve
    from recorder.errors import BadInput

    with tempfile.TemporaryDirectory(prefix="benchtape-real-") as tmp:
        for tool in BENCHES:
            if tool != "mock":
                try:
                    resolve(tool)
                except BadInput as exc:
                    print(f"{tool:<12} skipped: {exc.what} (run `make agents`)")
                    continue
            samples = measure(tool, args.repeat, Path(tmp) / f"{tool}.db")
            total = statistics.median(t for t, _ in samples)
            agent = statistics.median(w for _, w in samples)
            share = statistics.median(t - w for t, w in samples)
            print(f"{tool:<12} per session: median {total:7.0f} ms in all, the harness process {agent:7.0f} ms, benchtape's share {share:5.0f} ms ({share / total:4.0%}) over {len(samples)} sessions")
            # the share includes live grading of the bench's checks (the demo's exec checks run pytest)
            record(f"benchtape's share per session (live grading included), {tool}, concurrency 1", f"{share:.0f} ms", f"the agent's own {agent:.0f} ms", f"≤ {TARGET_MS:g} ms", share <= TARGET_MS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
