"""Terminal output of `evaluation validate` and `compare` (rich tables, or plain lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from benchtape.render import console
from benchtape.render_replay import metric_text
from benchtape.replay.compare import COST_COLUMNS, Comparison, columns, control_lines, display, has_partial, matrix_text, notes, pair_line, plan_lines, rounds_lines, setup_label
from benchtape.replay.document import placed


def validation(doc: dict[str, Any], path: Path, ref: str) -> None:
    """`evaluation validate`'s report; `ref` names the evaluation in the command it suggests."""
    def say(text: str, **_: Any) -> None:
        print(text)

    say(f"evaluation {doc['evaluation']}  ({path})", highlight=False)
    sources = [*doc["benches"], *([f"task folders ({', '.join(doc['task_folders'])})"] if doc.get("task_folders") else [])]
    say(f"tasks: {len(doc['tasks'])} from {', '.join(sources) or 'no bench and no task folder'}", highlight=False)
    for line in doc.get("skipped_tasks", []):
        say(f"  {line}", highlight=False)
    say(f"arms: {len(doc['arms'])}", highlight=False)
    for number, arm in enumerate(doc["arms"], start=1):
        say(f"  {number:>3}  block {arm['block']}  {arm['label']}", highlight=False)
        if arm["workflow"]:
            for step in arm["steps"]:
                parts = [f"{step['tool']}@{step['tool_version']}", f"{step['model']} ({step['model_id']})", step["effort"] or ""]
                parts += [f"{k}={v}" for k, v in step["options"].items()]
                say(f"         step {step['name']}: " + " ".join(p for p in parts if p), highlight=False)
    for rep in doc["repeated_arms"]:
        say(f"  note: block {rep['block']} repeats {rep['arm']} (blocks are unioned: counted once)", highlight=False)
    say(f"attempts: {doc['attempts']}", highlight=False)
    say(f"cells per task: {doc['cells_per_task']} ({len(doc['arms'])} arm(s) × {doc['attempts']} attempt(s))", highlight=False)
    say(f"cells: {doc['cells']} ({doc['cells_per_task']} × {len(doc['tasks'])} task(s))", highlight=False)
    if doc["unpriced_models"]:
        say(f"unpriced (cost unknown unless the tool reports it): {', '.join(doc['unpriced_models'])}", highlight=False)
    if doc["require_env"]:
        say(f"needs host environment: {', '.join(doc['require_env'])}", highlight=False)
    from benchtape.replay.power import sentences

    for line in sentences(doc["plan"]):
        say(line)
    say(f"nothing was started; validation cannot tell which cells are already measured: `benchtape run {ref} --dry-run` does", highlight=False)


def comparison_table(c: Comparison, plain: bool) -> None:
    out = console(plain)
    if c.headline:
        out.print(f"MEASURED THE PIPELINE — {c.headline}" if c.measured == "pipeline" else f"note: {c.headline}", highlight=False)
    out.print(f"{c.title}: {len(c.tasks)} task(s), {c.attempts} attempt(s), {c.measurements} stored measurement(s)", highlight=False)
    names = columns(c.k, has_partial(c))
    if c.ranked:
        table = Table(*names, box=None, show_edge=False, pad_edge=False)
        for row in c.ranked:
            shown = display(row, c.k)
            table.add_row(*(shown[col] for col in names))
        out.print(table)
        costs = Table(*COST_COLUMNS, box=None, show_edge=False, pad_edge=False, title="cost: per cell, per solved task (95% CI, clustered by task), tokens × the price table (cache reads and writes at their own rates)", title_justify="left")
        for row in c.ranked:
            shown = display(row, c.k)
            costs.add_row(*(shown[col] for col in COST_COLUMNS))
        out.print(costs)
    if c.unranked:
        out.print("not ranked (tasks missing):", highlight=False)
        for row in c.unranked:
            missing = ", ".join(row.missing[:8]) + (f" … (+{len(row.missing) - 8})" if len(row.missing) > 8 else "")
            failed = f"; {row.attempted_failures} attempt(s) ended in an execution failure (not measurements)" if row.attempted_failures else ""
            out.print(f"  {row.label}: {row.tasks_measured}/{row.tasks_total} tasks measured; missing {missing}{failed}", highlight=False)
            out.print(f"    fill: {row.fill}", highlight=False)
    if c.controls:
        out.print("controls (they check the tasks; never ranked):", highlight=False)
        for line in control_lines(c):
            out.print(f"  {line}", highlight=False)
    if c.pairs:
        labels = {r.arm: r.label for r in c.rows}
        test = "the always-valid test on the tasks where they differ (the evaluation ran in rounds, looked at after each)" if any(p.test == "e-value" for p in c.pairs) else "exact sign test on the tasks where they differ, McNemar with one attempt"
        head = f"paired per-task differences (A − B pass rate with its 95% interval; {test}" + ("; p Holm-adjusted over every pair" if c.correction else "") + "):"
        out.print(head, highlight=False)
        for p in c.pairs:
            out.print(f"  {labels[p.a]}  vs  {labels[p.b]}: {pair_line(p)}", highlight=False)
    if c.metrics:
        _metrics(out, c)
    if c.conclusions:
        out.print("what this shows:", highlight=False)
        for item in c.conclusions:
            out.print(f"  {item['sentence']}", highlight=False)
    if c.rounds and c.sequential:
        out.print(f"run in {len(c.rounds)} round(s) (--until-decided); the always-valid test, looked at after every round, says:", highlight=False)
        for line in rounds_lines(c):
            out.print(f"  {line}", highlight=False)
    for line in plan_lines(c):
        out.print(line, highlight=False)
    if c.matrix:
        _matrix(out, c)
    if c.flaky:
        labels = {r.arm: r.label for r in c.rows}
        out.print("flaky (attempts of one setup disagree):", highlight=False)
        for f in c.flaky:
            out.print(f"  {f.task}  {labels.get(f.arm, f.arm)}: {', '.join(o or 'ungraded' for o in f.outcomes)}", highlight=False)
    for note in notes(c):
        out.print(f"note: {note}", highlight=False)


