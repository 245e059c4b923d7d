"""JUnit XML for CI systems: one testcase per scenario attempt (classname: its bench; time: its
wall clock), its failing checks, by name, as the failure.

Written a testcase at a time from rows read twice (once for the suite's totals, once for
the cases), so a run of any size never holds its rows or its XML tree in memory."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import IO, Any, Callable, Iterable

from benchtape.replay.document import check_label, check_name, row_outcome


def write_junit(path: Path, rows: Callable[[], Iterable[dict[str, Any]]], name: str = "benchtape") -> None:
    """A <testsuite>: pass → passed testcase, fail → <failure>, error → <error> (the harness or a check could not measure).
    `rows` gives the result rows anew each time it is called."""
    tests = failures = errors = 0
    total_time = 0.0
    for r in rows():
        tests += 1
        failures += row_outcome(r) == "fail"
        errors += row_outcome(r) == "error"
        total_time += _seconds(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            suite = ET.Element("testsuite", name=name, tests=str(tests), failures=str(failures), errors=str(errors), time=f"{total_time:.3f}")
            head = ET.tostring(suite, encoding="unicode")  # <testsuite … />
            f.write("<?xml version='1.0' encoding='utf-8'?>\n" + head[: -len(" />")] + ">")
            for r in rows():
                _write_case(f, r, name)
            f.write("</testsuite>")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def junit_xml(results: Iterable[dict[str, Any]], name: str = "benchtape") -> str:
    """The same document as a string, for a list of rows already in memory."""
    import tempfile

    rows = list(results)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "junit.xml"
        write_junit(target, lambda: rows, name)
        return target.read_text(encoding="utf-8")


def _seconds(r: dict[str, Any]) -> float:
    return (((r.get("session") or {}).get("metrics") or {}).get("wall_ms") or 0) / 1000


def _write_case(f: IO[str], r: dict[str, Any], name: str) -> None:
    label = f"{r['scenario_id']}#{r.get('attempt', 1)}"
    case = ET.Element("testcase", classname=str(r.get("bench") or name), name=f"{r['eval_run']} · {label}" if r.get("eval_run") else label, time=f"{_seconds(r):.3f}")
    bad = [c for c in r["checks"] if c.get("status") in ("FAIL", "ERROR") and (not c.get("readout") or c.get("status") == "ERROR")]
    lines = [f"{c.get('path', c['type'])} {check_label(c.get('metric'), c['type'])}: {c['status']}: {c['result'].get('reason') or ''}" for c in bad]
    if row_outcome(r) == "fail":
        names = ", ".join(check_name(c.get("metric"), c["type"]) for c in bad)
        ET.SubElement(case, "failure", message=f"{len(bad)} check(s) failed: {names}", type="fail").text = "\n".join(lines)
    elif row_outcome(r) == "error":
        session = r.get("session") or {}
        why = "; ".join(session.get("errors") or []) or ("timed out" if session.get("timed_out") else "a check could not measure")
        ET.SubElement(case, "error", message=why, type="error").text = "\n".join(lines)
    ET.SubElement(case, "system-out").text = f"session {r.get('session_id')}"
    f.write(ET.tostring(case, encoding="unicode"))
