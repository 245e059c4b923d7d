"""Start-up cost of each command beside a bare interpreter (`python -c pass`), and `regrade`'s
fixed start-up (issue 48).

Every command line is run in rounds, one after another (the bare interpreter in each round
too), and each keeps its best: CPU time (user + sys of the child, which load on the other core
does not inflate) and wall time. From `-X importtime`: how many modules it imports and the
three heaviest top-level imports.

Targets: `version`, `--version` and bare `--help` ≤ 3× `python -c pass`; every command's
`--help`, and `sessions` on an empty store, ≤ 4× (issue 48); `regrade`'s fixed start-up (the
wall time of `regrade --all` over a store of one session, as benchmarks/inspect_compare.py
reads it) ≤ 0.25 s. `query` on an empty store is shown beside them, without a target.

Run by `make bench`. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchmarks.regrade_query import CHECKS, bench_yaml, session_actions  # noqa: E402
from benchtape.command_table import COMMANDS  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

SCRIPT = Path(sys.executable).with_name("benchtape")
CACHED, TARGET, REGRADE_TARGET = 3.0, 4.0, 0.25
CACHED_LINES = (("version",), ("--version",), ("--help",))
HELPS = tuple((name, "--help") for name in sorted(COMMANDS))
EMPTY_STORE = (("sessions",),)
CONTEXT = (("query", "length(calls)", "--all"),)
REGRADE = ("regrade", "--bench", "bench.yaml", "--all", "--plain", "--db", "one.db")


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imports(cmd: tuple[str, ...], env: dict[str, str], cwd: Path) -> tuple[int, list[str]]:
    """(modules imported, the three heaviest top-level imports by cumulative µs)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "benchtape", *cmd], env=env, cwd=cwd, capture_output=True, text=True, check=False)
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:") and "cumulative" not in line]
    top = [(int(cum), name) for _self, cum, name in rows if not name.startswith("  ") and name.strip() != "site"]
    heavy = sorted(top, reverse=True)[:3]
    return len(rows), [f"{name.strip()} {cum / 1000:.0f}ms" for cum, name in heavy]


def best_of(lines: dict[str, list[str]], env: dict[str, str], cwd: Path, rounds: int, before_each: dict[str, object] | None = None) -> dict[str, tuple[float, float]]:
    """Each command line's best (wall, CPU) over `rounds` rounds that run them in turn."""
    best = {label: (float("inf"), float("inf")) for label in lines}
    for _ in range(rounds):
        for label, argv in lines.items():
            prepare = (before_each or {}).get(label)
            if callable(prepare):
                prepare()
            wall, cpu = timed(argv, env, cwd)
            best[label] = (min(best[label][0], wall), min(best[label][1], cpu))
    return best


def one_session_store(folder: Path) -> Path:
    """bench.yaml and a store of one recorded session (~100 actions), as inspect_compare's 1-session side."""
    (folder / "bench.yaml").write_text(bench_yaml("benchtape regrade start-up", CHECKS[:1]))
    store = Store(folder / "pristine.db")
    run_id = store.new_run("run", bench_path="bench.yaml", harness="mock")
    store.append(store.new_session(run_id, "bench", harness="mock"), session_actions(0))
    store.close()
    return folder / "pristine.db"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-imports", action="store_true", help="skip the -X importtime rows")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchtape-startup-") as tmp:
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
        env.pop("BENCHTAPE_DB", None)
        empty, rg = Path(tmp, "empty"), Path(tmp, "regrade")
        empty.mkdir()
        rg.mkdir()
        Store(empty / ".benchtape" / "benchtape.db").close()  # an empty store: `sessions` and `query` open it and find nothing
        pristine = one_session_store(rg)

        bare = "python -c pass"
        commands = (*CACHED_LINES, *HELPS, *EMPTY_STORE, *CONTEXT)
        lines = {bare: [sys.executable, "-c", "pass"], **{" ".join(cmd): [str(SCRIPT), *cmd] for cmd in commands}}
        best = best_of(lines, env, empty, args.rounds)
        base_wall, base_cpu = best[bare]
        print(f"start-up, best of {args.rounds} rounds (wall; CPU = user + sys of the child)")
        print(f"  {bare:<36} {base_wall * 1e3:6.1f} ms  CPU {base_cpu * 1e3:6.1f} ms")
        ok = True
        worst_help: tuple[float, str] = (0.0, "")
        for cmd in commands:
            label = " ".join(cmd)
            wall, cpu = best[label]
            ratio = cpu / base_cpu
            target = CACHED if cmd in CACHED_LINES else TARGET if cmd in HELPS or cmd in EMPTY_STORE else None
            verdict = ""
            if target is not None:
                met = ratio <= target
                ok &= met
                verdict = f"(target ≤ {target:g}×) {'ok' if met else 'MISSED'}"
            if cmd in HELPS:
                worst_help = max(worst_help, (ratio, label))
            elif target is not None:
                where = " (empty store)" if cmd in EMPTY_STORE else ""
                record(f"start-up: benchtape {label}{where}", f"{cpu * 1e3:.0f} ms CPU ({ratio:.1f}×)", f"python -c pass {base_cpu * 1e3:.0f} ms", f"≤ {target:g}×", ratio <= target)
            else:
                record(f"start-up: benchtape {label} (empty store)", f"{cpu * 1e3:.0f} ms CPU ({ratio:.1f}×)", f"python -c pass {base_cpu * 1e3:.0f} ms", "context", None)
            print(f"  {'benchtape ' + label:<36} {wall * 1e3:6.1f} ms  CPU {cpu * 1e3:6.1f} ms  {ratio:4.1f}× {verdict}")
            if not args.no_imports and (cmd not in HELPS or cmd == ("regrade", "--help")):
                count, heavy = imports(cmd, env, empty)
                print(f"  {'':<36} {count} modules; heaviest: {', '.join(heavy) or '-'}")
        ratio, label = worst_help
        record(f"start-up: every command's --help (slowest: {label})", f"{best[label][1] * 1e3:.0f} ms CPU ({ratio:.1f}×)", f"python -c pass {base_cpu * 1e3:.0f} ms", f"≤ {TARGET:g}×", ratio <= TARGET)

        def fresh_copy() -> None:
            (rg / "one.db").write_bytes(pristine.read_bytes())  # each round grades the one session of the same store

        fixed = best_of({"regrade": [str(SCRIPT), *REGRADE]}, env, rg, args.rounds, {"regrade": fresh_copy})["regrade"]
        met = fixed[0] <= REGRADE_TARGET
        ok &= met
        print(f"  {'benchtape regrade, 1 session':<36} {fixed[0] * 1e3:6.1f} ms  CPU {fixed[1] * 1e3:6.1f} ms  fixed start-up (target ≤ {REGRADE_TARGET:g} s) {'ok' if met else 'MISSED'}")
        if not args.no_imports:
            fresh_copy()
            count, heavy = imports(REGRADE, env, rg)
            print(f"  {'':<36} {count} modules; heaviest: {', '.join(heavy) or '-'}")
        record("regrade fixed start-up (1 session, wall)", f"{fixed[0]:.3f} s ({fixed[1]:.3f} s CPU)", f"python -c pass {base_wall * 1e3:.0f} ms", f"≤ {REGRADE_TARGET:g} s", met)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
