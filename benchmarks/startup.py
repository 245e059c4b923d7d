"""Start-up cost of each command beside a bare interpreter (`python -c pass`).

For each command line: wall time and CPU time (user + sys of the child, which load on the
other core does not inflate) as medians of --repeat runs, and from `-X importtime` how many
modules it imports and the three heaviest top-level imports. Target: `version`, `--version`
and `--help` ≤ 3× `python -c pass`; the other rows show what a command's own imports cost.

Run by `make bench`. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
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

TARGET = 3.0
SCRIPT = Path(sys.executable).with_name("benchtape")
TARGETED = (["version"], ["--version"], ["--help"])
OTHERS = (["regrade", "--help"], ["sessions"], ["checks"], ["query", "length(calls)", "--all"])


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imports(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    """(modules imported, the three heaviest top-level imports by cumulative µs)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True, check=False)
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:") and "cumulative" not in line]
    top = [(int(cum), name) for _self, cum, name in rows if not name.startswith("  ") and name.strip() != "site"]
    heavy = sorted(top, reverse=True)[:3]
    return len(rows), [f"{name.strip()} {cum / 1000:.0f}ms" for cum, name in heavy]


def median_of(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    runs = [timed(argv, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchtape-startup-") as tmp:
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
        os.chdir(tmp)  # an empty folder: `sessions` and `query` meet no store
        base_wall, base_cpu = median_of([sys.executable, "-c", "pass"], env, args.repeat)
        print(f"start-up, medians of {args.repeat} (wall; CPU = user + sys of the child)")
        print(f"  {'python -c pass':<34} {base_wall * 1e3:6.1f} ms  CPU {base_cpu * 1e3:6.1f} ms")
        ok = True
        for cmd in (*TARGETED, *OTHERS):
            argv = [str(SCRIPT), *cmd]
            wall, cpu = median_of(argv, env, args.repeat)
            count, heavy = imports([sys.executable, "-m", "benchtape", *cmd], env)
            ratio = cpu / base_cpu
            label = "benchtape " + " ".join(cmd)
            verdict = ""
            if cmd in TARGETED:
                met = ratio <= TARGET
                ok &= met
                verdict = f"(target ≤ {TARGET:g}×) {'ok' if met else 'MISSED'}"
                record(f"start-up: {label}", f"{cpu * 1e3:.0f} ms CPU ({ratio:.1f}×)", f"python -c pass {base_cpu * 1e3:.0f} ms", f"≤ {TARGET:g}×", met)
            print(f"  {label:<34} {wall * 1e3:6.1f} ms  CPU {cpu * 1e3:6.1f} ms  {ratio:4.1f}× {verdict}")
            print(f"  {'':<34} {count} modules; heaviest: {', '.join(heavy) or '-'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
