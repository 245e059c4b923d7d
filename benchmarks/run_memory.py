"""Memory of a long run: what `run` keeps per finished session must not grow with the run.

Two measurements, each in a fresh child process (peak RSS from getrusage):

1. The report path driven directly at 1,000 and 10,000 sessions: every finished
   session's result row goes through `ResultSpool.add` (the run's spool, `--report-dir`'s
   JSON Lines stream beside it), then the report is written by `write_streamed` and the
   JUnit XML from the spool, exactly as `benchtape run --report-dir D --report-json F
   --report-junit J` does at the end. The rows are a real demo session's row (its whole
   session JSON: actions, calls, metrics, checks). The mock harness would need ~11 minutes
   of two shared cores for 10,000 sessions, so this part drives the writer directly.
   For contrast, the design it replaced (every row kept in a list, the whole report built
   and dumped after each session) is measured at 1,000 and 2,000.
2. A real `benchtape run` of the mock harness at 100 and 500 sessions (`--repeat`), three
   runs of each (the median peak: a single run's peak moves by ~1 MB), whose peak RSS must
   not grow with the number of sessions beyond a small per-session cost (what the runner
   itself keeps per session: ids and futures, not rows).

Run by `make bench`. Not a test: it prints numbers and says whether memory stayed flat.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402

FLAT_MB = 8.0  # the streamed writer's peak may grow at most this much from 1,000 to 10,000 sessions
PER_SESSION_KB = 2.0  # and a real run at most this much per session


def template_row(folder: Path) -> dict:
    """A real result row: the demo's passing session, as `run --report-json` wrote it."""
    report = folder / "demo.json"
    subprocess.run([sys.executable, "-m", "benchtape", "run", str(ROOT / "fixtures-red/demo/bench.yaml"), "--db", str(folder / "demo.db"), "--scenario", "fixes-the-bug", "--report-json", str(report), "--plain"], check=True, capture_output=True, cwd=folder)
    return json.loads(report.read_text())["results"][0]


def writer_child(mode: str, n: int, template: Path, out: Path) -> None:
    """In a child: push n rows through the report path, then print the peak RSS (MB)."""
    import orjson

    from benchtape.replay.junit import junit_xml, write_junit
    from benchtape.replay.report import ResultSpool, write_streamed

    row = orjson.loads(template.read_bytes())
    start = time.perf_counter()
    if mode == "streamed":
        spool = ResultSpool(["fixes-the-bug"], public=out / "run.jsonl")
        for i in range(n):
            spool.add({**row, "session_id": f"S{i:08d}", "attempt": i + 1})  # built, spooled, dropped: as on_session_done does
        write_streamed(out / "run.json", {"schema_version": 1, "run_id": "R"}, spool.raw_rows(), {"summary": spool.tally.summary()}, {})
        write_junit(out / "junit.xml", spool.rows)
        spool.close()
    else:  # the design it replaced: every row in a list, the whole report rewritten after each session (here: once per 100)
        rows = []
        for i in range(n):
            rows.append({**orjson.loads(orjson.dumps(row)), "session_id": f"S{i:08d}", "attempt": i + 1})
            if i % 100 == 99:
                (out / "run.json").write_bytes(orjson.dumps({"results": rows}, option=orjson.OPT_INDENT_2))
        (out / "junit.xml").write_text(junit_xml(rows))
    seconds = time.perf_counter() - start
    print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": seconds, "report_mb": (out / "run.json").stat().st_size / 1e6}))


def measure_writer(mode: str, n: int, template: Path, work: Path) -> dict:
    out = work / f"{mode}-{n}"
    out.mkdir()
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(n), str(template), str(out)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


TINY = """
harness: mock
defaults: {sandbox: workspace, timeout: 30s}
scenarios:
  - name: tiny
    prompt: "say hello"
    mock:
      steps: [{tool: Bash, input: {command: "echo hello"}}, {say: "hello"}]
      metrics: {cost_usd: 0.001, tokens_in: 10, tokens_out: 5}
    checks: [{type: contains, value: hello}, {type: cost, threshold: 0.01}]
"""


