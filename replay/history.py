"""`report list | show | compare | trend`: the reports a `--report-dir` folder holds, read
as `run --report-dir` writes them (madbench §4.1: stored reports).

A run writes `RUN_ID.jsonl` as its sessions finish and `RUN_ID.json` when it ends (see
replay/report.py); a run that was stopped, or is still going, has only the stream, and is
listed as incomplete. Run ids are ULIDs, so their order is the order the runs started.

A whole report can be large (every session whole), so listing one reads only its head and
its tail (the run's facts and its summary: what `write_streamed` writes around the rows),
and falls back to reading it all when they cannot be told apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import orjson

from benchtape.core.errors import BadInput, closest
from benchtape.replay.document import row_outcome
from benchtape.replay.report import Tally, load_report

HEAD_BYTES = 1 << 16
_ROWS = b',\n  "results": ['
_TAIL = b"\n  ],\n"
DEFAULT_DIR = Path(".reports")


@dataclass
class StoredReport:
    """One run's report in the folder: its facts and summary (its rows read on demand)."""

    run_id: str
    path: Path
    complete: bool
    facts: dict[str, Any] = field(default_factory=dict)  # bench, harness, written_at, grading_id, metric_specs
    summary: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # the run's value of each metric
    _doc: dict[str, Any] | None = None

    @property
    def written_at(self) -> float | None:
        value = self.facts.get("written_at")
        return float(value) if isinstance(value, (int, float)) else (self.path.stat().st_mtime if self.path.exists() else None)

    def document(self) -> dict[str, Any]:
        """The whole report (every row), read once."""
        if self._doc is None:
            self._doc = load_report(self.path)
        return self._doc

    def rows(self) -> list[dict[str, Any]]:
        return list(self.document().get("results") or [])

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "path": str(self.path), "complete": self.complete, "written_at": self.written_at, "bench": self.facts.get("bench"), "harness": self.facts.get("harness"), "summary": self.summary, "metrics": self.metrics}


def folder(report_dir: Path | None) -> Path:
    """The report folder, or BadInput naming the flag that writes one."""
    path = report_dir or DEFAULT_DIR
    if not path.is_dir():
        raise BadInput(
            f"no report folder {path}" + ("" if report_dir else " here"),
            fix="pass --report-dir DIR: the folder `benchtape run BENCH --report-dir DIR` writes its reports into",
        )
    return path


def reports_in(path: Path) -> list[StoredReport]:
    """Every run's report in the folder, oldest first: RUN_ID.json, else (an incomplete run) RUN_ID.jsonl."""
    found: dict[str, Path] = {}
    for p in sorted(path.iterdir()):
        if p.name.startswith(".") or not p.is_file() or p.suffix not in (".json", ".jsonl"):
            continue
        if p.suffix == ".jsonl" and p.stem in found:
            continue
        found[p.stem] = p
    out = []
    for run_id in sorted(found):
        report = _read(run_id, found[run_id])
        if report is not None:
            out.append(report)
    return out


def _read(run_id: str, path: Path) -> StoredReport | None:
    """A report's facts and summary, or None for a JSON file that is no benchtape report."""
    if path.suffix == ".jsonl":
        doc = load_report(path)
        tally = Tally()
        for row in doc["results"]:
            tally.add(row)
        return StoredReport(run_id, path, False, {"written_at": path.stat().st_mtime}, tally.summary(), _doc=doc)
    head, tail = _head_and_tail(path)
    if head is None or "results" in head and not isinstance(head.get("results"), list):
        return None
    return StoredReport(run_id, path, bool(head.get("complete")), {k: v for k, v in head.items() if k != "results"}, tail.get("summary") or {}, tail.get("metrics") or {}, _doc=head if "results" in head else None)


def _head_and_tail(path: Path) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The report's keys before and after its rows, read from its two ends; the whole file
    when its layout is not `write_streamed`'s (then the head holds the rows too)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        start = f.read(HEAD_BYTES)
        cut = start.find(_ROWS)
        f.seek(max(0, size - HEAD_BYTES))
        end = f.read()
    at = end.rfind(_TAIL)
    if cut >= 0 and at >= 0 and size > len(start):
        try:
            return orjson.loads(start[:cut] + b"}"), orjson.loads(b"{" + end[at + len(_TAIL) :])
        except orjson.JSONDecodeError:
            pass
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return None, {}
    if not isinstance(doc, dict) or "results" not in doc:
        return None, {}
    return doc, {"summary": doc.get("summary"), "metrics": doc.get("metrics")}


