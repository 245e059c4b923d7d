"""Terminal output of `benchtape run EVALUATION`: the preview, the consent question, progress
lines as cells finish, and what the invocation did."""

from __future__ import annotations

import functools
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

import orjson
from rich.table import Table

from benchtape.render import console
from benchtape.render import plain_wanted as plain_wanted  # re-exported for the command

if TYPE_CHECKING:
    from benchtape.store.views import BrowsingStore

FAILURES = ("timeout", "adapter_error", "infrastructure_error")


def preview(doc: dict[str, Any], plain: bool, json_out: bool) -> None:
    if json_out:
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    out = console(plain)
    say = functools.partial(out.print, highlight=False)
    say(f"evaluation {doc['evaluation']}  ({doc['path']})")
    say(f"{doc['cells']} cell(s): {len(doc['tasks'])} task(s) × {len(doc['setups'])} setup(s) × {doc['attempts']} attempt(s)")
    for line in doc["versions"]:
        say(f"  tool {line}")
    table = Table("setup", "cells", "measured (re-graded)", "to run", box=None, show_edge=False, pad_edge=False)
    for row in doc["setups"]:
        extra = []
        if row["never_reusable"]:
            why = row.get("never_reusable_why") or []
            extra.append(f"{row['never_reusable']} never reusable" + (f": {why[0]}" + (f" (and {len(why) - 1} other reason(s))" if len(why) > 1 else "") if why else ""))
        if row["cannot_start"]:
            extra.append(f"{row['cannot_start']} cannot start")
        if row["attempted_before"]:
            extra.append(f"{row['attempted_before']} earlier attempt(s) not measured")
        table.add_row(row["setup"], str(row["cells"]), str(row["measured"]), str(row["to_run"]) + (f" ({'; '.join(extra)})" if extra else ""))
    out.print(table)
    if doc["fresh"]:
        say("--fresh: every selected cell is measured again (nothing stored is deleted)")
    say(_would_run(doc))
    for item in doc["installs"]:
        say(f"would install {item['tool']} {item['version']} into {item['into']} ({item['via']}, this folder only)")
    say("estimated spend: " + spend(doc["estimate"]))
    timed = doc.get("estimate_time")
    if timed and (timed["known_cells"] or timed["unknown_cells"]):
        say("estimated time: " + duration(timed, doc.get("concurrency")))
    for problem in doc["problems"]:
        say(f"cannot start (recorded as infrastructure_error): {problem}")
    for note in doc["notes"]:
        say(f"note: {note}")
    if doc.get("plan"):
        from benchtape.replay.compare import plan_sentences

        for line in plan_sentences(doc["plan"]):
            say(line)


def _would_run(doc: dict[str, Any]) -> str:
    """The preview's count of what will run: every cell to run, or, in rounds (--until-decided),
    at most what the limit and the contenders leave — it stops sooner when decided."""
    rounds = doc.get("until_decided")
    if not rounds:
        return f"would run {doc['to_run']} cell(s); {doc['measured']} measured cell(s) are re-graded with the current checks, not run"
    limit = f", --max-cells {rounds['max_cells']}" if rounds["max_cells"] is not None else ""
    if (doc.get("plan") or {}).get("decidable") is False:  # "fewer if decided sooner" promised what these tasks cannot give
        return f"would run at most {rounds['at_most_cells']} cell(s), in rounds (--until-decided{limit}): no pair can be decided on these tasks (the plan says why), so the rounds stop only when the cells run out; the fixed design would run {rounds['fixed_design_cells']}"
    return f"would run at most {rounds['at_most_cells']} cell(s), in rounds (--until-decided{limit}): fewer if every pair is decided sooner; the fixed design would run {rounds['fixed_design_cells']}"


def spend(est: dict[str, Any]) -> str:
    text = f"${est['usd']:.4f}"
    if not est["floor"]:
        return text + f" over {est['known_cells']} cell(s)"
    why = "; ".join(f"{label}: {reason}" for label, reason in est["why_unknown"].items())
    if not est["known_cells"]:  # "at least $0.0000" would read as free
        return f"unknown: none of the {est['unknown_cells']} cell(s) has an estimate ({why})"
    return f"at least {text} — a floor: {est['unknown_cells']} cell(s) have no estimate ({why})"


