"""Report JSON (`--report-json`, `--report-dir`): results per session with their checks and
the whole session, and a summary. A report is enough input on its own for `grade`; one
written by `run` also names its database, so `grade` re-grades from there when it can.

Results are never all held in memory: each finished session's row goes to a spool on disk
(JSON Lines) and leaves memory; `--report-dir` streams the same lines beside the report
(`RUN_ID.jsonl`) as sessions finish; the report itself is written once, at the end, by
streaming the spool into it. What stays in memory per session is a few numbers (where
its line is, and the run's tallies), so a 10,000-session run's memory stays flat.
"""

from __future__ import annotations

import os
import tempfile
import time
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

import orjson

from benchtape.core.errors import temp_room
from benchtape.core.leaks import ReportLeak, report_leaks
from benchtape.core.model import Session
from benchtape.core.version import VERSION
from benchtape.replay.document import madbench_status, row_outcome, session_json
from benchtape.replay.grading import Verdict
from benchtape.replay.metrics import Accumulator, schema, summarize
from benchtape.spec.agent_kind import agent_kind

if TYPE_CHECKING:
    from benchtape.store.views import BrowsingStore

REPORT_SCHEMA = 1


def result_row(session: Session, scenario_id: str, status: str, verdicts: list[Verdict], attempt: int = 1, *, run_id: str | None = None, context: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None, provider: str | None = None, measured: Any = None) -> dict[str, Any]:
    """One session's result; `context` ({vars, transform, control}) is what `grade` needs,
    beside each check's spec, to reproduce the verdicts from the report alone. `status` (pass,
    fail or error) is `outcome`; the row's `status` is madbench's (pass or fail)."""
    return {
        "scenario_id": scenario_id,
        "attempt": attempt,
        "status": madbench_status(status),
        "outcome": status,
        "session_id": session.id,
        "run_id": run_id,
        "agent_kind": agent_kind(session.harness, session.model, noop=bool((context or {}).get("control"))),  # scripted / no-op / oracle: not an agent's measurement (spec.agent_kind)
        "grading_context": context,
        "checks": [
            {
                "type": v.check.type,
                "path": v.check_path,
                "metric": v.check.metric,
                "readout": v.check.readout,
                "spec": v.check.spec.to_dict(),
                "spec_sha256": v.check.identity,
                "result": {"pass": v.result.passed, "score": v.result.score, "reason": v.result.reason, "evidence": v.result.evidence},
                "status": v.result.status,
                "error": v.result.reason if v.result.status == "ERROR" else None,
            }
            for v in verdicts
        ],
        "metrics": measured.values if measured is not None else None,  # the bench's metric schema, this session's values (None: missing)
        "metric_error": measured.errors or None if measured is not None else None,
        "session": session_json(session, metadata, provider),
    }


def _run_head(*, run_id: str, grading_id: str | None, bench_path: str, bench_dir: str, harness: str, complete: bool, database: str | None) -> dict[str, Any]:
    """A one-run report's keys besides its results and summary."""
    return {
        "schema_version": REPORT_SCHEMA,
        "benchtape_version": VERSION,
        "run_id": run_id,
        "grading_id": grading_id,
        "database": database,  # where the run is recorded: `grade REPORT` re-grades from it when it is there
        "bench": bench_path,
        "bench_dir": bench_dir,
        "harness": harness,
        "complete": complete,
        "written_at": time.time(),
    }


# ---------------------------------------------------------------- the spool: results on disk, not in memory


@dataclass
class Tally:
    """What a run's summary needs, counted as rows go by: no row is kept."""

    total: int = 0
    statuses: dict[str, int] = field(default_factory=dict)  # pass | fail | error → sessions
    scenarios: dict[str, list[int]] = field(default_factory=dict)  # scenario → [passed, sessions]
    costs: list[float] = field(default_factory=lambda: [0.0, 0])  # [sum, sessions that reported one]
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    metrics: dict[str, Accumulator] = field(default_factory=dict)  # metric name → the run's values of it

    def add(self, row: Mapping[str, Any]) -> None:
        self.total += 1
        status = row_outcome(row)
        self.statuses[status] = self.statuses.get(status, 0) + 1
        per = self.scenarios.setdefault(_label(row), [0, 0])
        per[0] += status == "pass"
        per[1] += 1
        metrics = (row.get("session") or {}).get("metrics") or {}
        if metrics.get("cost_usd") is not None:
            self.costs[0] += metrics["cost_usd"]
            self.costs[1] += 1
        if metrics.get("tokens") is not None:
            self.tokens[0] += metrics["tokens"]
            self.tokens[1] += 1
        for name, value in (row.get("metrics") or {}).items():
            (self.metrics.get(name) or self.metrics.setdefault(name, Accumulator())).add(value)

    def merge(self, other: Tally) -> None:
        self.total += other.total
        for k, n in other.statuses.items():
            self.statuses[k] = self.statuses.get(k, 0) + n
        for k, (p, n) in other.scenarios.items():
            mine = self.scenarios.setdefault(k, [0, 0])
            mine[0] += p
            mine[1] += n
        for name, acc in other.metrics.items():
            mine_acc = self.metrics.setdefault(name, Accumulator())
            mine_acc.total, mine_acc.n, mine_acc.missing = mine_acc.total + acc.total, mine_acc.n + acc.n, mine_acc.missing + acc.missing
            mine_acc.low, mine_acc.high = min(mine_acc.low, acc.low), max(mine_acc.high, acc.high)
        self.costs = [self.costs[0] + other.costs[0], self.costs[1] + other.costs[1]]
        self.tokens = [self.tokens[0] + other.tokens[0], self.tokens[1] + other.tokens[1]]

    @property
    def passed(self) -> int:
        return self.statuses.get("pass", 0)

    def summary(self, skipped: int = 0) -> dict[str, int]:
        return {"total": self.total + skipped, "passed": self.passed, "failed": self.statuses.get("fail", 0), "errors": self.statuses.get("error", 0), "skipped": skipped}


