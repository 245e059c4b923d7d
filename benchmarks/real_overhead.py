"""Per-session time with the real binaries beside the mock, and benchtape's own share of it.

Everything is measured inside one run, per session, so load on the machine moves every
part together instead of being subtracted across separately timed runs:

- the session: the local executor's `_one` (benchtape.recorder.scheduler), from opening its
  sandbox to its verdicts being stored and its result row written (live grading included);
- the harness process's own lifetime: from the supervisor's fork to its reaping the
  process, on the host's monotonic clock (`spawned`/`reaped` in the supervisor's exit facts);
- the user's check commands: each grading command a check ran (the demo's exec checks run
  `python3 -m unittest` and `sh -c grep`), from its start to its exit. Their cost is the
  bench author's, not benchtape's.

benchtape's share is the session minus those two, and is broken down by component: each
wrapped step's time on the session's thread, its nested wrapped steps subtracted, so the
rows add up to the session. Work on other threads while the harness runs (the reader
storing its lines, a spare supervisor starting, the cleanup thread removing a finished
session's folders) is shown beside, not added: it is not on the session's path, though on a
loaded machine it competes with the harness for a core.

The previous figure, `session.started` event to `verdicts` event minus the runner's
`wall_ms`, is still printed and recorded for context: it includes the user's check
commands, the harness's start-up inside `wall_ms`, and leaves out opening the sandbox.

    python benchmarks/real_overhead.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchtape.app.api import run_benches  # noqa: E402
from benchtape.recorder.runner import RunOptions  # noqa: E402
from benchtape.spec.bench import load_bench  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

BENCHES = {
    "mock": ROOT / "fixtures-red" / "demo" / "bench.yaml",
    "claude-code": ROOT / "fixtures-red" / "scripted" / "claude-code.yaml",
    "codex": ROOT / "fixtures-red" / "scripted" / "codex.yaml",
}
SCENARIO = "fixes-the-bug"
TARGET_MS = 10.0  # benchtape's share of a session at concurrency 1 (issue 16, item 6)

HARNESS = "the harness process (fork to reap)"
USER = "the user's check commands"
START = "start the harness (supervisor, spec, until fork)"
TELL = "the supervisor: after the reap (drain, leftovers, exit facts)"
NOTICE = "notice its exit (told to the run loop)"
AFTER = "drain the reader, finish the parse"
OTHER = "other (the run loop, unwrapped steps)"


class Timeline:
    """Per session: time by component on the session's own thread (exclusive: nested wrapped
    calls are their own rows), and time on other threads while it ran (`beside`)."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.sessions: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.undo: list[Callable[[], None]] = []

    def _stack(self) -> list[list[Any]]:
        if not hasattr(self.local, "stack"):
            self.local.stack = []
        return self.local.stack

    def wrap(self, owner: Any, attr: str, label: str | Callable[..., str], *, session: bool = False, opaque: bool = False) -> None:
        raw = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        fn = raw.__func__ if isinstance(raw, classmethod) else raw
        timeline = self

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = timeline._stack()
            if stack and stack[-1][2]:  # inside an opaque step: part of it
                return fn(*args, **kwargs)
            name = label(*args, **kwargs) if callable(label) else label
            if session:
                timeline.current = {"parts": {}, "beside": {}}
                timeline.local.in_session = True
            frame = [name, 0.0, opaque]
            into = timeline.current
            stack.append(frame)
            t0 = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.monotonic() - t0
                stack.pop()
                if stack:
                    stack[-1][1] += took
                if into is not None:
                    bucket = into["parts"] if getattr(timeline.local, "in_session", False) else into["beside"]
                    bucket[name] = bucket.get(name, 0.0) + (took - frame[1]) * 1000
                if session:
                    timeline.local.in_session = False
                    into["total"] = took * 1000
                    timeline.sessions.append(into)

        setattr(owner, attr, classmethod(timed) if isinstance(raw, classmethod) else timed)
        self.undo.append(lambda: setattr(owner, attr, raw))

    def close(self) -> None:
        for undo in reversed(self.undo):
            undo()


