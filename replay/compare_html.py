"""`benchtape compare --html`: the comparison as one self-contained static page (inline CSS,
no scripts, no network), the same figures as the terminal table."""

from __future__ import annotations

from html import escape
from typing import Any

from benchtape.replay.compare import Comparison, columns, display, notes
from benchtape.replay.html import CSS


def render(c: Comparison) -> str:
    k = c.k
    ranked = _table(columns(k), [display(r, k) for r in c.ranked]) if c.ranked else '<p class="none">no setup measured every task</p>'
    parts = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        f"<title>{_e(c.title)}</title>\n<style>{CSS}{EXTRA_CSS}</style>\n</head>\n<body>\n",
        f"<header>\n<h1>{_e(c.title)}</h1>\n",
        f'<p class="summary">{len(c.tasks)} task(s) · {c.attempts} attempt(s) each · {c.measurements} stored measurement(s) · ranked by pass rate, then cost, tokens, lines changed, time</p>\n</header>\n',
        "<h2>Ranking</h2>\n",
        ranked,
    ]
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
    parts += ["<ul class=\"notes\">", *(f"<li>{_e(n)}</li>" for n in notes(c)), "</ul>\n", "</body>\n</html>\n"]
    return "".join(parts)


def _table(columns: list[str], rows: list[dict[str, Any]], code: str | None = None) -> str:
    head = "".join(f"<th>{_e(col)}</th>" for col in columns)
    body = []
    for row in rows:
        cells = "".join(f"<td><code>{_e(row.get(col))}</code></td>" if col == code else f"<td>{_e(row.get(col))}</td>" for col in columns)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="compare"><tr>{head}</tr>{"".join(body)}</table>\n'


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


EXTRA_CSS = "table.compare td{white-space:nowrap}ul.notes{color:#555;margin-top:1.5em}"
