"""Running a fuzz corpus (corpus.py) in a bounded worker process, and its figures (issue 15).

Each input runs in tests/fuzz/fuzz_worker.py, one at a time, under an address-space limit
and a per-input time limit, against any checkout. A worker that hangs is killed and
replaced; one that dies is replaced. The figures count outcomes per kind (ok, refused,
unclear, traceback, hang, memory, crash, escape), the peak memory and the slowest input.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus import ROOT

WORKER = Path(__file__).resolve().parent / "fuzz_worker.py"

# ---------------------------------------------------------------- running it


@dataclass
class Figures:
    inputs: Counter = field(default_factory=Counter)  # kind -> inputs run
    outcomes: Counter = field(default_factory=Counter)  # (kind, outcome) -> count
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, outcome, detail)
    peak_rss_mb: int = 0
    peak_input: str = ""
    slowest: float = 0.0
    slowest_input: str = ""
    seconds: float = 0.0

    BAD = ("traceback", "hang", "memory", "crash", "escape")

    def count(self, outcome: str, kind: str | None = None) -> int:
        return sum(n for (k, o), n in self.outcomes.items() if o == outcome and (kind is None or k == kind))

    def report(self, title: str) -> str:
        kinds = sorted(self.inputs)
        head = f"{'':12}" + "".join(f"{k:>9}" for k in kinds) + f"{'all':>9}"
        rows = [title, head, f"{'inputs':12}" + "".join(f"{self.inputs[k]:>9}" for k in kinds) + f"{sum(self.inputs.values()):>9}"]
        for outcome in ("ok", "refused", "unclear", *self.BAD):
            rows.append(f"{outcome:12}" + "".join(f"{self.count(outcome, k):>9}" for k in kinds) + f"{self.count(outcome):>9}")
        rows.append(f"peak memory {self.peak_rss_mb} MB (worker RSS; first reached on a {self.peak_input} input)")
        rows.append(f"slowest input {self.slowest:.2f} s ({self.slowest_input}); {self.seconds:.0f} s in all")
        distinct = Counter((k, o, d.split(": ")[0]) for k, o, d in self.failures)
        for (k, o, where), n in distinct.most_common(25):
            rows.append(f"  {n:5} × {k} {o}: {where}")
        return "\n".join(rows)

    @property
    def bad(self) -> int:
        return sum(self.count(o) for o in self.BAD)


class _Worker:
    def __init__(self, code: Path, mem_bytes: int, cwd: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(code), str(mem_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, start_new_session=True,
        )

    def ask(self, kind: str, payload: Any, limit: float) -> tuple[str, str, float, int] | None:
        """The worker's answer, or None when it did not answer within `limit` seconds (or died)."""
        msg = pickle.dumps((kind, payload))
        try:
            self.proc.stdin.write(struct.pack(">I", len(msg)) + msg)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None
        deadline = time.monotonic() + limit
        head = self._read(4, deadline)
        if head is None:
            return None
        body = self._read(struct.unpack(">I", head)[0], deadline)
        return pickle.loads(body) if body is not None else None

    def _read(self, n: int, deadline: float) -> bytes | None:
        fd = self.proc.stdout.fileno()
        buf = b""
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


def run(inputs: list[tuple[str, Any]], *, code: Path = ROOT, time_limit: float = 10.0, mem_bytes: int = 2 << 30, save: Path | None = None) -> Figures:
    """Every input through a bounded worker; the figures, and failing inputs saved to `save`."""
    figures = Figures()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchtape-fuzz-run-", ignore_cleanup_errors=True) as cwd:  # a killed worker's scratch too
        worker = _Worker(code, mem_bytes, Path(cwd))
        try:
            for i, (kind, payload) in enumerate(inputs):
                figures.inputs[kind] += 1
                t0 = time.monotonic()
                answer = worker.ask(kind, payload, time_limit)
                if answer is None:
                    outcome = "hang" if worker.alive() else "crash"
                    detail = f"no answer within {time_limit:g} s" if outcome == "hang" else f"the worker died ({worker.proc.poll()})"
                    seconds, rss = time.monotonic() - t0, 0
                else:
                    outcome, detail, seconds, rss = answer
                figures.outcomes[(kind, outcome)] += 1
                if rss > figures.peak_rss_mb:
                    figures.peak_rss_mb, figures.peak_input = rss, kind
                if seconds > figures.slowest:
                    figures.slowest, figures.slowest_input = seconds, kind
                if outcome in Figures.BAD or outcome == "unclear":
                    figures.failures.append((kind, outcome, detail))
                    if save is not None:
                        save.mkdir(parents=True, exist_ok=True)
                        (save / f"{i:05d}-{kind}-{outcome}.pickle").write_bytes(pickle.dumps((kind, payload, detail)))
                if answer is None or outcome == "memory" or not worker.alive():
                    worker.stop()
                    worker = _Worker(code, mem_bytes, Path(cwd))
        finally:
            worker.stop()
    figures.seconds = time.monotonic() - started
    return figures
