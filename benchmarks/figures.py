"""Issue 16's figures in one table: each benchmark `record()`s its figure beside its floor or
target, and `python benchmarks/figures.py` (the last step of `make bench`) prints them together.

The figures go to the file named by $BENCHTAPE_BENCH_FIGURES (the Makefile sets it for the
run); a benchmark run by hand without it records nothing and prints only its own report.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ENV = "BENCHTAPE_BENCH_FIGURES"


def record(name: str, value: str, against: str, target: str, met: bool | None) -> None:
    """One row: what was measured, the floor or peer it is read against, the target, met or not
    (None when the figure has no target of its own)."""
    path = os.environ.get(ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": name, "value": value, "against": against, "target": target, "met": met}) + "\n")


def main() -> int:
    path = Path(os.environ.get(ENV, "") or (sys.argv[1] if len(sys.argv) > 1 else ""))
    if not path.is_file():
        print(f"no figures recorded (set ${ENV} for the whole `make bench` run)")
        return 0
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    widths = [max(len(r[k]) for r in rows) for k in ("name", "value", "against", "target")]
    print("\nissue 16 — every figure beside its floor or target (this run):")
    for r in rows:
        mark = {True: "ok", False: "MISSED", None: ""}[r["met"]]
        cells = (r["name"], r["value"], r["against"], r["target"])
        print("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)) + f"  {mark}")
    missed = [r["name"] for r in rows if r["met"] is False]
    print(f"  {len(rows) - len(missed)} of {len(rows)} met" + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
