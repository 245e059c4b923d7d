"""`benchtape compare --html`: the comparison as one self-contained static page (inline CSS,
no scripts, no network), the same figures as the terminal table."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

from benchtape.replay.compare import COST_COLUMNS, OUTCOME_MARKS, Comparison, columns, control_lines, display, has_partial, notes, plan_lines, rounds_lines, setup_label
from benchtape.replay.html import CSS


def render(c: Comparison, session_href: Callable[[str], str | None] | None = None) -> str:
    """`session_href` links a matrix cell's attempts to their session pages (the viewer passes one; the static page has none)."""
    parts = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        f"<title>{_e(c.title)}</title>\n<style>{CSS}{EXTRA_CSS}</style>\n</head>\n<body>\n",
        f"<header>\n<h1>{_e(c.title)}</h1>\n",
        f'<p class="summary">{summary(c)}</p>\n</header>\n',
        body(c, session_href),
        "</body>\n</html>\n",
    ]
    return "".join(parts)


def summary(c: Comparison) -> str:
    return _e(f"{len(c.tasks)} task(s) · {c.attempts} attempt(s) each · {c.measurements} stored measurement(s) · ranked by pass rate, then cost, tokens, lines changed, time")


def body(c: Comparison, session_href: Callable[[str], str | None] | None = None, task_href: Callable[[str], str] | None = None) -> str:
    """Everything below the title: the ranking, the setups not ranked, the paired differences,
    what they show, the matrix, the flaky tasks and the notes (the static page and `benchtape
    view` show the same; the viewer links the matrix's attempts and tasks)."""
    k = c.k
    ranked = _table(columns(k, has_partial(c)), [display(r, k) for r in c.ranked]) if c.ranked else '<p class="none">no setup measured every task</p>'
    parts = [f'<p class="headline">{_e(c.headline)}</p>\n' if c.headline else "", "<h2>Ranking</h2>\n", ranked]
    if c.ranked:
        parts += ["<h3>Cost: per cell, per solved task (95% CI, clustered by task), tokens × the price table (cache reads and writes at their own rates)</h3>\n", _table(COST_COLUMNS, [display(r, k) for r in c.ranked])]
    if c.controls:
        parts += ["<h2>Controls (they check the tasks; never ranked)</h2>\n<ul class=\"controls\">", *(f"<li>{_e(line)}</li>" for line in control_lines(c)), "</ul>\n"]
    if c.unranked:
        rows = [
            {"setup": r.label, "measured": f"{r.tasks_measured}/{r.tasks_total} tasks", "missing": ", ".join(r.missing[:20]) + (" …" if len(r.missing) > 20 else ""), "execution failures": str(r.attempted_failures), "fill with": r.fill or ""}
            for r in c.unranked
        ]
        parts += ["<h2>Not ranked (tasks missing)</h2>\n", _table(["setup", "measured", "missing", "execution failures", "fill with"], rows, code="fill with")]
    if c.pairs:
        labels = {r.arm: r.label for r in c.rows}
        rows = [
            {
                "A": labels[p.a],
                "B": labels[p.b],
                "tasks": str(p.tasks),
                "Δ pass rate (A−B)": f"{p.mean_difference:+.0%}",
                "95% CI": f"{p.ci[0]:+.0%} to {p.ci[1]:+.0%}" if p.ci else "—",
                "A better / B better / same": f"{p.a_wins} / {p.b_wins} / {p.ties}",
                ("p (1/E: the rounds' always-valid test)" if p.test == "e-value" else "p (exact sign test)"): f"{p.p_value:.3g}",
                **({f"p ({p.adjustment}-adjusted)": f"{p.p_adjusted:.3g}"} if p.p_adjusted is not None else {}),
                "verdict": "distinguishable" if p.distinguishable else "not distinguishable",
            }
            for p in c.pairs
        ]
        parts += ["<h2>Paired differences</h2>\n", _table(list(rows[0]), rows)]
    if c.conclusions:
        parts += ["<h2>What this shows</h2>\n<ul class=\"conclusions\">", *(f"<li>{_e(item['sentence'])}</li>" for item in c.conclusions), "</ul>\n"]
    if c.rounds and c.sequential:
        items = [f'<li class="{"stopped" if line.startswith("stopped: ") else "pair"}">{_e(line)}</li>' for line in rounds_lines(c)]
        parts += [f"<h2>Rounds ({len(c.rounds)}, run --until-decided)</h2>\n<p>the always-valid test, looked at after every round:</p><ul class=\"rounds\">", *items, "</ul>\n"]
    if c.plan:
        parts += ["<h2>Plan (80% power)</h2>\n<ul class=\"plan\">", *(f"<li>{_e(line.strip())}</li>" for line in plan_lines(c)), "</ul>\n"]
    parts.append(matrix_html(c, session_href, task_href))
    if c.flaky:
        labels = {r.arm: r.label for r in c.rows}
        rows = [{"task": f.task, "setup": labels.get(f.arm, f.arm), "outcomes by attempt": ", ".join(o or "ungraded" for o in f.outcomes)} for f in c.flaky]
        parts += ["<h2>Flaky (attempts of one setup disagree)</h2>\n", _table(["task", "setup", "outcomes by attempt"], rows)]
    parts += ["<ul class=\"notes\">", *(f"<li>{_e(n)}</li>" for n in notes(c)), "</ul>\n"]
    return "".join(parts)


