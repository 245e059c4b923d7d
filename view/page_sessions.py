"""The session list (`/`, a run's `/run/RUN`) and the run list (`/runs`), live.

The list's lines are `benchtape sessions`' own (`replay.timeline.session_lines` when the CLI's
filters are all that is asked, `lines_of` over the viewer's wider filters), so the JSON twin
of `/?scenario=S&limit=N` is `benchtape sessions --scenario S --limit N --json`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from typing import Any

from benchtape.app.sessions import AGENT_TAGS as SHORT
from benchtape.app.sessions import BrowsingStore, Filters, RunLine, SessionLine, choices, lines_of, pick_sessions, recent_runs, resolve, session_lines, short_handles
from benchtape.replay.html import badge, esc
from benchtape.view.request_limits import MAX_LIMIT, BadParameter
from benchtape.view.shell import (
    href,
    live_url,
    money,
    page,
    region,
    seconds,
    session_href,
    when,
)
from benchtape.view.viewer import Viewer

LIMIT = 50  # `benchtape sessions`' default
OUTCOMES = ("pass", "fail", "error", "not graded", "incomplete")
SCAN_CAP = 5000  # sessions an outcome filter looks through for one page
SCAN_BUDGET_S = 1.0


# ---------------------------------------------------------------- reading the parameters


def _filters(store: BrowsingStore, q: Mapping[str, str], run_id: str | None = None) -> tuple[Filters, str | None, int | None]:
    """(the filters, the outcome asked for, the limit) from a page's query parameters."""
    run = run_id or (resolve(store, "runs", q["run"]) if q.get("run") else None)
    outcome = q.get("outcome") or None
    if outcome and outcome not in OUTCOMES:
        raise BadParameter(f"no outcome {outcome!r}", fix=f"one of: {', '.join(OUTCOMES)}")
    f = Filters(
        run_id=run,
        scenario=q.get("scenario") or None,
        harness=q.get("harness") or None,
        model=q.get("model") or None,
        bench=q.get("bench") or None,
        since=_day(q.get("since"), "since"),
        until=_day(q.get("until"), "until", end=True),
        controls=q.get("controls") in ("1", "true", "on"),
        before=q.get("before") or None,
    )
    return f, outcome, _limit(q.get("limit"))


def _limit(text: str | None) -> int | None:
    if not text:
        return LIMIT
    try:
        n = int(text)
    except ValueError:
        raise BadParameter(f"limit {text[:40]!r} is not a number", fix="limit=50, or limit=0 for all") from None
    if n < 0:
        raise BadParameter("limit is negative", fix="limit=50, or limit=0 for all")
    if n > MAX_LIMIT:
        raise BadParameter(f"limit is at most {MAX_LIMIT}", fix="limit=50, or limit=0 for all (the pages go on with 'older' links)")
    return n or None


def _day(text: str | None, name: str, end: bool = False) -> float | None:
    """A YYYY-MM-DD (local time) as epoch seconds: its start, or for `until` the next day's."""
    if not text:
        return None
    try:
        day = dt.datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise BadParameter(f"{name} {text[:40]!r} is not a date", fix=f"{name}=YYYY-MM-DD") from None
    try:
        return (day + dt.timedelta(days=1 if end else 0)).timestamp()
    except (OverflowError, ValueError, OSError):  # year 1's start or 9999's end: before or past what a clock can say
        raise BadParameter(f"{name} {text!r} is out of range", fix=f"{name}=YYYY-MM-DD, a year from 1970 to 9998") from None


# ---------------------------------------------------------------- the lines


def listed(store: BrowsingStore, f: Filters, outcome: str | None, limit: int | None) -> tuple[list[SessionLine], str | None]:
    """The page's lines and where the next page starts (None: this is the last)."""
    if f.sql_only and outcome is None:  # exactly `benchtape sessions [--run] [--scenario] [--limit]`
        lines = session_lines(store, run=f.run_id, scenario=f.scenario, limit=limit, controls=f.controls)
        return lines, (lines[-1].id if limit and len(lines) == limit else None)
    if outcome is None:
        lines = lines_of(store, pick_sessions(store, f, limit))
        return lines, (lines[-1].id if limit and len(lines) == limit else None)
    return _by_outcome(store, f, outcome, limit or LIMIT)


def _by_outcome(store: BrowsingStore, f: Filters, outcome: str, limit: int) -> tuple[list[SessionLine], str | None]:
    """An outcome is the scenario rule over a session's latest verdicts, not a column: sessions
    are judged a batch at a time, newest first, until the page is full or SCAN_CAP (or the time
    budget) is spent; the next page starts where the scan stopped."""
    started = time.perf_counter()
    out: list[SessionLine] = []
    cursor, scanned = f.before, 0
    while True:
        batch = pick_sessions(store, Filters(**{**f.__dict__, "before": cursor}), 100)
        if not batch:
            return out, None
        for line in lines_of(store, batch):
            scanned += 1
            cursor = line.id
            if line.outcome == outcome:
                out.append(line)
                if len(out) == limit:
                    return out, cursor
        if scanned >= SCAN_CAP or time.perf_counter() - started > SCAN_BUDGET_S:
            return out, cursor


