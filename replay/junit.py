"""JUnit XML for CI systems: one testcase per scenario attempt (classname: its bench; time: its
wall clock), its failing checks, by name, as the failure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Iterable

from replay.document import check_label, check_name


def junit_xml(results: Iterable[dict[str, Any]], name: str = "benchtape") -> str:
    """A <testsuite>: pass → passed testcase, fail → <failure>, error → <error> (the harness or a check could not measure).

    Rows are read one at a time (a report streamed from disk works); only the small XML elements are kept."""
    suite = ET.Element("testsuite", name=name)
    tests = failures = errors = 0
    total_time = 0.0
    for r in results:
        tests += 1
        ms = ((r.get("session") or {}).get("metrics") or {}).get("wall_ms") or 0
        total_time += ms / 1000
        label = f"{r['scenario_id']}#{r.get('attempt', 1)}"
        case = ET.SubElement(suite, "testcase", classname=str(r.get("bench") or name), name=f"{r['eval_run']} · {label}" if r.get("eval_run") else label, time=f"{ms / 1000:.3f}")
        bad = [c for c in r["checks"] if c.get("status") in ("FAIL", "ERROR") and (not c.get("readout") or c.get("status") == "ERROR")]
        lines = [f"{c.get('path', c['type'])} {check_label(c.get('metric'), c['type'])}: {c['status']}: {c['result'].get('reason') or ''}" for c in bad]
        if r["status"] == "fail":
            failures += 1
            names = ", ".join(check_name(c.get("metric"), c["type"]) for c in bad)
            ET.SubElement(case, "failure", message=f"{len(bad)} check(s) failed: {names}", type="fail").text = "\n".join(lines)
        elif r["status"] == "error":
            errors += 1
            session = r.get("session") or {}
            why = "; ".join(session.get("errors") or []) or ("timed out" if session.get("timed_out") else "a check could not measure")
            ET.SubElement(case, "error", message=why, type="error").text = "\n".join(lines)
        ET.SubElement(case, "system-out").text = f"session {r.get('session_id')}"
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("time", f"{total_time:.3f}")
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
