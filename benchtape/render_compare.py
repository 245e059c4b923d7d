"""Terminal output of `evaluation validate` and `compare` (rich tables, or plain lines).

Everything printed here is data — setup labels such as `codex solver [scripted]`, a
control's `[control: …]`, a matrix cell's `[infrastructure_error]`, an agent's final output —
so nothing is read as rich markup: lines go out with `markup=False` and table cells and
headers as `Text` (rich would take `[scripted]` for a style tag and drop it).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.table import Table
from rich.text import Text

from benchtape.render import console
from benchtape.render_replay import metric_text
from benchtape.replay.compare import COST_COLUMNS, Comparison, columns, control_lines, display, has_partial, matrix_text, notes, pair_line, plan_lines, plan_sentences, rounds_lines, setup_label
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
    for line in plan_sentences(doc["plan"]):
        say(line)
    say(f"nothing was started; validation cannot tell which cells are already measured: `benchtape run {ref} --dry-run` does", highlight=False)


def _say(out: Any) -> Callable[..., None]:
    """`out.print` for data: never markup (a `[scripted]` tag is text), never highlighted."""
    return functools.partial(out.print, highlight=False, markup=False)


def _table(names: Sequence[str], title: str | None = None) -> Table:
    """A borderless table whose headers and title are text, not markup (a matrix header is a
    setup label, `[scripted]` and all)."""
    table = Table(box=None, show_edge=False, pad_edge=False, title=Text(title) if title else None, title_justify="left")
    for name in names:
        table.add_column(Text(name))
    return table


def _add_row(table: Table, cells: Sequence[str]) -> None:
    table.add_row(*(Text(cell) for cell in cells))


def comparison_table(c: Comparison, plain: bool) -> None:
    out = console(plain)
    say = _say(out)
    if c.headline:
        say(f"MEASURED THE PIPELINE — {c.headline}" if c.measured == "pipeline" else f"note: {c.headline}")
    say(f"{c.title}: {len(c.tasks)} task(s), {c.attempts} attempt(s), {c.measurements} stored measurement(s)")
    if c.ranked:
        _ranking(out, c)
    if c.unranked:
        say("not ranked (tasks missing):")
        for row in c.unranked:
            missing = ", ".join(row.missing[:8]) + (f" … (+{len(row.missing) - 8})" if len(row.missing) > 8 else "")
            failed = f"; {row.attempted_failures} attempt(s) ended in an execution failure (not measurements)" if row.attempted_failures else ""
            say(f"  {row.label}: {row.tasks_measured}/{row.tasks_total} tasks measured; missing {missing}{failed}")
            say(f"    fill: {row.fill}")
    if c.controls:
        say("controls (they check the tasks; never ranked):")
        for line in control_lines(c):
            say(f"  {line}")
    if c.pairs:
        _pairs(say, c)
    if c.metrics:
        _metrics(out, c)
    if c.conclusions:
        say("what this shows:")
        for item in c.conclusions:
            say(f"  {item['sentence']}")
    if c.rounds and c.sequential:
        say(f"run in {len(c.rounds)} round(s) (--until-decided); the always-valid test, looked at after every round, says:")
        for line in rounds_lines(c):
            say(f"  {line}")
    for line in plan_lines(c):
        say(line)
    if c.matrix:
        _matrix(out, c)
    if c.flaky:
        labels = {r.arm: r.label for r in c.rows}
        say("flaky (attempts of one setup disagree):")
        for f in c.flaky:
            say(f"  {f.task}  {labels.get(f.arm, f.arm)}: {', '.join(o or 'ungraded' for o in f.outcomes)}")
    for note in notes(c):
        say(f"note: {note}")


def _ranking(out: Any, c: Comparison) -> None:
    """The ranking table, then what a cell and a solved task cost."""
    names = columns(c.k, has_partial(c))
    table = _table(names)
    for row in c.ranked:
        shown = display(row, c.k)
        _add_row(table, [shown[col] for col in names])
    out.print(table)
    costs = _table(COST_COLUMNS, title="cost: per cell, per solved task (95% CI, clustered by task), tokens × the price table (cache reads and writes at their own rates)")
    for row in c.ranked:
        shown = display(row, c.k)
        _add_row(costs, [shown[col] for col in COST_COLUMNS])
    out.print(costs)


def _pairs(say: Callable[..., None], c: Comparison) -> None:
    """Every pair's paired difference, under a head that names the test in force and its correction."""
    labels = {r.arm: r.label for r in c.rows}
    sequential = any(p.test == "e-value" for p in c.pairs)
    test = "the always-valid test on the tasks where they differ (the evaluation ran in rounds, looked at after each)" if sequential else "exact sign test on the tasks where they differ, McNemar with one attempt"
    adjusted = ("; p Bonferroni-adjusted over every pair, as the rounds stop" if sequential else "; p Holm-adjusted over every pair") if c.correction else ""
    say(f"paired per-task differences (A − B pass rate with its 95% interval; {test}{adjusted}):")
    for p in c.pairs:
        say(f"  {labels[p.a]}  vs  {labels[p.b]}: {pair_line(p)}")


def _metrics(out: Any, c: Comparison) -> None:
    """The bench's declared metrics per setup (mean per measured cell; n/a when none measured it)."""
    names = sorted({name for values in c.metrics.values() for name in values})
    table = _table(["setup", *names])
    for row in c.rows:
        values = c.metrics.get(row.arm)
        if values is not None:
            _add_row(table, [row.label, *(metric_text(values.get(name)) for name in names)])
    _say(out)("metrics (the bench's metrics: and derivedMetrics:, mean per cell):")
    out.print(table)


def _matrix(out: Any, c: Comparison) -> None:
    """task × setup: each attempt's outcome in order (`matrix_text`), execution failures in brackets."""
    shown = [r for r in c.rows if r.cells or r.attempted_failures]
    if not shown:
        return
    table = _table(["task", *(setup_label(r) for r in shown)], title="per task × setup (attempts in order; [ ] not measured)")
    for task in c.tasks:
        _add_row(table, [task, *(matrix_text(c.matrix.get(task, {}).get(r.arm, [])) for r in shown)])
    out.print(table)


def side_by_side_table(doc: dict[str, Any], plain: bool) -> None:
    """One column per setup, one block of rows per attempt: outcome, verdicts, diff, output."""
    out = console(plain)
    _say(out)(f"task {doc['task']}: each setup's sessions side by side")
    table = Table(show_header=True, show_lines=True)
    table.add_column("")
    for setup in doc["setups"]:
        table.add_column(Text(setup["setup"]), overflow="fold")
    depth = max((len(s["sessions"]) for s in doc["setups"]), default=0)
    for i in range(depth):
        picked = [s["sessions"][i] if i < len(s["sessions"]) else None for s in doc["setups"]]
        for name, cell in (("session", _head), ("verdicts", _verdicts), ("diff", _diff), ("final output", _output)):
            _add_row(table, [name, *("" if p is None else cell(p) for p in picked)])
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
