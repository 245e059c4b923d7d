"""Gradings: the list (`/gradings`, `benchtape gradings`), and any two of them diffed verdict by
verdict (`/gradings/diff?a=A&b=B`, `benchtape diff A B`): per scenario its pass rate in each
and what moved it, then every verdict that changed, flips first and marked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchtape.app.gradings import Change, GradingDiff, diff_gradings, gradings_table
from benchtape.app.sessions import BrowsingStore, dumps
from benchtape.replay.html import badge, esc
from benchtape.view.request_limits import BadParameter
from benchtape.view.shell import href, page, session_href, when
from benchtape.view.viewer import Viewer


def list_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    """`benchtape gradings --json`."""
    return gradings_table(store)


def list_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    rows = gradings_table(store)
    if not rows:
        return page("gradings", '<h1>Gradings</h1><p class="none">nothing graded yet</p>', active="gradings", json_href="/gradings?format=json")
    # the two newest preselected: "what did my new checks change" is one click
    a_default, b_default = (rows[-2]["id"] if len(rows) > 1 else rows[-1]["id"]), rows[-1]["id"]
    body = []
    for g in reversed(rows):  # newest first
        gid = esc(g["id"])
        a = " checked" if g["id"] == a_default else ""
        b = " checked" if g["id"] == b_default else ""
        body.append(
            f'<tr data-nav><td><input type="radio" name="a" value="{gid}"{a} aria-label="A"></td><td><input type="radio" name="b" value="{gid}"{b} aria-label="B"></td>'
            f"<td><code>{gid}</code></td><td>{esc(g['source'])}</td><td>{esc(when(g['created_at']))}</td><td class=\"num\">{g['sessions']}</td>"
            f"<td>{esc(g['bench'] or '')}</td><td><code>{esc((g['checkset_sha256'] or '')[:12])}</code></td><td>{esc(g['note'] or '')}</td></tr>"
        )
    head = "<tr><th>A</th><th>B</th><th>grading</th><th>source</th><th>created</th><th>sessions</th><th>bench</th><th>check set</th><th>note</th></tr>"
    form = f'<form class="gradings" action="/gradings/diff" method="get"><p><button type="submit">diff A → B</button> <small>verdict by verdict, over the sessions both graded</small></p><table class="gradings">{head}{"".join(body)}</table></form>'
    return page("gradings", "<h1>Gradings <small>newest first</small></h1>" + form, active="gradings", json_href="/gradings?format=json")


def _pair(q: Mapping[str, str]) -> tuple[str, str]:
    a, b = q.get("a"), q.get("b")
    if not a or not b:
        raise BadParameter("name two gradings to diff", fix="/gradings/diff?a=GRADING_A&b=GRADING_B (pick them on /gradings)")
    return a, b


def diff_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    """`benchtape diff A B --json`."""
    return diff_gradings(store, *_pair(q)).to_dict()


def diff_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    a, b = _pair(q)
    d = diff_gradings(store, a, b)
    parts = [
        f'<h1>Grading diff <small><code>{esc(d.a.get("id"))}</code> → <code>{esc(d.b.get("id"))}</code></small></h1>',
        (f'<p class="summary">{d.sessions} session(s) graded by both ({d.only_a} only in A, {d.only_b} only in B) · '
        f'<b class="flip">{len(d.flips)} flip(s)</b> · {len(d.scores)} score change(s) · {len(d.changed)} check(s) changed · {len(d.added)} added · {len(d.removed)} removed · {d.same} verdict(s) unchanged</p>'),
        _pass_rates(d),
        _changes_table(d),
        _changed_checks(d),
    ]
    return page("grading diff", "\n".join(parts), active="gradings", json_href=href("/gradings/diff", {"a": a, "b": b, "format": "json"}))


def _pass_rates(d: GradingDiff) -> str:
    rows = []
    for scenario, (pa, pb, n) in sorted(d.pass_rates.items()):
        moved = pa != pb
        because = "".join(f"<li>{esc(k)}: {up} to pass, {down} from pass</li>" for k, up, down in d.reasons(scenario)) if moved else ""
        rows.append(_rate_row(scenario, pa, pb, n, moved, because))
    return "<h2>Pass rate by scenario</h2>" + (f'<table class="rates"><tr><th>scenario</th><th>A</th><th>B</th><th>because</th></tr>{"".join(rows)}</table>' if rows else '<p class="none">no session graded by both</p>')


def _rate_row(scenario: str, pa: int, pb: int, n: int, moved: bool, because: str) -> str:
    cls = ' class="moved"' if moved else ""
    return f'<tr{cls}><td>{esc(scenario)}</td><td class="num">{pa}/{n}</td><td class="num">{pb}/{n}</td><td><ul class="because">{because}</ul></td></tr>'


def _side(v: Any) -> str:
    if v is None:
        return '<span class="none">—</span>'
    return f'<span class="st {esc(str(v.status).lower())}">{esc(v.status)}</span> <small>{v.score:.3g}</small>'


def _changes_table(d: GradingDiff) -> str:
    changes: list[Change] = [*d.flips, *d.scores, *d.added, *d.removed]
    if not changes:
        return "<h2>Verdicts that changed</h2><p class=\"none\">none: every verdict graded by both is the same</p>"
    rows = []
    for c in changes:
        shown = c.b or c.a
        reason = shown.reason if shown is not None else None
        moved = f" <small>(moved from {esc(c.moved_from)})</small>" if c.moved_from else ""
        edited = ' <small class="tag">check changed</small>' if c.spec_changed else ""
        rows.append(
            f'<tr class="change {esc(c.kind)}" data-nav><td>{esc(c.kind)}</td><td>{esc(c.scenario)}</td><td><a href="{esc(session_href(c.session_id))}"><code>{esc(c.session_id[:12])}</code></a></td>'
            f"<td><code>{esc(c.check_path)}</code>{moved}</td><td>{esc(c.name)}{edited}</td><td>{_side(c.a)}</td><td>{_side(c.b)}</td><td>{esc(c.label)}</td><td class=\"reason\">{esc(reason or '')}</td></tr>"
        )
    outcomes = [s for s in d.per_session if s.outcome_changed]
    moved_sessions = "".join(f'<li><a href="{esc(session_href(s.session_id))}"><code>{esc(s.session_id[:12])}</code></a> {esc(s.scenario)} #{s.attempt}: {badge(s.outcome_a)} → {badge(s.outcome_b)}</li>' for s in outcomes)
    head = "<tr><th>change</th><th>scenario</th><th>session</th><th>check</th><th>name</th><th>A</th><th>B</th><th></th><th>reason (B)</th></tr>"
    return (
        f'<h2>Verdicts that changed <small>flips first</small></h2><table class="changes">{head}{"".join(rows)}</table>'
        + (f'<h2>Sessions whose outcome changed</h2><ul class="outcomes">{moved_sessions}</ul>' if outcomes else "")
    )


def _changed_checks(d: GradingDiff) -> str:
    if not d.changed:
        return ""
    items = []
    for group in d.changed.values():
        items.append(
            f"<li><b>{esc(group.scenario)}</b> <code>{esc(group.check_path)}</code> ({len(group.sessions)} session(s))"
            f'<div class="specs"><pre class="spec a">{esc(dumps(group.spec_a))}</pre><pre class="spec b">{esc(dumps(group.spec_b))}</pre></div></li>'
        )
    return f'<h2>Checks whose spec changed <small>A left, B right</small></h2><ul class="changed">{"".join(items)}</ul>'
