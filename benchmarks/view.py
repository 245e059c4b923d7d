"""Speed of `benchtape view` on a large store: a 1 GB store of 10,000 sessions serves its first
page in under 1 s and a 2,000-action session's page in under 0.5 s, each beside `sqlite3`
reading the same rows; and how fast search scans it.

Builds the store through the real `Store.append` (sessions of ~100 actions whose tool outputs
make them ~100 kB each, in 4 runs, each session graded with 3 verdicts; one session of 2,000
actions with a subagent), then serves it with the real viewer (uvicorn in a thread) and
times each page over HTTP from the first byte asked to the last received, in CPU seconds of
the process (the viewer's threads and the client's), with wall seconds beside them: the
machine may be busy with other work, which stretches wall time but not the CPU a page needs:

- `/` (the newest 50 sessions and the run panel): the first request after start, then the
  median of ROUNDS; the floor is `sqlite3` reading the rows that page shows (the
  `session_summary` view's newest 50 rows, which derives the same columns);
- `/session/ID` of the 2,000-action session; the floor is its actions read from `sqlite3`;
- `/search?q=…` for a word in every session's output (a page of hits) and a scan of the
  whole store for a word that is nowhere (its rate in MB/s, against `sqlite3`'s own LIKE scan).

Run by `make bench`; `--sessions 2000` for a quick run. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record
from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import Store

FIRST_PAGE_S, SESSION_PAGE_S = 1.0, 0.5
ROUNDS = 5
RUNS = 4
ACTIONS = 100
OUTPUT = 2000  # characters of each tool output: ~100 kB a session
BIG = 2000
BIG_SCENARIO = "the-long-one"
TOOLS = ("Read", "Grep", "Edit", "Bash")
CHECKS = [("checks[0]", "contains"), ("checks[1]", "session:tool-used"), ("checks[2]", "cost")]


def session_actions(n: int, scenario: str, actions: int = ACTIONS, subagent: int = 0) -> list[Action]:
    """A session shaped like a real one: prompt, calls paired with results, thoughts, metrics;
    with `subagent`, about that many of its actions on a subagent's thread."""
    out = [
        Action("session.started", {"scenario": scenario, "harness": "mock", "model": "m", "prompt": f"fix bug {n} in calc.py", "work_dir": "/tmp/w"}),
        Action("environment.expected", {"sandbox": "home", "plugins": []}),
        Action("message.user", {"text": f"fix bug {n} in calc.py"}),
    ]
    if subagent:
        out.append(Action("subagent.spawned", {"thread": "agent-1", "call_id": "spawn-1", "agent": "Explore", "prompt": "look around"}))
    call = 0
    while len(out) < actions - 5:
        call += 1
        thread = "agent-1" if subagent and call * 2 < subagent else "main"
        tool, cid = TOOLS[call % len(TOOLS)], f"call_{call:05d}"
        out.append(Action("tool.call", {"call_id": cid, "tool": tool, "input": {"file_path": f"src/mod_{call}.py", "pattern": "def .*"}}, thread=thread))
        out.append(Action("tool.result", {"call_id": cid, "output": (f"{call}: def handler_{call}(request): return respond(request)\n" * (OUTPUT // 50))[:OUTPUT], "is_error": False}, thread=thread))
        if call % 3 == 0:
            out.append(Action("thinking", {"text": f"step {call}: next, mod_{call + 1}"}, thread=thread))
    out += [
        Action("message.assistant", {"text": f"done: changed {n % 7 + 1} files"}),
        Action("metrics", {"cost_usd": 0.01 + (n % 10) / 1000, "duration_ms": 1200, "tokens_in": 1000, "tokens_out": 200}),
        Action("final_output", {"text": f"done: changed {n % 7 + 1} files"}),
        Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1300.0}),
    ]
    return out


def verdict_rows(n: int) -> list[dict]:
    return [
        {"check_path": path, "type": kind, "metric": None, "spec": {"type": kind, "value": "done"}, "spec_sha256": f"{i:064d}", "result": Result.of((n + i) % 5 != 0, f"{kind} said so"), "readout": False}
        for i, (path, kind) in enumerate(CHECKS)
    ]


def build_store(db: Path, sessions: int) -> str:
    """The store; returns the 2,000-action session's id (its scenario is BIG_SCENARIO)."""
    store = Store(db)
    per_run = max(1, sessions // RUNS)
    made = 0
    started = time.perf_counter()
    big = ""
    for r in range(RUNS):
        run_id = store.new_run("run", bench_path=f"bench-{r}.yaml", harness="mock", model="m")
        grading = store.new_grading("live", checkset_sha256="0" * 64, catalog_version="bench", bench_path=f"bench-{r}.yaml", run_id=run_id)
        count = per_run if r < RUNS - 1 else sessions - made
        for start in range(0, count, 100):
            batch = []
            with store.transaction():
                for _ in range(min(100, count - start)):
                    scenario = BIG_SCENARIO if made == sessions // 2 else f"task-{made % 50}"
                    sid = store.new_session(run_id, scenario, harness="mock", model="m")
                    if scenario == BIG_SCENARIO:
                        big = sid
                        actions = session_actions(made, scenario, BIG, subagent=200)
                    else:
                        actions = session_actions(made, scenario)
                    for at in range(0, len(actions), 50):
                        store.append(sid, actions[at : at + 50])
                    batch.append((sid, verdict_rows(made)))
                    made += 1
            store.add_verdicts_many(grading, batch)
    store.close()
    print(f"built {made} sessions (~{ACTIONS} actions each, one of {BIG}) in {time.perf_counter() - started:.0f}s → {db.stat().st_size / 1e9:.2f} GB")
    return big


def timed_get(url: str) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process: the viewer's threads and the client, bytes)."""
    started, cpu = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(url, timeout=120) as r:
        size = len(r.read())
        assert r.status == 200, url
    return time.perf_counter() - started, time.process_time() - cpu, size


def medians(url: str, rounds: int = ROUNDS) -> tuple[float, float]:
    runs = [timed_get(url) for _ in range(rounds)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def best_floor(fn, rounds: int = ROUNDS) -> float:
    """The median CPU seconds of `fn` (sqlite3 reading rows in this process)."""
    times = []
    for _ in range(rounds):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--db", type=Path, help="reuse (or build) the store here instead of a temp file")
    args = ap.parse_args()
    from benchtape.view.fulltext import like_pattern, search
    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    with tempfile.TemporaryDirectory(prefix="benchtape-view-") as tmp:
        db = args.db or Path(tmp) / "view.db"
        if not db.exists():
            build_store(db, args.sessions)
        ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        big = ro.execute("SELECT id FROM sessions WHERE scenario = ?", [BIG_SCENARIO]).fetchone()[0]
        big_actions = ro.execute("SELECT COUNT(*) FROM actions WHERE session_id = ?", [big]).fetchone()[0]
        n_sessions = ro.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        size_gb = db.stat().st_size / 1e9

        def newest() -> list[Any]:
            return ro.execute("SELECT * FROM session_summary ORDER BY session_id DESC LIMIT 50").fetchall()

        def actions() -> list[Any]:
            return ro.execute("SELECT seq, at, thread, kind, data FROM actions WHERE session_id = ? ORDER BY seq", [big]).fetchall()

        actions()  # the page cache warm for both sides
        floor_index, floor_session = best_floor(newest), best_floor(actions)
        with running(Viewer(db, Path(tmp))) as base:
            first, first_cpu, _ = timed_get(base + "/")
            index, index_cpu = medians(base + "/")
            first_session, first_session_cpu, page_bytes = timed_get(f"{base}/session/{big}")
            session, session_cpu = medians(f"{base}/session/{big}")
            hit, hit_cpu = medians(base + "/search?q=changed+3+files", 3)
        store = Store(db, readonly=True, create=False)
        started = time.process_time()
        found = search(store, "no-such-text-anywhere", budget_s=600)
        scan = time.process_time() - started
        assert found.next_before is None and found.scanned == n_sessions, (found.scanned, n_sessions)
        floor_scan = best_floor(lambda: ro.execute("SELECT COUNT(*) FROM actions WHERE data LIKE ? ESCAPE '^'", [like_pattern("no-such-text-anywhere")]).fetchone(), 1)
        store.close()
    mb = size_gb * 1000

    def ok(t: float, target: float) -> str:
        return "ok" if t < target else "MISSED"

    load = os.getloadavg()[0]
    print(f"store: {n_sessions} sessions, {size_gb:.2f} GB; each page over HTTP in CPU seconds (the viewer's and the client's; wall seconds beside), median of {ROUNDS}; load average {load:.1f} on {os.cpu_count()} cores")
    print(f"/ (newest 50 + runs)       first {first_cpu:.3f}s  median {index_cpu:.3f}s   (wall {first:.3f}s, {index:.3f}s)   sqlite3 reading its rows {floor_index:.3f}s   (target < {FIRST_PAGE_S:g}s) {ok(first_cpu, FIRST_PAGE_S)}")
    print(f"/session ({big_actions} actions)  first {first_session_cpu:.3f}s  median {session_cpu:.3f}s   (wall {first_session:.3f}s, {session:.3f}s)   sqlite3 reading its actions {floor_session:.3f}s   {page_bytes / 1e6:.1f} MB of HTML   (target < {SESSION_PAGE_S:g}s) {ok(session_cpu, SESSION_PAGE_S)}")
    print(f"/search (a page of hits)   median {hit_cpu:.3f}s (wall {hit:.3f}s)")
    print(f"search, nothing found      {scan:.1f}s CPU to scan all {n_sessions} sessions ({mb / scan:.0f} MB/s); sqlite3's own LIKE over every action {floor_scan:.1f}s ({mb / floor_scan:.0f} MB/s); a page stops at its 1 s budget and offers to go on")
    record(f"view: first page, {n_sessions} sessions / {size_gb:.1f} GB", f"{first_cpu:.3f}s CPU (median {index_cpu:.3f}s)", f"sqlite3 {floor_index:.3f}s", f"< {FIRST_PAGE_S:g}s", first_cpu < FIRST_PAGE_S)
    record(f"view: session page, {big_actions} actions", f"{session_cpu:.3f}s CPU", f"sqlite3 {floor_session:.3f}s", f"< {SESSION_PAGE_S:g}s", session_cpu < SESSION_PAGE_S)
    record("view: search, whole-store scan", f"{mb / scan:.0f} MB/s", f"sqlite3 LIKE {mb / floor_scan:.0f} MB/s", "", None)
    return 0 if first_cpu < FIRST_PAGE_S and session_cpu < SESSION_PAGE_S else 1


if __name__ == "__main__":
    sys.exit(main())