def instrument(timeline: Timeline) -> None:
    """The steps of a session, in the order they happen."""
    import benchtape.app.api as api
    import benchtape.recorder.runner as runner
    import benchtape.recorder.scheduler as scheduler
    import benchtape.replay.grading as grading
    import benchtape.sandbox.local as local
    from benchtape.sandbox.capture import SessionFolder
    from benchtape.sandbox.outside_writes import OutsideWrites
    from benchtape.sandbox.supervisor import SupervisedProcess, Supervisor
    from benchtape.store.database import Store as S

    t = timeline
    t.wrap(scheduler.LocalExecutor, "_one", "session", session=True)
    t.wrap(SessionFolder, "create", "open: the session folder")
    t.wrap(local, "prepare", "open: copy the staged tree")
    t.wrap(OutsideWrites, "__init__", "open: list the sandbox folder (outside-writes audit)")
    t.wrap(SessionFolder, "note", "session.json notes")
    t.wrap(S, "new_session", "store: the session row")
    t.wrap(runner.Runner, "expected_environment", "environment.expected")
    t.wrap(runner.Runner, "_prepare", "harness setup (home files, setup commands)")
    t.wrap(runner, "workspace_snapshot", lambda *a, **k: "snapshot after (final)" if not k.get("stage") else "snapshot before (staged)")
    t.wrap(runner.Runner, "_drive", "drive", opaque=True)
    t.wrap(local.LocalLevel, "_notes", "after exit: ~/.claude, outside writes")
    t.wrap(runner, "_transcript", "the harness's transcript")
    t.wrap(S, "append", "store: append events")
    t.wrap(SessionFolder, "close", "cleanup: remove the sandbox folder")  # on the cleanup thread (a kept one: on the session's)
    t.wrap(api, "grade_stored", "grading: checks themselves")
    t.wrap(S, "load_session", "grading: load the session")
    t.wrap(grading._Host, "work_dir", "grading: restore the workspace")
    t.wrap(grading._Host, "run", USER)
    t.wrap(S, "add_verdicts", "grading: store the verdicts")
    for name in ("scenario_status", "result_row", "redact_json"):
        t.wrap(api, name, "grading: the result row")
    t.wrap(api.ResultSpool, "add", "grading: the result row")
    # beside the session (other threads)
    t.wrap(S, "append_line", "the reader: store each line")
    t.wrap(grading, "remove_tree", "cleanup: remove the restored workspace")
    t.wrap(Supervisor, "_keep_a_spare", "start a spare supervisor")

    # the harness's own lifetime, from the supervisor's exit facts
    raw_wait = SupervisedProcess.wait

    def wait(self: Any, timeout: float) -> int | None:
        code = raw_wait(self, timeout)
        if code is not None and t.current is not None and "reaped" in (self.exit or {}):
            t.current["exit"] = (self.exit["spawned"], self.exit["reaped"], self.exit.get("told", self.exit["reaped"]), time.monotonic())
        return code

    SupervisedProcess.wait = wait  # type: ignore[method-assign]
    t.undo.append(lambda: setattr(SupervisedProcess, "wait", raw_wait))
    raw_drive = runner.Runner._drive  # the wrapped one

    def drive(self: Any, *args: Any, **kwargs: Any) -> Any:
        entered = time.monotonic()
        try:
            return raw_drive(self, *args, **kwargs)
        finally:
            if t.current is not None:
                t.current["drive"] = (entered, time.monotonic())

    runner.Runner._drive = drive  # type: ignore[method-assign]


def split(session: dict[str, Any]) -> dict[str, float]:
    """The session's rows: the drive split at the harness's fork and reap; the rest as wrapped."""
    parts = dict(session["parts"])
    drive_ms = parts.pop("drive", 0.0)
    parts[OTHER] = parts.pop("session", 0.0)
    if "exit" in session and "drive" in session:
        spawned, reaped, told, noticed = session["exit"]
        entered, left = session["drive"]
        parts[START] = (spawned - entered) * 1000
        parts[HARNESS] = (reaped - spawned) * 1000
        parts[TELL] = (told - reaped) * 1000
        parts[NOTICE] = (noticed - told) * 1000
        parts[AFTER] = (left - noticed) * 1000
        parts[OTHER] += drive_ms - (left - entered) * 1000  # the timing hooks' own
    else:  # no exit facts (a refused start): all of the drive is the harness's
        parts[HARNESS] = drive_ms
    return parts