def find(reports: list[StoredReport], ref: str, where: Path) -> StoredReport:
    """A report named by its path, its run id (any unique prefix) or `latest`."""
    as_path = Path(ref)
    if as_path.suffix in (".json", ".jsonl") and as_path.is_file():
        found = _read(as_path.stem, as_path)
        if found is None:
            raise BadInput("not a benchtape report (no results)", file=ref, fix="name a report `run --report-json`/`--report-dir` wrote")
        return found
    if ref == "latest":
        if not reports:
            raise BadInput(f"the report folder {where} holds no reports", fix="run a bench with --report-dir first")
        return reports[-1]
    hits = [r for r in reports if r.run_id.lower().startswith(ref.lower())]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise BadInput(f"{ref!r} names {len(hits)} reports in {where}", fix="give more of the run id: " + ", ".join(r.run_id for r in hits[:5]))
    near = closest(ref, [r.run_id for r in reports])
    raise BadInput(f"no report {ref!r} in {where}", fix=f"did you mean {near}?" if near else "list them with `benchtape report list`")


# ---------------------------------------------------------------- compare and trend


def _key(row: dict[str, Any]) -> str:
    run = f"{row['eval_run']} · " if row.get("eval_run") else ""
    return f"{run}{row['scenario_id']}#{row.get('attempt') or 1}"


def _checks(row: dict[str, Any]) -> dict[str, str]:
    return {str(c.get("path") or c.get("type")): str(c.get("status") or ("PASS" if (c.get("result") or {}).get("pass") else "FAIL")) for c in row.get("checks") or []}


def compare(a: StoredReport, b: StoredReport) -> dict[str, Any]:
    """What changed from report `a` to report `b`: per scenario attempt its outcome in each,
    every check whose status moved, and the run-level metrics side by side."""
    rows_a = {_key(r): r for r in a.rows()}
    rows_b = {_key(r): r for r in b.rows()}
    scenarios = []
    for key in list(dict.fromkeys([*rows_a, *rows_b])):
        ra, rb = rows_a.get(key), rows_b.get(key)
        flips = []
        if ra is not None and rb is not None:
            ca, cb = _checks(ra), _checks(rb)
            flips = [{"check": path, "a": ca.get(path), "b": cb.get(path)} for path in dict.fromkeys([*ca, *cb]) if ca.get(path) != cb.get(path)]
        scenarios.append({"scenario": key, "a": row_outcome(ra) if ra else None, "b": row_outcome(rb) if rb else None, "flips": flips})
    names = list(dict.fromkeys([*a.metrics, *b.metrics]))
    metrics = {n: {"a": (a.metrics.get(n) or {}).get("value"), "b": (b.metrics.get(n) or {}).get("value"), "better": (b.metrics.get(n) or a.metrics.get(n) or {}).get("better")} for n in names}
    for m in metrics.values():
        m["delta"] = None if m["a"] is None or m["b"] is None else m["b"] - m["a"]
    return {"a": a.to_dict(), "b": b.to_dict(), "scenarios": scenarios, "changed": sum(1 for s in scenarios if s["a"] != s["b"] or s["flips"]), "metrics": metrics}


def trend(reports: Iterable[StoredReport], scenario: str | None = None) -> dict[str, Any]:
    """Run after run (oldest first): each run's pass rate and metrics, and per scenario its
    outcome in each run (`scenario` narrows to one)."""
    runs = []
    by_scenario: dict[str, list[str | None]] = {}
    reports = list(reports)
    for i, report in enumerate(reports):
        outcomes: dict[str, list[str]] = {}
        for row in report.rows():
            if scenario is not None and row["scenario_id"] != scenario:
                continue
            label = f"{row['eval_run']} · {row['scenario_id']}" if row.get("eval_run") else row["scenario_id"]
            outcomes.setdefault(label, []).append(row_outcome(row))
        for label in outcomes:
            by_scenario.setdefault(label, [None] * i)
        for label, column in by_scenario.items():
            got = outcomes.get(label)
            column.append(None if got is None else ("pass" if all(o == "pass" for o in got) else ("error" if "error" in got else "fail")))
        s = report.summary if scenario is None else _summary_of(outcomes)
        total = s.get("total") or 0
        runs.append({"run_id": report.run_id, "written_at": report.written_at, "complete": report.complete, "summary": s, "pass_rate": (s.get("passed", 0) / total) if total else None, "metrics": {n: m.get("value") for n, m in report.metrics.items()}})
    return {"runs": runs, "scenarios": by_scenario}


def _summary_of(outcomes: dict[str, list[str]]) -> dict[str, int]:
    """A summary, as Tally.summary makes one, of these outcomes."""
    flat = [o for got in outcomes.values() for o in got]
    return {"total": len(flat), "passed": flat.count("pass"), "failed": flat.count("fail"), "errors": flat.count("error"), "skipped": 0}
