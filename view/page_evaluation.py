"""Evaluations: the list (`/evaluations`), one evaluation's comparison (`/evaluation/NAME`: the
tasks × setups matrix, each cell linking to its sessions, then the ranking with its intervals)
and two setups' sessions of one task side by side (`/evaluation/NAME/side?task=T&a=A&b=B`),
SIDE_PAGE attempts of each at a time (`&from=N`: a task of 10,000 attempts drew every session
of them, 10 s and 27 MB of HTML, 79 MB as JSON).

`compare` is called in one place, `_comparison`, exactly as `benchtape compare NAME` calls it
(the project folder the viewer was started in, its pricing), so the page's JSON twin is
`compare NAME --json` and whatever compare learns to say, this page can show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchtape.app.comparison import Comparison, compare
from benchtape.app.sessions import PASSED, BrowsingStore, evaluations, session_status, show, show_document
from benchtape.core.errors import BadInput
from benchtape.replay.compare_html import body, summary
from benchtape.replay.html import Entry, badge, esc, session_section
from benchtape.view.request_limits import MAX_POSITION, BadParameter
from benchtape.view.shell import href, live_url, page, region, session_href, when
from benchtape.view.viewer import Viewer

SIDE_PAGE = 10  # attempts of each setup on one page


def _comparison(v: Viewer, store: BrowsingStore, name: str) -> Comparison:
    """`benchtape compare NAME`'s comparison, from where the viewer was started."""
    return compare(store, [name], v.cwd)


def list_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    return evaluations(store)


def list_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    rows = [
        f'<tr data-nav><td><a href="{esc("/evaluation/" + e["evaluation"])}">{esc(e["evaluation"])}</a></td><td class="num">{e["runs"]}</td><td class="num">{e["sessions"]}</td><td>{esc(when(e["last_run_at"]))}</td></tr>'
        for e in evaluations(store)
    ]
    table = f'<table class="evaluations"><tr><th>evaluation</th><th>runs</th><th>cells measured</th><th>last run</th></tr>{"".join(rows)}</table>' if rows else '<p class="none">no evaluation has been run into this store: <code>benchtape run NAME</code></p>'
    return page("evaluations", "<h1>Evaluations</h1>" + table, active="evaluations", json_href="/evaluations?format=json")


def evaluation_json(v: Viewer, store: BrowsingStore, name: str) -> Any:
    """`benchtape compare NAME --json`."""
    return _comparison(v, store, name).to_dict()


