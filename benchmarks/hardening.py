"""The hardening reproductions at full size (issue 15), with their figures: what the unit tests
run a few times, run here as often as the issue measured them.

- kill -9 of `benchtape run` at random moments, then `benchtape recover`: calls the agent printed
  but the store lost, processes and containers left, temp folders left, ~/.claude not restored;
- the snapshot race: 100 container sessions whose agent leaves a folder swapper behind:
  host files stored;
- a 1 GiB output stream and a single 1.1 GB line: peak memory, store growth, final status;
- planted secrets: (artefact, secret) pairs in clear;
- the redactor on the recording hot path: microseconds per 1 KB line.

Run with `make bench` (docker parts skipped without an engine). Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hardening"))

import killkit  # noqa: E402
import racekit  # noqa: E402
import secretkit  # noqa: E402

MAX_RSS_MB = 512  # the recorder's peak memory for a 1 GiB stream or a 1.1 GB line


def engine() -> bool:
    from benchtape.sandbox.container import available

    return available()[0]


def kills(base: Path, level: str, n: int) -> dict:
    trials = [killkit.run_trial(base / f"{level}-{i}", level=level, seed=i) for i in range(n)]
    return killkit.summary(trials)


def race(base: Path, n: int) -> dict:
    return racekit.run_trials(base, n)


def big_output(base: Path) -> dict:
    """The issue's two runaway outputs, each in its own `benchtape run` (peak RSS of that process)."""
    out = {}
    cases = {
        "1 GiB stream": "python3 -c \\\"import sys; line = b'x' * 1023 + b'\\\\n'; w = sys.stdout.buffer.write; [w(line) for _ in range(1 << 20)]\\\" > /proc/$PPID/fd/1",
        "1.1 GB line": "head -c 1100000000 /dev/zero | tr '\\\\0' a > /proc/$PPID/fd/1; echo > /proc/$PPID/fd/1",
    }
    for name, command in cases.items():
        folder = base / name.replace(" ", "-").replace(".", "")
        folder.mkdir(parents=True)
        (folder / "bench.yaml").write_text(
            textwrap.dedent(
                f"""\
                harness: mock
                scenarios:
                  - name: runaway
                    prompt: print a lot
                    timeout: 1800s
                    mock:
                      steps:
                        - tool: Bash
                          input: {{command: "{command}"}}
                        - say: the last words
                """
            )
        )
        db = folder / "bt.db"
        started = time.monotonic()
        # a fresh parent for the run, so its peak RSS is the run's own (RUSAGE_CHILDREN keeps the largest child ever)
        measured = subprocess.run(
            [sys.executable, "-c", "import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
             sys.executable, "-m", "benchtape", "run", str(folder / "bench.yaml"), "--db", str(db), "--plain"],
            capture_output=True, text=True, timeout=3600, env={**os.environ, "TMPDIR": str(folder)},
        )
        rss_mb = int(measured.stdout.strip() or 0) / 1024  # the largest of benchtape and what it ran (the agent, its tools)
        con = sqlite3.connect(db)
        finished = json.loads(con.execute("select data from actions where kind = 'session.finished'").fetchone()[0])
        errors = [json.loads(d)["message"][:200] for (d,) in con.execute("select data from actions where kind = 'error'")]
        last = con.execute("select json_extract(data, '$.text') from actions where kind = 'final_output'").fetchone()
        con.close()
        size = sum(f.stat().st_size for f in folder.glob("bt.db*"))
        out[name] = {"seconds": round(time.monotonic() - started, 1), "peak_rss_mb": round(rss_mb), "store_mb": round(size / (1 << 20), 1), "status": finished.get("status"), "exit_code": finished.get("exit_code"), "errors": errors, "last_words_recorded": bool(last and last[0] == "the last words")}
    return out


def redactor_speed() -> float:
    import timeit

    from benchtape.core.redact import redactor

    line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": "def f(x):\n    return x + 1\n" * 30}]}})[:1024]
    red = redactor(["an-env-secret-0123456789", "another-known-value-xyz"])
    n = 20000
    return timeit.timeit(lambda: red(line), number=n) / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=12, help="kill -9 trials at the workspace level")
    ap.add_argument("--container-kills", type=int, default=3)
    ap.add_argument("--races", type=int, default=100)
    ap.add_argument("--no-big", action="store_true", help="skip the 1 GiB / 1.1 GB outputs")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="benchtape-hardening-"))
    ok = True
    try:
        k = kills(base / "kill", "workspace", args.kills)
        print(f"kill -9 (workspace, {k['trials']} kills): calls lost {k['calls_lost']} of {k['calls_printed']} printed; orphan processes {k['with_orphan_processes']}; temp left {k['with_temp_left']}; ~/.claude not restored {k['claude_not_restored']}; unfinished sessions {k['unfinished_sessions']}")
        ok &= k["calls_lost"] == k["with_orphan_processes"] == k["with_temp_left"] == k["claude_not_restored"] == k["unfinished_sessions"] == 0
        has_engine = engine()
        if has_engine:
            c = kills(base / "ckill", "container", args.container_kills)
            print(f"kill -9 (container, {c['trials']} kills): calls lost {c['calls_lost']} of {c['calls_printed']}; orphan containers {c['with_orphan_containers']}; orphan processes {c['with_orphan_processes']}; temp left {c['with_temp_left']}")
            ok &= c["calls_lost"] == c["with_orphan_containers"] == c["with_orphan_processes"] == c["with_temp_left"] == 0
            r = race(base / "race", args.races)
            print(f"snapshot race ({r['sessions']} container sessions): host files stored {r['host_files']} (in {r['sessions_with_host_files']} sessions); snapshots {r['snapshots']}/{r['sessions']}")
            ok &= r["host_files"] == 0 and r["snapshots"] == r["sessions"]
        else:
            print("container parts skipped: no Docker engine")
        if not args.no_big:
            for name, b in big_output(base / "big").items():
                print(f"{name}: peak RSS {b['peak_rss_mb']} MB (limit {MAX_RSS_MB}); store {b['store_mb']} MB; status {b['status']}; last words recorded {b['last_words_recorded']}; {b['seconds']} s")
                if b["status"] != "truncated":
                    print(f"  exit code {b['exit_code']}; errors: {b['errors']}")
                ok &= b["peak_rss_mb"] < MAX_RSS_MB and b["status"] == "truncated" and b["last_words_recorded"]
        found = secretkit.artefacts(base / "secrets")
        leaks = secretkit.leaks(found)
        print(f"planted secrets: {len(leaks)} (artefact, secret) pairs in clear across {len(found)} artefacts")
        ok &= not leaks
        print(f"redactor: {redactor_speed():.1f} us per 1 KB line (known values and every shape)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("hardening:", "OK" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
