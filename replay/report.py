"""Report JSON (`--report-json`, `--report-dir`): results per session with their checks and
the whole session, and a summary. A report is enough input on its own for `grade`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson

from recorder.leaks import ReportLeak, report_leaks
from recorder.model import Session
from recorder.version import VERSION
from replay.document import session_json
from replay.grading import Verdict

REPORT_SCHEMA = 1


def result_row(session: Session, scenario_id: str, status: str, verdicts: list[Verdict], attempt: int = 1, *, run_id: str | None = None, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """One session's result; `context` ({vars, transform, control}) is what `grade` needs,
    beside each check's spec, to reproduce the verdicts from the report alone."""
    return {
        "scenario_id": scenario_id,
        "attempt": attempt,
        "status": status,
        "session_id": session.id,
        "run_id": run_id,
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
        "session": session_json(session),
    }


def summary(results: list[dict[str, Any]], skipped: int = 0) -> dict[str, int]:
    return {
        "total": len(results) + skipped,
        "passed": sum(r["status"] == "pass" for r in results),
        "failed": sum(r["status"] == "fail" for r in results),
        "errors": sum(r["status"] == "error" for r in results),
        "skipped": skipped,
    }


def build_report(*, run_id: str, grading_id: str | None, bench_path: str, bench_dir: str, harness: str, results: list[dict[str, Any]], complete: bool, skipped: int = 0) -> dict[str, Any]:
    return {
        "schema_version": REPORT_SCHEMA,
        "benchtape_version": VERSION,
        "run_id": run_id,
        "grading_id": grading_id,
        "bench": bench_path,
        "bench_dir": bench_dir,
        "harness": harness,
        "complete": complete,
        "written_at": time.time(),
        "results": results,
        "summary": summary(results, skipped),
    }


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


def report_dir_paths(report_dir: Path, run_id: str) -> tuple[Path, Path]:
    """(the report file, the folder beside it holding workspace snapshots by sha256)."""
    return report_dir / f"{run_id}.json", report_dir / run_id / "snapshots"


def load_report(path: Path) -> dict[str, Any]:
    from recorder.errors import BadInput

    try:
        doc = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise BadInput("no such report", file=str(path), fix="pass the path of a --report-json file or a --report-dir report") from None
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"not a JSON report: {exc}", file=str(path)) from None
    if not isinstance(doc, dict) or "results" not in doc:
        raise BadInput("not a benchtape report (no results)", file=str(path), fix="pass a file written by --report-json or --report-dir")
    return doc


def run_report(state: Any, harness: str, complete: bool) -> dict[str, Any]:
    """One bench run's report (`state`: a run with run_id, grading_id, bench and results)."""
    return build_report(run_id=state.run_id, grading_id=state.grading_id, bench_path=str(state.bench.path), bench_dir=str(state.bench.dir), harness=harness, results=list(state.results), complete=complete)


def write_combined(path: Path, outcome: Any, complete: bool) -> None:
    """The report of a whole invocation: one run's report, or every run of an Eval with its control audit."""
    if len(outcome.runs) == 1 and outcome.control is None:
        run = outcome.runs[0]
        doc = run_report(run, run.harness, complete)
    else:
        doc = {
            "schema_version": REPORT_SCHEMA,
            "complete": complete,
            "runs": [{"run_id": r.run_id, "grading_id": r.grading_id, "bench": str(r.bench.path), "bench_dir": str(r.bench.dir), **({"name": r.name} if r.name else {})} for r in outcome.runs],
            "results": outcome.results,
            "summary": summary(outcome.results),
        }
        if outcome.control is not None:
            doc["eval"], doc["control"] = outcome.eval_path, outcome.control
    write_report(path, doc, {k: v for run in outcome.runs for k, v in run.generated.items()})


def write_report(path: Path, doc: dict[str, Any], generated: dict[str, str]) -> None:
    """Write a report unless it would publish a `generate:` value (the answer key): then refuse, naming where."""
    leaks = report_leaks(doc, generated)
    if leaks:
        listed = "\n    ".join(leaks[:20])
        raise ReportLeak(
            f"report {path} was NOT written: a generated value (the answer key) would be published in it:\n    {listed}"
            "\n  the sessions are recorded in the database; fix: keep generated values out of check specs and vars, and let checks read them from vars"
        )
    write_json_atomic(path, doc)


def save_snapshot(store: Any, sha: str, folder: Path) -> None:
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
