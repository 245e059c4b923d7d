"""Adversarial outputs stay near-linear: every Structured recognizer over the pathological
outputs the unit tests use (html.parser once took 30 s on the first of them). Timing lives
here, not in the unit tests, so a loaded machine never fails `make test`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "checks"))

import tempfile  # noqa: E402

from gradekit import Outputs, grade  # noqa: E402
from test_structured import PATHOLOGICAL  # noqa: E402

from benchtape.checks import catalog  # noqa: E402

LIMIT_S = 2.0


def main() -> int:
    worst = (0.0, "", "")
    with tempfile.TemporaryDirectory(prefix="benchtape-bench-") as scratch:  # its mock sessions, gone after
        said = Outputs(Path(scratch))
        for name, text in sorted(PATHOLOGICAL.items()):
            s = said(text)
            for t in sorted(i for i, info in catalog().items() if info.family == "Structured"):
                t0 = time.perf_counter()
                grade({"type": t}, s)
                took = time.perf_counter() - t0
                worst = max(worst, (took, t, name))
    took, t, name = worst
    print(f"adversarial outputs: slowest recognizer {t} on {name!r}: {took * 1000:.0f} ms (limit {LIMIT_S:.0f} s)")
    return 0 if took < LIMIT_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
