"""Report JSON (`--report-json`, `--report-dir`): results per session with their checks and
the whole session, and a summary. A report is enough input on its own for `grade`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson

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