def _table(columns: list[str], rows: list[dict[str, Any]], code: str | None = None) -> str:
    head = "".join(f"<th>{_e(col).replace('/', '/<wbr>')}</th>" for col in columns)  # "tokens/cell" may break after its slash: a 1400 px window holds every column
    body = []
    for row in rows:
        cells = "".join(f"<td><code>{_e(row.get(col))}</code></td>" if col == code else f"<td>{_e(row.get(col))}</td>" for col in columns)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="compare"><tr>{head}</tr>{"".join(body)}</table>\n'


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


EXTRA_CSS = "p.headline{background:#fff8c5;border:1px solid #d4a72c;padding:.5em .8em;font-weight:600}table.compare td{white-space:nowrap}ul.notes{color:#555;margin-top:1.5em}table.matrix .pass{color:#1a7f37}table.matrix .fail{color:#cf222e}table.matrix .infra{color:#9a6700}"


def matrix_html(c: Comparison, session_href: Callable[[str], str | None] | None = None, task_href: Callable[[str], str] | None = None) -> str:
    """The task × setup matrix: each attempt's outcome, linked to its session where a link is
    given (and each task to `task_href`'s page, the viewer's side by side)."""
    shown = [r for r in c.rows if r.cells or r.attempted_failures]
    if not c.matrix or not shown:
        return ""
    head = "".join(f"<th>{_e(setup_label(r))}</th>" for r in shown)
    rows = []
    for task in c.tasks:
        cells = []
        for r in shown:
            attempts = c.matrix.get(task, {}).get(r.arm, [])
            marks = []
            for a in attempts:
                text = OUTCOME_MARKS.get(a.outcome or "", a.outcome or "ungraded") if a.measured else f"[{a.outcome or 'ungraded'}]"
                cls = "pass" if a.outcome == "passed" else ("infra" if not a.measured else "fail")
                title = f"attempt {a.attempt}: {a.outcome or 'ungraded'} · session {a.session_id}" + (f" · {a.reason}" if a.reason else "")
                href = session_href(a.session_id) if session_href else None
                mark = f'<span class="{cls}" title="{_e(title)}">{_e(text)}</span>'
                marks.append(f'<a href="{_e(href)}">{mark}</a>' if href else mark)
            cells.append(f"<td>{' '.join(marks) or '—'}</td>")
        name = f'<a href="{_e(task_href(task))}">{_e(task)}</a>' if task_href else _e(task)
        rows.append(f'<tr><td class="task">{name}</td>{"".join(cells)}</tr>')
    return f'<h2>Per task × setup</h2>\n<table class="compare matrix"><tr><th>task</th>{head}</tr>{"".join(rows)}</table>\n'

