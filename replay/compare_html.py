"""`benchtape compare --html`: the comparison as one self-contained static page (inline CSS,
no scripts, no network), the same figures as the terminal table."""

from __future__ import annotations

from typing import Any, Callable

from benchtape.replay.compare import Comparison, Measurement, columns, display, notes
from benchtape.replay.html import CSS, esc
from benchtape.replay.outcomes import PASSED, is_reusable


def render(c: Comparison) -> str:
    parts = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        f"<title>{_e(c.title)}</title>\n<style>{CSS}{EXTRA_CSS}</style>\n</head>\n<body>\n",
        f"<header>\n<h1>{_e(c.title)}</h1>\n",
        f'<p class="summary">{len(c.tasks)} task(s) · {c.attempts} attempt(s) each · {c.measurements} stored measurement(s) · ranked by pass rate, then cost, tokens, lines changed, time</p>\n</header>\n',
        body(c),
        "</body>\n</html>\n",
    ]
    return "".join(parts)


def body(c: Comparison) -> str:
    """The comparison below its title: the ranking, the setups not ranked, the paired
    differences and the notes (the static page and `benchtape view` show the same)."""
    k = c.k
    ranked = _table(columns(k), [display(r, k) for r in c.ranked]) if c.ranked else '<p class="none">no setup measured every task</p>'
    parts = ["<h2>Ranking</h2>\n", ranked]
    if c.unranked:
        rows = [
            {"setup": r.label, "measured": f"{r.tasks_measured}/{r.tasks_total} tasks", "missing": ", ".join(r.missing[:20]) + (" …" if len(r.missing) > 20 else ""), "execution failures": str(r.attempted_failures), "fill with": r.fill or ""}
            for r in c.unranked
        ]
        parts += ["<h2>Not ranked (tasks missing)</h2>\n", _table(["setup", "measured", "missing", "execution failures", "fill with"], rows, code="fill with")]
    if c.pairs:
        labels = {r.arm: r.label for r in c.rows}
        rows = [
            {"A": labels[p.a], "B": labels[p.b], "tasks": str(p.tasks), "Δ pass rate (A−B)": f"{p.mean_difference:+.0%}", "A better / B better / same": f"{p.a_wins} / {p.b_wins} / {p.ties}", "p (exact sign test)": f"{p.p_value:.3g}"}
            for p in c.pairs
        ]
        parts += ["<h2>Paired differences</h2>\n", _table(list(rows[0]), rows)]
    parts += ["<ul class=\"notes\">", *(f"<li>{_e(n)}</li>" for n in notes(c)), "</ul>\n"]
    return "".join(parts)


def matrix(c: Comparison, session_href: Callable[[Measurement], str], task_href: Callable[[str], str] | None = None) -> str:
    """Tasks × setups: each cell its attempts' outcomes, each linking to its session; a
    measurement the ranking does not count (an execution failure, one measured again since) is
    struck through."""
    head = "".join(f"<th>{_e(r.label)}</th>" for r in c.rows)
    body_rows = []
    for task in c.tasks:
        cells = []
        for r in c.rows:
            ms = (c.cells.get(r.arm) or {}).get(task) or []
            counted = [m for m, used in ms if used]
            passed = sum(1 for m in counted if m.outcome == PASSED)
            score = f'<span class="cell-score">{passed}/{len(counted)}</span> ' if counted else '<span class="none">—</span> '
            pills = " ".join(_pill(m, used, session_href(m)) for m, used in ms)
            cells.append(f"<td class=\"cell\">{score}{pills}</td>")
        name = f'<a href="{_e(task_href(task))}">{_e(task)}</a>' if task_href else _e(task)
        body_rows.append(f"<tr><th class=\"task\">{name}</th>{''.join(cells)}</tr>")
    return f'<table class="matrix"><tr><th>task</th>{head}</tr>{"".join(body_rows)}</table>\n'


def _pill(m: Measurement, counted: bool, href: str) -> str:
    kind = "pass" if m.outcome == PASSED else "error" if not is_reusable(m.outcome) else "fail"
    cls = f"pill {kind}" + ("" if counted else " uncounted")
    title = f"attempt {m.attempt}: {m.outcome or 'not graded'}" + (f" ({m.reason})" if m.reason and m.reason != m.outcome else "") + ("" if counted else " · not counted")
    return f'<a class="{cls}" href="{_e(href)}" title="{_e(title)}">#{m.attempt} {_e(m.outcome or "?")}</a>'


def _table(columns: list[str], rows: list[dict[str, Any]], code: str | None = None) -> str:
    head = "".join(f"<th>{_e(col)}</th>" for col in columns)
    body = []
    for row in rows:
        cells = "".join(f"<td><code>{_e(row.get(col))}</code></td>" if col == code else f"<td>{_e(row.get(col))}</td>" for col in columns)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="compare"><tr>{head}</tr>{"".join(body)}</table>\n'


_e = esc


EXTRA_CSS = (
    "table.compare td{white-space:nowrap}ul.notes{color:#555;margin-top:1.5em}"
    "table.matrix td.cell{white-space:nowrap}.cell-score{font-weight:600;margin-right:.3em}"
    ".pill{display:inline-block;padding:0 .5em;margin:.1em;border-radius:1em;font-size:.85em;color:#fff;background:#888;text-decoration:none}"
    ".pill.pass{background:#1a7f37}.pill.fail{background:#cf222e}.pill.error{background:#bf8700}.pill.uncounted{opacity:.55;text-decoration:line-through}"
)