def evaluation_regions(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> dict[str, str]:
    """The comparison under its title, as `compare --html` draws it with the matrix linked:
    kept live while the evaluation's cells are measured."""
    name = q["name"]
    c = _comparison(v, store, name)

    def task_href(task: str) -> str:
        return href(f"/evaluation/{name}/side", {"task": task})

    parts = [
        f'<p class="summary">{summary(c)}</p>',
        '<p class="meta">the matrix below the ranking: each attempt links to its session, each task to its setups side by side</p>',
        body(c, session_href, task_href),
    ]
    return {"evaluation": "\n".join(parts), "title": esc(c.title)}


def evaluation_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    regions = evaluation_regions(v, store, q)
    page_body = f'<h1>{region("title", regions["title"], "span")}</h1>' + region("evaluation", regions["evaluation"])
    title = "evaluation " + q["name"]
    return page(title, page_body, active="evaluations", json_href=href("/evaluation/" + q["name"], {"format": "json"}), live=live_url("evaluation", q, regions))


def _side(c: Comparison, q: Mapping[str, str]) -> tuple[str, str, str]:
    """(task, arm a, arm b): by default the first two setups in the comparison's order."""
    task = q.get("task") or ""
    if task not in c.tasks:
        raise BadInput(f"the evaluation has no task {task!r}", fix=f"its tasks: {', '.join(c.tasks[:20])}")
    arms = [r.arm for r in c.rows]
    a = q.get("a") or (arms[0] if arms else "")
    b = q.get("b") or next((x for x in arms if x != a), a)
    for arm in (a, b):
        if arm not in arms:
            raise BadInput(f"the evaluation has no setup {arm!r}", fix=f"its setups: {', '.join(arms)}")
    return task, a, b


def _attempts(c: Comparison, task: str, arm: str, first: int) -> tuple[list[Any], int]:
    """The page of an arm's measurements of a task from attempt index `first` (1-based), and how many there are."""
    every = c.matrix.get(task, {}).get(arm, [])
    return every[first - 1 : first - 1 + SIDE_PAGE], len(every)


def side_json(v: Viewer, store: BrowsingStore, name: str, q: Mapping[str, str]) -> Any:
    first = _first(q)
    c = _comparison(v, store, name)
    task, a, b = _side(c, q)
    labels = {r.arm: r.label for r in c.rows}

    def one(arm: str) -> dict[str, Any]:
        docs = []
        shown, total = _attempts(c, task, arm, first)
        for m in shown:
            docs.append({**m.to_dict(), "session": show_document(store, show(store, m.session_id))})
        return {"arm": arm, "label": labels[arm], "first": first, "total": total, "measurements": docs}

    return {"evaluation": c.evaluation, "task": task, "a": one(a), "b": one(b)}


def side_page(v: Viewer, store: BrowsingStore, name: str, q: Mapping[str, str]) -> str:
    first = _first(q)
    c = _comparison(v, store, name)
    task, a, b = _side(c, q)
    labels = {r.arm: r.label for r in c.rows}
    base = f"/evaluation/{name}/side"

    def picker(which: str, current: str) -> str:
        opts = "".join(f'<option value="{esc(r.arm)}"{" selected" if r.arm == current else ""}>{esc(r.label)}</option>' for r in c.rows)
        return f'<label>{which} <select name="{which}">{opts}</select></label>'

    form = f'<form class="filters" action="{esc(base)}" method="get"><input type="hidden" name="task" value="{esc(task)}">{picker("a", a)} {picker("b", b)} <button type="submit">compare</button></form>'
    columns, totals = [], []
    for arm in (a, b):
        sections = []
        shown_here, total = _attempts(c, task, arm, first)
        totals.append(total)
        for m in shown_here:
            shown = show(store, m.session_id)
            entry = Entry.of(store, shown.row, shown.session, shown.verdicts)
            status = session_status(shown.session, shown.verdicts) if shown.session.finished else "incomplete"
            note = "" if m.measured else ' <small>(an execution failure: not a measurement)</small>'
            pill = badge(m.outcome or "not graded", "pass" if m.outcome == PASSED else "fail" if m.measured else "error")
            sections.append(f'<p class="attempt">attempt {m.attempt}: {pill}{note} · <a href="{esc(session_href(m.session_id))}">open the session</a></p>' + session_section(entry, status, top=False))
        columns.append(f'<div class="side"><h2>{esc(labels[arm])}</h2>{"".join(sections) or "<p class=none>not measured</p>"}</div>')
    head = f'<h1>{esc(task)} <small>· <a href="{esc("/evaluation/" + name)}">{esc(c.title)}</a></small></h1>'
    most = max(totals)
    pager = ""
    if first > 1 or first - 1 + SIDE_PAGE < most:
        links = [f'<span class="meta">attempts {first}–{min(first - 1 + SIDE_PAGE, most)} of {totals[0]} and {totals[1]}</span>']
        if first > 1:
            links.append(f'<a rel="prev" href="{esc(href(base, {**q, "from": max(1, first - SIDE_PAGE)}))}">← earlier attempts</a>')
        if first - 1 + SIDE_PAGE < most:
            links.append(f'<a rel="next" href="{esc(href(base, {**q, "from": first + SIDE_PAGE}))}">later attempts →</a>')
        pager = f'<p class="pager">{" · ".join(links)}</p>'
    return page(f"{task} side by side", head + form + pager + f'<div class="sides">{"".join(columns)}</div>' + pager, active="evaluations", json_href=href(base, {**q, "format": "json"}))


def _first(q: Mapping[str, str]) -> int:
    """The first attempt shown (1-based; past the last shows none)."""
    text = q.get("from") or "1"
    try:
        first = int(text)
    except ValueError:
        raise BadParameter(f"from {text[:40]!r} is not a number", fix="from=1 (the first attempt)") from None
    if not 1 <= first <= MAX_POSITION:
        raise BadParameter(f"from is out of range (1 to {MAX_POSITION})", fix="from=1 (the first attempt)")
    return first
