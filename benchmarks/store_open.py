"""What checking a store's schema and guards costs every open (issue 31: a store whose triggers
were dropped is refused by every command, so every open checks).

Builds a store of --sessions demo-shaped sessions, then times, in this process, opening it
read-only (what `benchtape sessions` does) with the check and without it, interleaved, and the
check alone on an open connection; and `benchtape sessions` end to end, for scale. Target: the
check adds under 2 ms an open (a `PRAGMA quick_check` instead would read every page: it is
printed beside, for the same store, to show why an open does not run one).

Run by `make bench`. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchtape.core.model import Action  # noqa: E402
from benchtape.store import integrity  # noqa: E402
from benchtape.store.database import MIGRATIONS, Store  # noqa: E402

TARGET_MS = 2.0


def build(path: Path, sessions: int) -> None:
    store = Store(path)
    run = store.new_run("run")
    text = "x" * 400
    for i in range(sessions):
        sid = store.new_session(run, f"scenario-{i % 20}")
        store.append(sid, [Action("session.started", {"prompt": "p"}), *(Action("tool.call", {"call_id": f"c{n}", "tool": "Read", "input": {"file_path": text}}) for n in range(30)), Action("session.finished", {"status": "ok"})])
    store.close()


def open_ms(path: Path, check: bool, rounds: int) -> list[float]:
    """Opening the store and its first read, as a command does: the first statement on a
    connection parses the whole schema, whichever statement it is, so an open timed without a
    read would charge that parse to the check."""
    out = []
    for _ in range(rounds):
        started = time.perf_counter()
        store = Store(path, readonly=True, check_schema=check)
        store.newest_id("sessions")
        store.close()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        build(path, args.sessions)
        size = path.stat().st_size / 1e6
        checked, unchecked = [], []
        for _ in range(5):  # interleaved: load on the other core hits both alike
            checked += open_ms(path, True, args.rounds // 5)
            unchecked += open_ms(path, False, args.rounds // 5)
        store = Store(path, readonly=True)
        conn = store.db.conn
        started = time.perf_counter()
        for _ in range(args.rounds):
            integrity.check_schema(conn, len(MIGRATIONS), path)
        alone = (time.perf_counter() - started) * 1000 / args.rounds
        started = time.perf_counter()
        store.page_check(quick=True)
        quick = (time.perf_counter() - started) * 1000
        store.close()
        walls = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "benchtape", "sessions", "--db", str(path), "--limit", "20"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            walls.append((time.perf_counter() - started) * 1000)
    added = min(checked) - min(unchecked)  # the fastest of each: what the work costs, load on the other core aside
    print(f"store of {args.sessions:,} sessions, {size:.1f} MB")
    print(f"  open read-only and a first read, fastest of {len(checked)}: {min(unchecked):.2f} ms without the check, {min(checked):.2f} ms with it (+{added:.2f} ms; medians {statistics.median(unchecked):.2f} and {statistics.median(checked):.2f})")
    print(f"  the check alone on an open connection: {alone:.3f} ms")
    print(f"  PRAGMA quick_check of the same store: {quick:.0f} ms (grows with the file: why an open does not run it)")
    print(f"  `benchtape sessions --limit 20` end to end: {statistics.median(walls):.0f} ms")
    record("schema check per open", f"+{added:.2f} ms", f"`sessions` {statistics.median(walls):.0f} ms", f"< {TARGET_MS:g} ms", added < TARGET_MS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