def session_rows(lines: list[SessionLine], *, show_run: bool = True) -> str:
    if not lines:
        return '<tr><td colspan="10" class="none">no session matches</td></tr>'
    rows = []
    for s in lines:
        name = f"{esc(s.scenario)} #{esc(s.attempt)}" + (' <span class="tag">control</span>' if s.control else "")
        who = esc((s.harness or "-") + (f"/{s.model}" if s.model else "")) + (f' <span class="tag">{esc(SHORT[s.agent_kind])}</span>' if s.agent_kind and not s.control else "")
        score = "" if s.score is None else f"{s.score:.2f}"
        run = f'<td><a href="{esc(href("/run/" + s.run_handle))}"><code>{esc(s.run_handle)}</code></a></td>' if show_run else ""
        rows.append(
            f'<tr data-nav id="row-{esc(s.id)}" class="o-{esc(s.outcome.replace(" ", "-"))}"><td><a href="{esc(session_href(s.handle))}"><code>{esc(s.handle)}</code></a></td>'
            f"<td>{esc(when(s.started_at))}</td><td>{name}</td><td>{who}</td><td>{badge(s.outcome)}</td>"
            f'<td class="num">{score}</td><td class="num">{esc(money(s.cost_usd))}</td><td class="num">{esc(seconds(s.duration_ms))}</td>'
            f"<td>{esc(s.summary)}</td>{run}</tr>"
        )
    return "".join(rows)


def session_table(lines: list[SessionLine], next_page: str | None, q: Mapping[str, str], base: str, *, show_run: bool = True) -> str:
    head = "".join(f"<th>{c}</th>" for c in ("session", "started", "scenario", "harness/model", "outcome", "score", "cost", "duration", "verdicts", *(("run",) if show_run else ())))
    more = f'<p class="pager"><a rel="next" href="{esc(href(base, {**q, "before": next_page}))}">older sessions →</a></p>' if next_page else ""
    newest = f'<p class="pager"><a href="{esc(href(base, {k: v for k, v in q.items() if k != "before"}))}">← newest</a></p>' if q.get("before") else ""
    return f'<table class="sessions"><thead><tr>{head}</tr></thead><tbody>{session_rows(lines, show_run=show_run)}</tbody></table>{newest}{more}'


# ---------------------------------------------------------------- runs


def run_lines(v: Viewer, store: BrowsingStore, *, limit: int = 8, before: str | None = None, controls: bool = False) -> list[RunLine]:
    runs = recent_runs(store, v.finished, limit=limit, before=before, controls=controls)
    handles = short_handles(store, "runs", [r.id for r in runs])
    for r in runs:
        r.handle = handles[r.id]
    return runs


def progress(r: RunLine) -> str:
    pct = 100 * r.finished / r.sessions if r.sessions else 0
    state = f"{r.running} running" if r.running else "finished" if r.sessions else "no sessions yet"
    return f'<span class="progress" title="{r.finished} of {r.sessions} sessions finished"><span class="fill" style="width:{pct:.0f}%"></span></span> <span class="count">{r.finished}/{r.sessions}</span> <small class="state {"on" if r.running else ""}">{esc(state)}</small>'


def runs_table(runs: list[RunLine]) -> str:
    if not runs:
        return '<p class="none">no runs recorded yet: <code>benchtape demo</code> or <code>benchtape run BENCH</code></p>'
    rows = []
    for r in runs:
        evaluation = f' · <a href="{esc("/evaluation/" + r.evaluation)}">evaluation {esc(r.evaluation)}</a>' if r.evaluation else ""
        who = esc((r.harness or "") + (f"/{r.model}" if r.model else ""))
        rows.append(
            f'<tr id="run-{esc(r.id)}"><td><a href="{esc("/run/" + r.handle)}"><code>{esc(r.handle)}</code></a></td><td>{esc(r.kind)}{evaluation}</td>'
            f"<td>{esc(r.bench or '')}</td><td>{who}</td><td>{esc(when(r.started_at))}</td><td>{progress(r)}</td></tr>"
        )
    head = "".join(f"<th>{c}</th>" for c in ("run", "kind", "bench", "harness/model", "started", "progress"))
    return f'<table class="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


# ---------------------------------------------------------------- the pages