def _label(row: Mapping[str, Any]) -> str:
    return f"{row['eval_run']} · {row['scenario_id']}" if row.get("eval_run") else row["scenario_id"]


class ResultSpool:
    """One run's result rows in a private, anonymous JSON Lines file, read back in scenario order.

    With `public` (`--report-dir`'s `RUN_ID.jsonl`), each row is also appended there as it
    arrives, unless it would publish a `generate:` value (the answer key): that line says
    it was withheld instead."""

    def __init__(self, order: Iterable[str], public: Path | None = None, generated: Callable[[], Mapping[str, str]] | None = None):
        self.order = {name: i for i, name in enumerate(order)}
        with temp_room("the run's results"):
            self.file: IO[bytes] = tempfile.TemporaryFile(prefix="benchtape-results-", suffix=".jsonl")  # gone on close, or with the process
        self.index = array("q")  # per row: scenario order, attempt, offset, length
        self.tally = Tally()
        self.public = public
        self.generated = generated or (lambda: {})
        self._public_file: IO[bytes] | None = None

    def add(self, row: dict[str, Any]) -> None:
        data = orjson.dumps(row, default=str)
        with temp_room("the run's results"):
            self.file.seek(0, os.SEEK_END)
            offset = self.file.tell()
            self.file.write(data + b"\n")
        self.index.extend((self.order.get(row["scenario_id"], len(self.order)), int(row.get("attempt") or 1), offset, len(data)))
        self.tally.add(row)
        if self.public is not None:
            self._publish(self.public, row, data)

    def _publish(self, public: Path, row: dict[str, Any], data: bytes) -> None:
        leaks = report_leaks({"results": [row]}, self.generated())
        if leaks:
            data = orjson.dumps({"session_id": row.get("session_id"), "scenario_id": row.get("scenario_id"), "attempt": row.get("attempt"), "status": row.get("status"), "withheld": "a generated value (the answer key) would be published: " + "; ".join(leaks[:5])})
        if self._public_file is None:
            public.parent.mkdir(parents=True, exist_ok=True)
            self._public_file = open(public, "ab")
        self._public_file.write(data + b"\n")
        self._public_file.flush()

    def __len__(self) -> int:
        return len(self.index) // 4

    def raw_rows(self) -> Iterator[bytes]:
        """Each row's JSON, in scenario order then attempt (a row at a time from disk)."""
        with temp_room("the run's results"):
            self.file.flush()
        n = len(self)
        idx = self.index
        for i in sorted(range(n), key=lambda i: (idx[4 * i], idx[4 * i + 1], idx[4 * i + 2])):
            self.file.seek(idx[4 * i + 2])
            yield self.file.read(idx[4 * i + 3])

    def rows(self) -> Iterator[dict[str, Any]]:
        for raw in self.raw_rows():
            yield orjson.loads(raw)

    def close(self) -> None:
        for f in (self.file, self._public_file):
            if f is not None and not f.closed:
                f.close()