def measure(tool: str, repeat: int, db: Path) -> dict[str, Any]:
    bench = load_bench(BENCHES[tool])
    starts: dict[str, float] = {}
    done: list[tuple[str, float]] = []

    def on_event(kind: str, data: dict) -> None:
        if kind == "session.started":
            starts[data["session_id"]] = time.perf_counter()
        elif kind == "verdicts":
            done.append((data["session_id"], time.perf_counter()))

    store = Store(db)
    timeline = Timeline()
    instrument(timeline)
    os.sync()  # what earlier benchmarks wrote goes to disk now, not during these sessions
    try:
        t0 = time.monotonic()
        run_benches([bench], store, RunOptions(repeat=repeat, concurrency=1, scenarios=[SCENARIO]), on_event=on_event).close()
        run_ms = (time.monotonic() - t0) * 1000
    finally:
        timeline.close()
    old = [(at - starts[sid]) * 1000 - (store.load_session(sid).metrics.wall_ms or 0.0) for sid, at in done]
    store.close()
    rows = [split(s) for s in timeline.sessions]
    totals = [s["total"] for s in timeline.sessions]
    return {"rows": rows, "totals": totals, "beside": [s["beside"] for s in timeline.sessions], "old": old, "per_run": run_ms - sum(totals)}


def report(tool: str, m: dict[str, Any]) -> None:
    rows, totals = m["rows"], m["totals"]
    n = len(rows)
    share = [t - r.get(HARNESS, 0.0) - r.get(USER, 0.0) for t, r in zip(totals, rows)]
    med = statistics.median
    total, harness, user, mine = med(totals), med(r.get(HARNESS, 0.0) for r in rows), med(r.get(USER, 0.0) for r in rows), med(share)
    print(f"{tool:<12} per session (median of {n}): {total:6.1f} ms in all = the harness process {harness:6.1f} + the user's check commands {user:6.1f} + benchtape's own {mine:5.1f} ms")
    names = [k for k in rows[0] if k not in (HARNESS, USER)]
    for name in sorted(names, key=lambda k: -med(r.get(k, 0.0) for r in rows)):
        print(f"    {med(r.get(name, 0.0) for r in rows):6.2f} ms  {name}")
    beside = sorted({k for b in m["beside"] for k in b})
    for name in beside:
        print(f"    beside, on another thread (off the session's path): {med(b.get(name, 0.0) for b in m['beside']):6.2f} ms  {name}")
    print(f"    once per run (preflight, staging, the run's rows, the pool): {m['per_run']:.0f} ms, {m['per_run'] / n:.1f} ms a session over {n}")
    old = med(m["old"])
    print(f"    for context, the old figure (session.started to verdicts, minus the runner's wall_ms; live grading and its check commands included): {old:.0f} ms")
    record(f"benchtape's share per session (live grading included), {tool}, concurrency 1", f"{old:.0f} ms", f"the agent's own {harness:.0f} ms, the check commands {user:.0f} ms", "context", None)
    record(f"benchtape's own time per session, {tool}, concurrency 1", f"{mine:.1f} ms", f"the agent's own {harness:.0f} ms", f"≤ {TARGET_MS:g} ms", mine <= TARGET_MS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from benchtape.core.errors import BadInput
    from benchtape.tools.binaries import resolve

    with tempfile.TemporaryDirectory(prefix="benchtape-real-") as tmp:
        for tool in BENCHES:
            if tool != "mock":
                try:
                    resolve(tool)
                except BadInput as exc:
                    print(f"{tool:<12} skipped: {exc.what} (run `make agents`)")
                    continue
            report(tool, measure(tool, args.repeat, Path(tmp) / f"{tool}.db"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
