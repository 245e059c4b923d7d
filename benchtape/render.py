"""Terminal output for people (rich), and the plain append-only form for logs and CI.

rich is imported where something is drawn (benchtape/render_console.py): a command that
prints a plain line, or only asks `plain_wanted`, never loads it."""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from benchtape.core.termtext import printable
from benchtape.replay.document import check_label, row_outcome

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table
    from rich.text import Text

PLAIN_WIDTH = 200  # the plain console's width: what a table is laid out in
STATUS_STYLE = {"PASS": "green", "FAIL": "red", "ERROR": "yellow", "NA": "dim", "pass": "green", "fail": "red", "error": "yellow"}


def plain_wanted(flag: bool) -> bool:
    """--plain, or implied when stderr is not a TTY, NO_COLOR is set, or TERM=dumb."""
    return flag or not sys.stderr.isatty() or bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def console(plain: bool = False, stderr: bool = False) -> Console:
    from benchtape.render_console import SafeConsole

    # markup off: nothing printed here is rich markup, and a note's `[environment]` (a task.toml
    # table named in the text) was read as a style tag and vanished from the preview
    return SafeConsole(stderr=stderr, no_color=plain, highlight=False, markup=False, soft_wrap=plain, force_terminal=None if not plain else False, width=None if not plain else PLAIN_WIDTH)


class PlainLines:
    """Plain lines straight to stdout: exactly what the plain `console` prints for a `Text`
    (colour off, no wrapping, control codes stripped, tabs expanded), without rich's per-line
    rendering, which was a third of a `grade` pass that prints a line per check."""

    def say(self, text: str) -> None:
        if not text.isprintable():  # rich's stripping removes only unprintable characters
            from rich.control import strip_control_codes

            text = strip_control_codes(text)
        text = printable(text, one_line=False)  # rich leaves ESC in: a name or an agent's text could drive the terminal
        if "\t" in text:
            text = "\n".join(line.expandtabs(8) for line in text.split("\n"))
        sys.stdout.write(text + "\n")


def plain_table(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]]) -> list[str] | None:
    """The lines the plain console prints for `Table(box=None, pad_edge=False)` of these
    columns (name, "left" or "right") and cells: two spaces between columns, each cell
    justified to its column's width, trailing spaces kept, as rich lays it out; made without
    importing rich (~15 ms of `regrade`'s start-up). None when rich must draw it: a cell that
    is not printable ASCII (rich measures wide characters) or a table wider than the plain
    console's 200 columns."""
    table = [[name for name, _ in columns], *([str(cell) for cell in row] for row in rows)]
    if not all(cell.isascii() and cell.isprintable() for line in table for cell in line):
        return None
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    if sum(widths) + 2 * (len(widths) - 1) > PLAIN_WIDTH:
        return None
    return ["  ".join(cell.rjust(w) if how == "right" else cell.ljust(w) for cell, w, (_, how) in zip(line, widths, columns)) for line in table]


_LINES: dict[bool, Console | PlainLines] = {}


def line_printer(plain: bool) -> Console | PlainLines:
    """Where a command that prints line after line writes: plain lines, or one console, for
    the whole process (a Console is costly to make, and a pass may print for thousands of sessions)."""
    printer = _LINES.get(plain)
    if printer is None:
        printer = _LINES[plain] = PlainLines() if plain else console(False)
    return printer