def write_streamed(path: Path, head: dict[str, Any], rows: Iterable[bytes], tail: dict[str, Any], generated: Mapping[str, str]) -> None:
    """A report written a row at a time (never whole in memory), through a temporary file that
    is renamed into place only when no `generate:` value would be published in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    leaks = report_leaks(head, generated) + report_leaks(tail, generated)
    try:
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(head, option=orjson.OPT_INDENT_2, default=str)[:-2] + b',\n  "results": [')
            for i, raw in enumerate(rows):
                if generated:
                    leaks.extend(report_leaks({"results": [orjson.loads(raw)]}, generated))
                f.write((b"\n" if i == 0 else b",\n") + raw)
            f.write(b"\n  ],\n" + orjson.dumps(tail, option=orjson.OPT_INDENT_2, default=str)[2:] + b"\n")
        if leaks:
            _refuse(path, leaks)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _refuse(path: Path, leaks: list[str]) -> None:
    listed = "\n    ".join(leaks[:20])
    raise ReportLeak(
        f"report {path} was NOT written: a generated value (the answer key) would be published in it:\n    {listed}"
        "\n  the sessions are recorded in the database; fix: keep generated values out of check specs and vars, and let checks read them from vars"
    )


def write_json_atomic(path: Path, doc: Any) -> None:
    """Write via a temp file and rename, so a reader never sees half a report."""
    write_bytes_atomic(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2, default=str))


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextmanager
def new_folder(dest: Path) -> Iterator[Path]:
    """A folder to fill and then have at `dest`, a new or empty folder: a temporary one beside
    it, moved into place when the block ends well and removed when it does not, so a failure
    leaves nothing half-written. BadInput for a `dest` that holds something already."""
    from benchtape.core.errors import BadInput
    from benchtape.sandbox.trees import remove_tree

    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BadInput(f"{dest} exists and is not an empty folder; refusing to write over it", file=str(dest), fix="name a new folder")
    parent = dest.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    except OSError as exc:
        raise BadInput(f"cannot write there: {exc.strerror or exc}", file=str(dest), fix="name a folder in a writable place") from None
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 is for the temporary name only
        if dest.exists():
            dest.rmdir()
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            remove_tree(tmp)


def report_dir_paths(report_dir: Path, run_id: str) -> tuple[Path, Path]:
    """(the report file, the folder beside it holding workspace snapshots by sha256)."""
    return report_dir / f"{run_id}.json", report_dir / run_id / "snapshots"


def load_report(path: Path) -> dict[str, Any]:
    from benchtape.core.errors import BadInput

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput("no such report", file=str(path), fix="pass the path of a --report-json file or a --report-dir report") from None
    if path.suffix == ".jsonl":  # --report-dir's stream, readable while the run goes on
        return _load_stream(path, data)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"not a JSON report: {exc}", file=str(path)) from None
    if not isinstance(doc, dict) or "results" not in doc:
        raise BadInput("not a benchtape report (no results)", file=str(path), fix="pass a file written by --report-json or --report-dir")
    return doc


def write_run_report(path: Path, run: Any, complete: bool, database: str | None) -> None:
    """One bench run's report (`run`: a BenchRun with run_id, grading_id, bench, harness, spool, generated)."""
    head = _run_head(run_id=run.run_id, grading_id=run.grading_id, bench_path=str(run.bench.path), bench_dir=str(run.bench.dir), harness=run.harness, complete=complete, database=database)
    specs = schema(run.bench.metrics, run.bench.derived_metrics)
    head["metric_specs"] = specs
    write_streamed(path, head, run.spool.raw_rows(), {"summary": run.spool.tally.summary(), "metrics": summarize(specs, run.spool.tally.metrics)}, run.generated)


def write_combined(path: Path, outcome: Any, complete: bool, database: str | None = None) -> None:
    """The report of a whole invocation: one run's report, or every run of an Eval with its control audit."""
    generated = {k: v for run in outcome.runs for k, v in run.generated.items()}
    if len(outcome.runs) == 1 and outcome.control is None:
        write_run_report(path, outcome.runs[0], complete, database)
        return
    head: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA,
        "complete": complete,
        "database": database,
        "runs": [{"run_id": r.run_id, "grading_id": r.grading_id, "bench": str(r.bench.path), "bench_dir": str(r.bench.dir), **({"name": r.name} if r.name else {})} for r in outcome.runs],
    }
    tail: dict[str, Any] = {"summary": outcome.tally.summary()}
    specs = schema(outcome.runs[0].bench.metrics, outcome.runs[0].bench.derived_metrics) if outcome.runs else []
    head["metric_specs"], tail["metrics"] = specs, summarize(specs, outcome.tally.metrics)  # an Eval's runs share one bench (and its Eval's metrics:)
    if outcome.control is not None:
        tail["eval"], tail["control"] = outcome.eval_path, outcome.control
    write_streamed(path, head, (raw for run in outcome.runs for raw in run.spool.raw_rows()), tail, generated)


def _load_stream(path: Path, data: bytes) -> dict[str, Any]:
    """A `RUN_ID.jsonl` stream as a report: its complete lines (a line being written is skipped), withheld rows left out."""
    from benchtape.core.errors import BadInput

    results = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            if not data.endswith(b"\n") and n == data.count(b"\n") + 1:
                break  # the last line is still being written
            raise BadInput("not a JSON Lines report: a line is not JSON", file=str(path), line=n) from None
        if isinstance(row, dict) and "withheld" not in row:
            results.append(row)
    run_ids = {r.get("run_id") for r in results}
    return {"run_id": run_ids.pop() if len(run_ids) == 1 else None, "results": results, "complete": False}


def save_snapshot(store: BrowsingStore, sha: str, folder: Path) -> None:
    """A workspace snapshot beside a `--report-dir` report, so the folder alone can be re-graded."""
    target = folder / f"{sha}.tar"
    if target.exists():
        return
    data = store.get_blob(sha)
    if data:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