def _metrics(out: Any, c: Comparison) -> None:
    """The bench's declared metrics per setup (mean per measured cell; n/a when none measured it)."""
    names = sorted({name for values in c.metrics.values() for name in values})
    table = Table("setup", *names, box=None, show_edge=False, pad_edge=False)
    for row in c.rows:
        values = c.metrics.get(row.arm)
        if values is not None:
            table.add_row(row.label, *(metric_text(values.get(name)) for name in names))
    out.print("metrics (the bench's metrics: and derivedMetrics:, mean per cell):", highlight=False)
    out.print(table)


def _matrix(out: Any, c: Comparison) -> None:
    """task × setup: each attempt's outcome in order (`matrix_text`), execution failures in brackets."""
    shown = [r for r in c.rows if r.cells or r.attempted_failures]
    if not shown:
        return
    table = Table("task", *(setup_label(r) for r in shown), box=None, show_edge=False, pad_edge=False, title="per task × setup (attempts in order; [ ] not measured)", title_justify="left")
    for task in c.tasks:
        table.add_row(task, *(matrix_text(c.matrix.get(task, {}).get(r.arm, [])) for r in shown))
    out.print(table)


def side_by_side_table(doc: dict[str, Any], plain: bool) -> None:
    """One column per setup, one block of rows per attempt: outcome, verdicts, diff, output."""
    out = console(plain)
    out.print(f"task {doc['task']}: each setup's sessions side by side")
    table = Table(show_header=True, show_lines=True)
    table.add_column("")
    for setup in doc["setups"]:
        table.add_column(setup["setup"], overflow="fold")
    depth = max((len(s["sessions"]) for s in doc["setups"]), default=0)
    for i in range(depth):
        picked = [s["sessions"][i] if i < len(s["sessions"]) else None for s in doc["setups"]]
        for name, cell in (("session", _head), ("verdicts", _verdicts), ("diff", _diff), ("final output", _output)):
            table.add_row(name, *("" if p is None else cell(p) for p in picked))
    out.print(table)


def _head(s: dict[str, Any]) -> str:
    return f"#{s['attempt']} {s['outcome'] or 'not graded'}{'' if s['measured'] else ' (measured nothing)'}\n{s['session_id']}"


def _verdicts(s: dict[str, Any]) -> str:
    return "\n".join(f"{v['status']} {placed(v['check'], v['type'])}" for v in s["verdicts"]) or "not graded"


def _diff(s: dict[str, Any]) -> str:
    d = s["diff"]
    if "none" in d:
        return f"no diff: {d['none']}"
    return f"{d['modified']} modified · {d['added']} added · {d['removed']} removed\n+{d['lines_added']} −{d['lines_removed']} lines"


def _output(s: dict[str, Any]) -> str:
    return "(none)" if s["final_output"] is None else str(s["final_output"])
