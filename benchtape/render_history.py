"""Terminal output of `report list | show | compare | trend` (plain lines; `--json` prints the documents)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from benchtape.render import console
from benchtape.render_replay import metric_text, when
from benchtape.replay.document import row_outcome

MARK = {"pass": "P", "fail": "F", "error": "E", None: "·"}


def emit(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def _summary(s: dict[str, Any]) -> str:
    total = s.get("total") or 0
    return f"{s.get('passed', 0)}/{total} passed, {s.get('failed', 0)} failed, {s.get('errors', 0)} errored"


def listing(where: Path, reports: list[Any], plain: bool) -> None:
    out = console(plain)
    if not reports:
        out.print(f"{where}: no reports (write some with `benchtape run BENCH --report-dir {where}`)", highlight=False)
        return
    out.print(f"{len(reports)} report(s) in {where}, oldest first", highlight=False)
    for r in reports:
        state = "" if r.complete else "  (incomplete: the run was stopped or is still going)"
        out.print(f"  {r.run_id}  {when(r.written_at)}  {r.facts.get('bench') or '-'}  {_summary(r.summary)}{state}", highlight=False)


def one(report: Any, plain: bool) -> None:
    out = console(plain)
    doc = report.document()
    out.print(f"report {report.run_id}  ({report.path}){'' if report.complete else '  incomplete'}", highlight=False)
    out.print(f"bench {doc.get('bench') or '-'}  harness {doc.get('harness') or '-'}  written {when(report.written_at)}", highlight=False)
    out.print(_summary(doc.get("summary") or report.summary), highlight=False)
    for row in doc.get("results") or []:
        checks = row.get("checks") or []
        passed = sum(1 for c in checks if c.get("status") == "PASS")
        name = (f"{row['eval_run']} · " if row.get("eval_run") else "") + f"{row['scenario_id']} #{row.get('attempt') or 1}"
        values = "  ".join(f"{k} {metric_text(v)}" for k, v in (row.get("metrics") or {}).items())
        out.print(f"  {name}  {row_outcome(row).upper()}  checks {passed}/{len(checks)}" + (f"  {values}" if values else ""), highlight=False)
        for c in checks:
            if c.get("status") in ("FAIL", "ERROR") and (not c.get("readout") or c.get("status") == "ERROR"):
                reason = ((c.get("result") or {}).get("reason") or "").splitlines()[:1]
                out.print(f"      {c.get('status')} {c.get('path', '')} {c.get('metric') or c.get('type')}: {reason[0] if reason else ''}", highlight=False)
    run_metrics = doc.get("metrics") or {}
    if run_metrics:
        out.print("metrics (the run):", highlight=False)
        for name, m in run_metrics.items():
            unit = f" {m['unit']}" if m.get("unit") else ""
            out.print(f"  {name}  {metric_text(m.get('value'))}{unit}  ({m.get('aggregate')} over {m.get('n', 0)} session(s){', ' + str(m['missing']) + ' missing' if m.get('missing') else ''})", highlight=False)


def comparison(diff: dict[str, Any], plain: bool) -> None:
    out = console(plain)
    a, b = diff["a"], diff["b"]
    out.print(f"A {a['run_id']}  {_summary(a['summary'])}", highlight=False)
    out.print(f"B {b['run_id']}  {_summary(b['summary'])}", highlight=False)
    out.print(f"{diff['changed']} of {len(diff['scenarios'])} scenario attempt(s) changed", highlight=False)
    for s in diff["scenarios"]:
        if s["a"] == s["b"] and not s["flips"]:
            continue
        out.print(f"  {s['scenario']}: {s['a'] or 'absent'} → {s['b'] or 'absent'}", highlight=False)
        for f in s["flips"]:
            out.print(f"      {f['check']}: {f['a'] or 'absent'} → {f['b'] or 'absent'}", highlight=False)
    if diff["metrics"]:
        out.print("metrics (A → B):", highlight=False)
        for name, m in diff["metrics"].items():
            delta = "" if m["delta"] is None else f" ({m['delta']:+g})"
            out.print(f"  {name}  {metric_text(m['a'])} → {metric_text(m['b'])}{delta}" + (f"  [{m['better']} is better]" if m.get("better") else ""), highlight=False)


def trend(found: dict[str, Any], plain: bool) -> None:
    out = console(plain)
    runs = found["runs"]
    if not runs:
        out.print("no reports", highlight=False)
        return
    names = list(dict.fromkeys(n for r in runs for n in r["metrics"]))
    for r in runs:
        rate = "—" if r["pass_rate"] is None else f"{r['pass_rate']:.0%}"
        values = "  ".join(f"{n} {metric_text(r['metrics'].get(n))}" for n in names)
        out.print(f"{r['run_id']}  {when(r['written_at'])}  pass {rate} ({_summary(r['summary'])})" + (f"  {values}" if values else "") + ("" if r["complete"] else "  incomplete"), highlight=False)
    out.print("per scenario, oldest run first (P pass, F fail, E error, · absent):", highlight=False)
    for name, column in found["scenarios"].items():
        out.print(f"  {''.join(MARK.get(o, '?') for o in column)}  {name}", highlight=False)