def duration(timed: dict[str, Any], concurrency: int | None) -> str:
    """The preview's time: the cells' own time from the stored cells of each setup, and what it
    comes to with `concurrency` cells at once (a floor where a setup has none stored)."""
    if not timed["known_cells"]:
        return f"unknown: no setup has a stored cell to time from ({', '.join(timed['untimed'])})"
    total = timed["cell_seconds"]
    text = f"~{_minutes(total)} of cells (each setup's stored cells' mean)"
    if concurrency and concurrency > 1:
        text += f", ~{_minutes(total / concurrency)} at {concurrency} at once"
    if timed["unknown_cells"]:
        text += f"; a floor: {timed['unknown_cells']} cell(s) of {', '.join(timed['untimed'])} have no stored time"
    return text


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def confirm(doc: dict[str, Any]) -> bool:
    """Ask on the terminal; anything but yes is no."""
    what = f"run {doc['to_run']} cell(s)" + (f" and install {len(doc['installs'])} tool version(s)" if doc["installs"] else "")
    try:
        answer = input(f"{what}? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def progress(plain: bool) -> Callable[[str, dict[str, Any]], None]:
    """One line on stderr per cell as it finishes (and when a run is being stopped)."""
    err = console(plain, stderr=True)
    lock = threading.Lock()
    count = {"n": 0}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        with lock:
            if kind == "cell.finished":
                count["n"] += 1
                failed = data["outcome"] in FAILURES
                mark = data["outcome"] + (f" ({data['reason']})" if failed else "")
                how = "attempted" if failed and data["how"] == "measured" else data["how"]  # an execution failure measured nothing (the summary says so too)
                err.print(f"{count['n']:>4} {how:<10} {data['label']} · {data['task']} #{data['attempt']}: {mark}", highlight=False)
            elif kind == "evaluation.stopping":
                err.print(f"stopping: nothing more is scheduled ({data['unscheduled']} cell(s) left); {data['in_flight']} in flight finish — Ctrl-C again to stop them too", highlight=False)
            elif kind == "evaluation.cancelling":
                err.print(f"stopping the {data['in_flight']} cell(s) in flight (kept as interrupted attempts)", highlight=False)
            elif kind == "install":
                err.print(f"installing {data['tool']} {data['version']} (npm, into benchtape's tools folder)", highlight=False)
            elif kind == "staging.finished":
                err.print(f"staged {', '.join(data['scenarios'])}: {data['kind']} {data['program']} ({data['seconds']:g}s)", highlight=False)
            elif kind == "sandbox.kept":
                err.print(f"kept sandbox of {data['scenario']}: {data['where']}", highlight=False)
            elif kind == "sandbox.note" and data.get("kind") == "recover":  # the run's start finished what a killed benchtape left
                err.print(f"sandbox: {data['message']}", highlight=False)
            elif kind == "sandbox.note" and data.get("kind") == "ray":  # where Ray's own messages went (stderr: --json's stdout stays one document)
                err.print(f"ray: {data['message']}", highlight=False)

    return on_event


def finished(done: Any, planned: Any, store: BrowsingStore, plain: bool, json_out: bool) -> None:
    if json_out:
        print(orjson.dumps({**done.to_dict(), "evaluation": planned.ev.name, "database": str(store.path)}, option=orjson.OPT_INDENT_2).decode())
        return
    out = console(plain)
    say = functools.partial(out.print, highlight=False)
    say(f"run {done.run_id}: {done.started_sessions} session(s) started, {done.measured_now} cell(s) measured now, {done.regraded} re-graded")
    for label, counts in done.outcomes.items():
        say(f"  {label}: " + ", ".join(f"{o} {n}" for o, n in sorted(counts.items())))
    if done.retried:
        say(f"{done.retried} attempt(s) were lost where they ran (a node died) and run again: on record as infrastructure_error, not counted above")
    if done.interrupted:
        say(f"interrupted: {done.unscheduled} cell(s) were not started; what finished is kept — run it again to fill the rest")
    failures = sum(n for c in done.outcomes.values() for o, n in c.items() if o in FAILURES)
    if failures:
        say(f"{failures} cell(s) ended in an execution failure: attempted, not measured; the next run measures them again")
    from benchtape.replay.compare import broken_controls

    for line in broken_controls(planned.ev, done.outcomes):
        say(line)
    say(f"database: {store.path}")
    say(f"next: benchtape compare {planned.ev.name}")
    sys.stdout.flush()


def rounds_plan(round_tasks: int, limits: str) -> None:
    """What `run NAME --until-decided --dry-run` adds to the preview."""
    print(f"--until-decided: rounds of {round_tasks} task(s) per undecided setup, in a fixed order; stops when every neighbouring pair is told apart (always-valid test, α = 0.05 over all pairs){limits}")


def rounds(doc: dict[str, Any], labels: dict[str, str], json_out: bool) -> None:
    """What `run NAME --until-decided` did: each round, each neighbouring pair's evidence, why it stopped."""
    if json_out:
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"evaluation {doc['evaluation']}: {len(doc['rounds'])} round(s) run now, {doc['cells_run']} new cell(s), ${doc['spent']:.4f} spent")
    for r in doc["rounds"]:
        print(f"  round {r['number']} (run {r['run_id']}): {r['cells']} cell(s): " + "; ".join(f"{labels.get(a, a)} +{len(ts)} task(s)" for a, ts in r["tasks"].items()))
    for p in doc["state"].get("neighbours", []):
        verdict = "told apart" if p["decided"] else "undecided"
        print(f"  {labels.get(p['a'], p['a'])} vs {labels.get(p['b'], p['b'])}: {p['a_wins']} task(s) one way, {p['b_wins']} the other over {p['tasks']}; evidence E = {p['e']:.3g} (needs {p['threshold']:.3g}): {verdict}")
    print(f"stopped: {doc['stopped']}")
    if doc["decided"]:
        print(f"  {doc['fixed_design_cells']} cell(s) would have been the fixed design (every task × attempt × setup)")
    print(f"next: benchtape compare {doc['evaluation']}")