def index_regions(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> dict[str, str]:
    """What `/` shows and keeps live: the newest runs with their progress, and the list."""
    f, outcome, limit = _filters(store, q)
    lines, next_page = listed(store, f, outcome, limit)
    regions = {"sessions": session_table(lines, next_page, q, "/")}
    if not f.before:
        regions = {"runs": runs_table(run_lines(v, store, controls=f.controls)), **regions}
    return regions


def index_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    f, outcome, limit = _filters(store, q)
    return [s.to_dict() for s in listed(store, f, outcome, limit)[0]]


def index_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    regions = index_regions(v, store, q)
    live = None if q.get("before") else live_url("index", q, regions)
    body = [_filter_form(store, q)]
    if "runs" in regions:
        body.append('<h2>Runs <small><a href="/runs">all runs</a></small></h2>' + region("runs", regions["runs"]))
    body.append("<h2>Sessions <small>newest first</small></h2>" + region("sessions", regions["sessions"]))
    return page("sessions", "\n".join(body), active="sessions", json_href=href("/", {**q, "format": "json"}), live=live)


def _filter_form(store: BrowsingStore, q: Mapping[str, str]) -> str:
    c = choices(store)

    def select(name: str, values: list[str], label: str) -> str:
        current = q.get(name) or ""
        opts = "".join(f'<option value="{esc(x)}"{" selected" if x == current else ""}>{esc(x)}</option>' for x in values)
        return f'<label>{label} <select name="{name}"><option value="">any</option>{opts}</select></label>'

    return (
        '<form class="filters" action="/" method="get">'
        + select("bench", c.benches, "bench")
        + f'<label>scenario / task <input name="scenario" value="{esc(q.get("scenario") or "")}" size="14"></label>'
        + select("harness", c.harnesses, "harness")
        + select("model", c.models, "model")
        + select("outcome", list(OUTCOMES), "outcome")
        + f'<label>from <input type="date" name="since" value="{esc(q.get("since") or "")}"></label>'
        + f'<label>to <input type="date" name="until" value="{esc(q.get("until") or "")}"></label>'
        + f'<label><input type="checkbox" name="controls" value="1"{" checked" if q.get("controls") else ""}> controls</label>'
        + '<button type="submit">filter</button> <a href="/">clear</a></form>'
    )


def runs_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    return [r.to_dict() for r in run_lines(v, store, limit=_limit(q.get("limit")) or 10**9, before=q.get("before") or None, controls=bool(q.get("controls")))]



def runs_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    limit = _limit(q.get("limit")) or 10**9
    runs = run_lines(v, store, limit=limit, before=q.get("before") or None, controls=bool(q.get("controls")))
    regions = {"runs": runs_table(runs)}
    more = f'<p class="pager"><a rel="next" href="{esc(href("/runs", {**q, "before": runs[-1].id}))}">older runs →</a></p>' if len(runs) == limit else ""
    live = None if q.get("before") else live_url("runs", q, regions)
    return page("runs", "<h1>Runs <small>newest first</small></h1>" + region("runs", regions["runs"]) + more, active="runs", json_href=href("/runs", {**q, "format": "json"}), live=live)


def run_regions(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> dict[str, str]:
    run_id = resolve(store, "runs", q["handle"])
    f, outcome, limit = _filters(store, q, run_id)
    lines, next_page = listed(store, f, outcome, limit)
    runs = recent_runs(store, v.finished, run_id=run_id)
    head = progress(runs[0]) if runs else ""
    return {"runhead": head, "sessions": session_table(lines, next_page, {k: x for k, x in q.items() if k != "handle"}, "/run/" + q["handle"], show_run=False)}


def run_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    """`benchtape sessions --run RUN --json`."""
    run_id = resolve(store, "runs", q["handle"])
    f, outcome, limit = _filters(store, q, run_id)
    return [s.to_dict() for s in listed(store, f, outcome, limit)[0]]


def run_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    run_id = resolve(store, "runs", q["handle"])
    run = store.run(run_id) or {}
    regions = run_regions(v, store, q)
    own = {k: x for k, x in q.items() if k != "handle"}
    facts = [("run", run_id), ("kind", run.get("kind")), ("bench", run.get("bench_path")), ("harness", run.get("harness")), ("model", run.get("model")), ("started", when(run.get("started_at"))), ("benchtape", run.get("benchtape_version"))]
    evaluation = (run.get("params") or {}).get("evaluation") if isinstance(run.get("params"), dict) else None
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(val if val is not None else '')}</td></tr>" for k, val in facts)
    body = [
        f"<h1>Run <code>{esc(q['handle'])}</code></h1>",
        f'<table class="facts">{rows}</table>',
        f'<p>{region("runhead", regions["runhead"], "span")}' + (f' · <a href="{esc("/evaluation/" + evaluation)}">evaluation {esc(evaluation)}</a>' if evaluation else "") + "</p>",
        "<h2>Sessions</h2>" + region("sessions", regions["sessions"]),
    ]
    live = None if q.get("before") else live_url("run", {**q, "handle": run_id}, regions)  # the whole id, as a session's page
    return page(f"run {q['handle']}", "\n".join(body), active="runs", json_href=href("/run/" + q["handle"], {**own, "format": "json"}), live=live)


def runs_regions(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> dict[str, str]:
    limit = _limit(q.get("limit")) or 10**9
    return {"runs": runs_table(run_lines(v, store, limit=limit, before=q.get("before") or None, controls=bool(q.get("controls"))))}