def measure_run(n: int, work: Path) -> dict:
    """A real `benchtape run --repeat n` with --report-dir and --report-json: its peak RSS (MB)."""
    bench = work / "tiny.yaml"
    bench.write_text(textwrap.dedent(TINY).lstrip())
    probe = "import resource, runpy, sys; sys.argv = ['benchtape', *sys.argv[1:]]\ntry:\n    runpy.run_module('benchtape', run_name='__main__')\nfinally:\n    print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", probe, "run", str(bench), "--repeat", str(n), "--db", str(work / f"run{n}.db"), "--report-dir", str(work / f"reports{n}"), "--report-json", str(work / f"run{n}.json"), "--plain"],
        capture_output=True, text=True, cwd=work,
    )
    seconds = time.perf_counter() - start
    peak = [line for line in proc.stderr.splitlines() if line.startswith("PEAK ")]
    if proc.returncode != 0 or not peak:
        raise SystemExit(f"benchtape run --repeat {n} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return {"peak_mb": int(peak[-1].split()[1]) / 1024, "seconds": seconds}


REAL_REPEAT = 3  # one run's peak RSS moves by ~1 MB from run to run (2.5 KB a session over 400): the median of three


def median_run(n: int, work: Path) -> dict:
    """`measure_run` REAL_REPEAT times, each into a store of its own: the median peak, every peak, and the median time."""
    import statistics

    runs = []
    for i in range(REAL_REPEAT):
        one = work / f"real{n}-{i}"
        one.mkdir()
        runs.append(measure_run(n, one))
    peaks = [r["peak_mb"] for r in runs]
    return {"peak_mb": statistics.median(peaks), "peaks": peaks, "seconds": statistics.median(r["seconds"] for r in runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=4, metavar=("MODE", "N", "TEMPLATE", "OUT"))
    parser.add_argument("--sessions", type=int, default=10_000, help="the large run for the writer (default 10,000)")
    parser.add_argument("--real", default="100,500", help="session counts of the real mock runs (default 100,500)")
    args = parser.parse_args()
    if args.child:
        mode, n, template, out = args.child
        writer_child(mode, int(n), Path(template), Path(out))
        return 0
    with tempfile.TemporaryDirectory(prefix="benchtape-memory-") as tmp:
        work = Path(tmp)
        row = template_row(work)
        template = work / "row.json"
        template.write_text(json.dumps(row))
        print(f"run memory: a result row is {len(template.read_bytes()) / 1024:.1f} KB (a real demo session's, whole)")
        small, large = 1_000, args.sessions
        s1, s2 = measure_writer("streamed", small, template, work), measure_writer("streamed", large, template, work)
        grew = s2["peak_mb"] - s1["peak_mb"]
        print(f"  report path, streamed: {small:>6,} sessions peak {s1['peak_mb']:6.1f} MB ({s1['seconds']:.1f} s, report {s1['report_mb']:.0f} MB)")
        print(f"  report path, streamed: {large:>6,} sessions peak {s2['peak_mb']:6.1f} MB ({s2['seconds']:.1f} s, report {s2['report_mb']:.0f} MB)  grew {grew:+.1f} MB  [target ≤ {FLAT_MB:g} MB: {'ok' if grew <= FLAT_MB else 'MISSED'}]")
        o1, o2 = measure_writer("in-memory", small, template, work), measure_writer("in-memory", 2 * small, template, work)
        slope = (o2["peak_mb"] - o1["peak_mb"]) / small * 1024
        print(f"  the replaced design (rows in memory): {small:,} → {2 * small:,} sessions peak {o1['peak_mb']:.1f} → {o2['peak_mb']:.1f} MB, {slope:.1f} KB per session (at {large:,}: ~{o1['peak_mb'] + slope * (large - small) / 1024:,.0f} MB)")
        counts = [int(x) for x in args.real.split(",") if x]
        if len(counts) == 2:
            r1, r2 = (median_run(n, work) for n in counts)
            per = (r2["peak_mb"] - r1["peak_mb"]) / (counts[1] - counts[0]) * 1024
            peaks = lambda r: "/".join(f"{p:.1f}" for p in r["peaks"])  # noqa: E731
            print(
                f"  real `benchtape run` (mock), median of {REAL_REPEAT}: {counts[0]} sessions peak {r1['peak_mb']:.1f} MB ({peaks(r1)}; {r1['seconds']:.0f} s), "
                f"{counts[1]} sessions peak {r2['peak_mb']:.1f} MB ({peaks(r2)}; {r2['seconds']:.0f} s): {per:+.2f} KB per session [target ≤ {PER_SESSION_KB:g}: {'ok' if per <= PER_SESSION_KB else 'MISSED'}]"
            )
        record(f"report path memory, {small:,} → {large:,} sessions", f"{grew:+.1f} MB", f"peak {s1['peak_mb']:.1f} MB at {small:,}", f"≤ {FLAT_MB:g} MB", grew <= FLAT_MB)
        if len(counts) == 2:
            record(f"run memory, {counts[0]} → {counts[1]} mock sessions", f"{per:+.2f} KB/session", f"peak {r1['peak_mb']:.1f} MB at {counts[0]} (median of {REAL_REPEAT})", f"≤ {PER_SESSION_KB:g} KB/session", per <= PER_SESSION_KB)
        ok = grew <= FLAT_MB and (len(counts) != 2 or per <= PER_SESSION_KB)
        print("memory stays flat" if ok else "memory did NOT stay flat")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