class Progress:
    """Live progress: scenarios done / running / left, and each verdict as it lands."""

    def __init__(self, plain: bool):
        self.plain = plain
        self.err = console(plain, stderr=True)
        self.lock = threading.Lock()
        self.total = 0
        self.running: dict[str, str] = {}
        self.done = 0
        self.lines: list[Text] = []
        self.live: Live | None = None

    def __enter__(self) -> Progress:
        if not self.plain:
            from rich.live import Live

            self.live = Live(self._render(), console=self.err, refresh_per_second=8, transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        with self.lock:
            if kind == "run.started":
                self.total += data["total"]
                self._say(f"run {data['run_id']}: {data['total']} session(s) of {data['bench']}")
            elif kind == "session.started":
                self.running[data["session_id"]] = f"{data['scenario']} #{data['attempt']}"
            elif kind == "session.finished":
                self.running.pop(data["session_id"], None)
            elif kind == "staging.finished":
                self._say(f"staged {', '.join(data['scenarios'])}: {data['kind']} {data['program']} ({data['seconds']:g}s)")
            elif kind == "sandbox.note":
                self._say(f"sandbox: {data['message']}", "error" if data.get("kind") == "error" else None)
            elif kind == "sandbox.kept":
                self._say(f"kept sandbox of {data['scenario']} #{data['attempt']}: {data['where']}" + (f"  (remove: {data['remove']})" if data.get("remove") else ""))
            elif kind == "verdicts":
                self.done += 1
                marks = " ".join(f"{v.check.metric}={v.result.status}" for v in data["verdicts"])
                self._say(f"[{self.done}/{self.total}] {data['scenario']} #{data['attempt']}: {data['status'].upper()}  {marks}", data["status"])
            if self.live is not None:
                self.live.update(self._render())

    def _say(self, line: str, status: str | None = None) -> None:
        if self.plain:
            print(line, file=sys.stderr, flush=True)
        else:
            from rich.text import Text

            self.err.print(Text(line, style=STATUS_STYLE.get(status or "", "")))

    def _render(self) -> Table:
        from rich.table import Table
        from rich.text import Text

        t = Table.grid(padding=(0, 2))
        left = max(0, self.total - self.done - len(self.running))
        t.add_row(Text(f"done {self.done}  running {len(self.running)}  left {left}", style="bold"))
        for name in list(self.running.values())[:8]:
            t.add_row(Text(f"  ▸ {name}", style="cyan"))
        return t


def results_table(results: Iterable[dict[str, Any]], plain: bool = False, full: bool = False) -> None:
    """One block per scenario: its status, then one row per check, a composite's children indented.
    A reason shows its first line (shortened with a marker) unless `full`."""
    from rich.table import Table
    from rich.text import Text

    out = console(plain)
    table = Table(title=None, show_lines=False, box=None, pad_edge=False)
    for column in ("scenario", "status", "check", "verdict"):
        table.add_column(column)
    table.add_column("score", justify="right")
    table.add_column("reason", overflow="fold", max_width=None if full else 70)
    for r in results:
        name = r["scenario_id"] + (f" #{r['attempt']}" if r.get("attempt", 1) > 1 else "")
        rows = [(check_label(c.get("metric"), c["type"]) + (" (readout)" if c.get("readout") else ""), c.get("status", ""), c["result"]["score"], c["result"].get("reason") or "") for c in r["checks"]]
        expanded: list[tuple[str, str, float | None, str]] = []
        for c, row in zip(r["checks"], rows):
            expanded.append(row)
            expanded.extend(_children(c["result"].get("evidence") or {}, depth=1))
        if not full:
            expanded = [(label, st, score, _first_line(reason)) for label, st, score, reason in expanded]
        for i, (label, st, score, reason) in enumerate(expanded or [("(no checks)", "", None, "")]):
            table.add_row(
                Text(name if i == 0 else ""),
                Text(row_outcome(r).upper() if i == 0 else "", style=STATUS_STYLE.get(row_outcome(r), "")),
                Text(label),
                Text(st, style=STATUS_STYLE.get(st, "")),
                f"{score:.2f}" if score is not None and st else "",
                Text(reason),
            )
    out.print(table)


def _children(evidence: dict[str, Any], depth: int) -> list[tuple[str, str, float | None, str]]:
    """A composite's children from its evidence, so the table shows which child failed."""
    rows: list[tuple[str, str, float | None, str]] = []
    for child in evidence.get("children") or []:
        if not isinstance(child, dict):
            continue
        rows.append(("  " * depth + "└ " + check_label(child.get("metric"), str(child.get("type"))), str(child.get("status") or ""), child.get("score"), str(child.get("reason") or "")))
        rows.extend(_children(child.get("evidence") or {}, depth + 1))
    return rows


def _first_line(text: str, width: int = 110) -> str:
    """The table shows a reason's first line, shortened with a marker; `--full`, the report
    and `show` have the whole of it."""
    from benchtape.replay.timeline import shorten

    lines = text.strip().splitlines()
    if not lines:
        return ""
    line = shorten(lines[0], width)
    rest = len(text.strip()) - len(lines[0])
    return line if len(lines) == 1 or line != lines[0] else f"{line} … [+{rest} chars, --full]"


def repeat_summary(scenarios: dict[str, list[int]], plain: bool = False, always: bool = False) -> None:
    """With --repeat (`scenarios`: name → [passed, sessions]): each scenario's pass rate, and FLAKY where its attempts disagree."""
    if not always and all(n < 2 for _, n in scenarios.values()):
        return
    from rich.text import Text

    out = console(plain)
    out.print("pass rate over attempts:")
    for name, (passed, n) in scenarios.items():
        flaky = 0 < passed < n
        label = Text(f"  {name}: {passed}/{n} passed")
        if flaky:
            label.append("  FLAKY", style="yellow")
        out.print(label)


def control_block(report: dict[str, Any]) -> None:
    """An Eval's control audit (benchtape.spec.audit), as `run` and `preflight` print it."""
    from benchtape.app.runs import render_lines

    print("\n".join(render_lines(report)))


def confounded(report: dict[str, Any]) -> int:
    """A run the control audit refused: the audit, then why on stderr; exit 1."""
    from benchtape.app.runs import confounded_lines

    control_block(report)
    print("\n".join(confounded_lines(report)), file=sys.stderr)
    return 1
