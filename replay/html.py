"""`benchtape report --html`: one self-contained static HTML page for a run or a session; and
the session's parts as fragments (`session_section`, `verdicts`, `changes`, `timeline`,
`environment`), which `benchtape view` serves too: one renderer for both.

Pure rendering: data in (the run row, and per session its row, projection and latest
verdicts), a string out. No JavaScript, no external assets: inline CSS and `<details>`
for the collapsible parts. Every value that came from an agent, a transcript or a
check goes through `html.escape` (`esc`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from benchtape.core.model import Session
from benchtape.replay.changes import (
    Changes,
    NoDiff,
    display_lines,
    line_classes,
    workspace_changes,
)
from benchtape.replay.document import check_name
from benchtape.replay.query import latest_verdicts
from benchtape.replay.timeline import Node, Step, judge_note, session_status, spent, tree
from benchtape.spec.agent_kind import LABELS, agent_kind
from benchtape.store.database import SessionRow, dumps
from benchtape.store.views import BrowsingStore

PEEK = 160  # characters of a long text shown before it is expanded
UNKNOWN = "unknown"


@dataclass
class Entry:
    """One session of the page: what `benchtape show` reads, and its workspace changes."""

    row: SessionRow
    session: Session
    verdicts: list[dict[str, Any]]  # its latest grading's, in check order
    changes: Changes | None = None  # the agent's changes against the staged tree
    no_diff: str | None = None  # why there are none to show
    declared: dict[str, Any] | None = None  # the bench's declared metrics a grading kept ({values, errors, grading_id})

    @classmethod
    def of(cls, store: BrowsingStore, row: SessionRow, session: Session, verdicts: list[dict[str, Any]] | None = None) -> Entry:
        """What a page shows of a stored session: its latest verdicts and its changes (or why none)."""
        shown = latest_verdicts(store, row.id) if verdicts is None else verdicts
        declared = store.metric_values([row.id]).get(row.id)  # metrics:, derivedMetrics: as the newest grading measured them
        try:
            return cls(row, session, shown, changes=workspace_changes(store, session), declared=declared)
        except NoDiff as exc:
            return cls(row, session, shown, no_diff=str(exc), declared=declared)


@dataclass
class _Tally:
    """One scenario's line of the summary."""

    sessions: int = 0
    passed: int = 0
    costs: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)

    def add(self, status: str, session: Session) -> None:
        self.sessions += 1
        self.passed += status == "pass"
        cost = spent(session)
        if cost is not None:
            self.costs.append(cost)
        if session.metrics.latency_ms is not None:
            self.durations.append(session.metrics.latency_ms)


def render(run: dict[str, Any] | None, entries: Iterable[Entry], *, title: str | None = None) -> str:
    """The whole page: the run's facts, a per-scenario summary, an index linking each session,
    then the sessions. Sessions are rendered one at a time: only their HTML is kept."""
    sections: list[str] = []
    index: list[str] = []
    counts: dict[str, int] = {}
    tallies: dict[str, dict[str, _Tally]] = {}  # setup → scenario → its line
    for entry in entries:
        status = session_status(entry.session, entry.verdicts)
        counts[status] = counts.get(status, 0) + 1
        tallies.setdefault(setup_of(entry), {}).setdefault(entry.row.scenario, _Tally()).add(status, entry.session)
        index.append(_index_row(entry, status))
        sections.append(session_section(entry, status))
    run = dict(run or {})
    if not run.get("harness") and tallies:  # an evaluation's run: its setups, never "harness unknown"
        run["setups"] = ", ".join(tallies)
    heading = title or f"benchtape run {run.get('id') or UNKNOWN}"
    return "".join(
        [
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
            f"<title>{_e(heading)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
            _header(run, heading, counts),
            _summary(tallies),
            _index(index),
            *sections,
            "</body>\n</html>\n",
        ]
    )


def setup_of(entry: Entry) -> str:
    """The setup a session ran as, in words: an evaluation cell's arm label (tool, version,
    model, effort, options as the evaluation names them, with the versions it recorded), else its
    harness and model. Sessions of one setup are summed together, never with another's."""
    cell = entry.session.started.get("cell") or {}
    harness, model = entry.row.harness or entry.session.harness, entry.row.model or entry.session.model
    base = " · ".join(str(x) for x in (harness or "mock", model) if x)
    kind = agent_kind(harness or "mock", model, noop=cell.get("control") == "noop")
    base += f" · {LABELS[kind]}" if kind else ""
    label = cell.get("label")
    if not label:
        return base
    versions = cell.get("versions") or {}
    shown = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    return f"{label} ({base}{'; ' + shown if shown else ''})"


def _summary(by_setup: dict[str, dict[str, _Tally]]) -> str:
    """Per setup, then per scenario: the pass rate over its sessions (repeats), what they cost,
    how long they took. One setup: one table, as before; several: a heading and table each."""
    if len(by_setup) == 1:
        return _summary_table(next(iter(by_setup.values())), "<h2>Summary</h2>\n")
    parts = []
    for setup, tallies in by_setup.items():
        sessions = sum(t.sessions for t in tallies.values())
        passed = sum(t.passed for t in tallies.values())
        parts.append(_summary_table(tallies, f"<h3 class=\"setup\">{_e(setup)}: {passed}/{sessions} passed</h3>\n"))
    return "<section class=\"summary\" id=\"summary\">\n<h2>Summary by setup</h2>\n" + "".join(parts) + "</section>\n"


def _summary_table(tallies: dict[str, _Tally], heading: str) -> str:
    rows = []
    for name, t in tallies.items():
        rate = f"{t.passed}/{t.sessions} ({100 * t.passed / t.sessions:.0f}%)"
        cost = UNKNOWN if not t.costs else f"${sum(t.costs):.4f}" + ("" if len(t.costs) == t.sessions else f" (reported by {len(t.costs)} of {t.sessions})")
        mean = UNKNOWN if not t.durations else f"{sum(t.durations) / len(t.durations) / 1000:.2f} s"
        flaky = ' <span class="badge flaky">flaky</span>' if 0 < t.passed < t.sessions else ""
        rows.append(f"<tr><td>{_e(name)}{flaky}</td><td class=\"num\">{_e(t.sessions)}</td><td class=\"num\">{_e(rate)}</td><td class=\"num\">{_e(cost)}</td><td class=\"num\">{_e(mean)}</td></tr>")
    head = "<tr><th>scenario</th><th>sessions</th><th>passed</th><th>cost (total)</th><th>duration (mean)</th></tr>"
    table = f"<table class=\"summary\">{head}{''.join(rows)}</table>\n"
    if heading.startswith("<h2>"):
        return f"<section class=\"summary\" id=\"summary\">\n{heading}{table}</section>\n"
    return heading + table


def _index_row(entry: Entry, status: str) -> str:
    row, m = entry.row, entry.session.metrics
    cost = _known(m.cost_usd, "${:.4f}")
    took = _known(None if m.latency_ms is None else m.latency_ms / 1000, "{:.2f} s")
    return (
        f"<tr><td><a href=\"#s-{_e(row.id)}\">{_e(row.scenario)} #{_e(row.attempt)}</a></td><td>{_e(setup_of(entry))}</td><td>{badge(status)}</td>"
        f"<td class=\"num\">{_e(cost)}</td><td class=\"num\">{_e(took)}</td><td><code>{_e(row.id)}</code></td></tr>"
    )


def _index(rows: list[str]) -> str:
    head = "<tr><th>session</th><th>setup</th><th>outcome</th><th>cost</th><th>duration</th><th>id</th></tr>"
    return f"<nav class=\"index\">\n<h2>Sessions</h2>\n<table class=\"index\">{head}{''.join(rows)}</table>\n</nav>\n"


def esc(value: Any) -> str:
    """Any value as HTML text: agent output is hostile input, so everything shown passes here."""
    return escape("" if value is None else str(value), quote=True)


_e = esc


def _known(value: Any, fmt: str = "{}") -> str:
    return UNKNOWN if value is None else fmt.format(value)


def _when(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return UNKNOWN
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def badge(status: str, colour: str | None = None) -> str:
    """An outcome (pass, fail, error, not graded, incomplete) as a coloured pill; `colour` names
    the pill's class when the text is not one of those (a cell's `no_changes` is a fail)."""
    return f'<span class="badge {_e((colour or status).replace(" ", "-").lower())}">{_e(status)}</span>'


def _header(run: dict[str, Any], heading: str, counts: dict[str, int]) -> str:
    facts = [
        ("bench", run.get("bench_path")),
        ("run", run.get("id")),
        ("kind", run.get("kind")),
        *((("setups", run["setups"]),) if run.get("setups") else (("harness", run.get("harness")), ("model", run.get("model")))),
        ("when", _when(run.get("started_at"))),
        ("benchtape", run.get("benchtape_version")),
    ]
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_known(v))}</td></tr>" for k, v in facts)
    total = sum(counts.values())
    order = ("pass", "fail", "error", "not graded")
    summary = " ".join(f"{badge(s)} {counts.get(s, 0)}" for s in order if counts.get(s) or s != "not graded")
    return f"<header>\n<h1>{_e(heading)}</h1>\n<table class=\"facts\">{rows}</table>\n<p class=\"summary\">{total} session(s): {summary}</p>\n</header>\n"


def session_section(entry: Entry, status: str, anchored: bool = False, top: bool = True, window: Window | None = None) -> str:
    """One session: its facts and metrics, verdicts by check, changes, environment, timeline and
    final output. The static page shows several (each with a link back to its summary); the
    viewer one, `anchored`: its timeline open, each row an id (`a-SEQ`) and each call marked
    for keyboard navigation. `top`: the link back to the page's summary (the static page's);
    `window`: a long timeline a page at a time."""
    row, s = entry.row, entry.session
    m = s.metrics
    metrics = [
        ("cost", _known(spent(s), "${:.4f}")),  # as sessions and compare say it: a scripted model spent nothing (known)
        ("tokens", _known(m.tokens)),
        ("wall time", _known(None if m.wall_ms is None else m.wall_ms / 1000, "{:.2f} s")),
        ("steps", _known(m.step_count if s.actions else None)),
        ("session status", _known(s.status)),
    ]
    declared = (entry.declared or {}).get("values") or {}
    metrics += [(name, "n/a" if value is None else f"{value:g}") for name, value in declared.items()]  # metrics:, derivedMetrics:
    metric_html = "".join(f"<span class=\"metric\"><b>{_e(k)}</b> {_e(v)}</span>" for k, v in metrics)
    back = ' <a class="top" href="#summary">↑</a>' if top and not anchored else ""
    parts = [
        f"<section class=\"session\" id=\"s-{_e(row.id)}\">\n",
        f"<h2>{_e(row.scenario)} <small>attempt {_e(row.attempt)}</small> {badge(status)}{back}</h2>\n",
        f"<p class=\"meta\">session <code>{_e(row.id)}</code> · harness {_e(_known(row.harness or s.harness))} · model {_e(_known(row.model or s.model))} · started {_e(_when(row.started_at))}</p>\n",
        f"<p class=\"metrics\">{metric_html}</p>\n",
        verdicts(entry.verdicts),
        changes(entry.changes, entry.no_diff),
        environment(s),
        timeline(s, anchored, window),
        "<h3>Final output</h3>\n",
        f"<pre class=\"output\">{_e(s.final_output)}</pre>\n" if s.final_output else "<p class=\"none\">no final output</p>\n",
        "</section>\n",
    ]
    return "".join(parts)


def changes(c: Changes | None, no_diff: str | None = None) -> str:
    """What the agent changed, as a patch, each line classed (file header, hunk, added, removed)."""
    if c is None:
        return f"<h3>Changes</h3>\n<p class=\"none\">{_e(no_diff or 'not available')}</p>\n"
    if c.empty:
        return f"<h3>Changes</h3>\n<p class=\"none\">{_e(c.summary())}</p>\n"
    lines = [f"<span class=\"{cls}\">{_e(line)}</span>" if cls else _e(line) for cls, line in line_classes(display_lines(c.patch))]
    return f"<details class=\"changes\" open><summary>Changes ({_e(c.summary())})</summary>\n<pre class=\"diff\">{chr(10).join(lines)}</pre>\n</details>\n"


def verdicts(rows_in: list[dict[str, Any]]) -> str:
    """The latest grading's verdicts by check: status, score, reason, evidence (composite children
    indented, a judge's reasoning under its verdict)."""
    if not rows_in:
        return "<h3>Verdicts</h3>\n<p class=\"none\">not graded</p>\n"
    grading = rows_in[0].get("grading_id")
    rows: list[str] = []
    for v in rows_in:
        path = v["check_path"] + (" (readout)" if v.get("readout") else "")
        rows.append(_verdict_row(path, check_name(v.get("metric"), v["type"]), v.get("type"), v.get("status"), v.get("score"), v.get("reason"), 0, v.get("evidence")))
        _judge_row(rows, v.get("evidence"), 0)
        _children(rows, (v.get("evidence") or {}).get("children"), 1)
    head = "<tr><th>path</th><th>check</th><th>type</th><th>status</th><th>score</th><th>reason</th></tr>"
    return f"<h3>Verdicts <small>grading <code>{_e(grading)}</code></small></h3>\n<table class=\"verdicts\">{head}{''.join(rows)}</table>\n"


_SHOWN_APART = frozenset({"children"})  # evidence keys a verdict's rows show as rows of their own


def _evidence(evidence: Any) -> str:
    """A verdict's raw values (what it measured), collapsed: the reason says it in words."""
    if not isinstance(evidence, dict):
        return ""
    rest = {k: v for k, v in evidence.items() if k not in _SHOWN_APART and not k.startswith("judge_")}
    if not rest:
        return ""
    return f"<details class=\"long evidence\"><summary><small>evidence</small></summary><pre>{_e(dumps(rest))}</pre></details>"


def environment(session: Session) -> str:
    """What the agent was given: what benchtape staged (expected) beside what the tool said it
    loaded (reported), key by key; a key the two disagree on is marked."""
    env = session.environment or {}
    expected, reported = env.get("expected"), env.get("reported")
    if not expected and not reported:
        return "<h3>Environment</h3>\n<p class=\"none\">not recorded</p>\n"
    expected, reported = expected or {}, reported or {}
    rows = []
    for key in sorted(set(expected) | set(reported)):
        a, b = expected.get(key), reported.get(key)
        differs = key in expected and key in reported and a != b
        cls = ' class="differs"' if differs else ""
        rows.append(f"<tr{cls}><th>{_e(key)}</th><td>{_env_value(a, key in expected)}</td><td>{_env_value(b, key in reported)}</td></tr>")
    head = "<tr><th></th><th>expected (staged)</th><th>reported (by the tool)</th></tr>"
    return f"<details class=\"environment\"><summary>Environment (expected vs reported)</summary>\n<table class=\"environment\">{head}{''.join(rows)}</table>\n</details>\n"


def _env_value(value: Any, present: bool) -> str:
    if not present:
        return "<span class=\"none\">—</span>"
    return long_text(value if isinstance(value, str) else dumps(value))


def _children(rows: list[str], children: Any, depth: int) -> None:
    if not isinstance(children, list):
        return
    for i, c in enumerate(children):
        if not isinstance(c, dict):
            continue
        rows.append(_verdict_row(f"checks[{i}]", check_name(c.get("metric"), str(c.get("type"))), c.get("type"), c.get("status"), c.get("score"), c.get("reason"), depth, c.get("evidence")))
        _judge_row(rows, c.get("evidence"), depth)
        _children(rows, (c.get("evidence") or {}).get("children") if isinstance(c.get("evidence"), dict) else c.get("children"), depth + 1)


def _judge_row(rows: list[str], evidence: Any, depth: int) -> None:
    """The judge's reasoning, model and cost under the verdict it produced."""
    note = judge_note(evidence)
    if note is None:
        return
    head, _, reasoning = note.partition("\n")
    pad = f"padding-left:{0.4 + 1.5 * (depth + 1):.1f}em"
    rows.append(f'<tr class="judge"><td colspan="6" style="{pad}"><span class="judge-facts">{_e(head)}</span>' + (f'<div class="judge-reasoning">{_e(reasoning)}</div>' if reasoning else "") + "</td></tr>")


def _verdict_row(path: str, name: str, type_: Any, status: Any, score: Any, reason: Any, depth: int, evidence: Any = None) -> str:
    evidence_html = _evidence(evidence)
    score_text = f"{score:.3g}" if isinstance(score, (int, float)) else _known(score)
    status_text = str(status or UNKNOWN)
    pad = f' style="padding-left:{0.4 + 1.5 * depth:.1f}em"' if depth else ""
    cls = ' class="child"' if depth else ""
    return (
        f"<tr{cls}><td{pad}><code>{_e(path)}</code></td><td class=\"name\">{_e(name)}</td><td>{_e(type_)}</td>"
        f"<td><span class=\"st {_e(status_text.lower())}\">{_e(status_text)}</span></td>"
        f"<td class=\"num\">{_e(score_text)}</td><td class=\"reason\">{long_text(reason)}{evidence_html}</td></tr>"
    )


def long_text(text: Any) -> str:
    """A text whole; a long or many-line one collapsed behind its first characters."""
    value = "" if text is None else str(text)
    if len(value) <= PEEK and "\n" not in value.rstrip("\n"):
        return _e(value)
    peek = " ".join(value[:PEEK].split())
    return f"<details class=\"long\"><summary>{_e(peek)}… <small>({len(value)} chars)</small></summary><pre>{_e(value)}</pre></details>"


@dataclass(frozen=True)
class Window:
    """A page of a long timeline's top-level rows (a subagent's rows go with its spawn's), and
    how to link to another page: the viewer shows a session of any length a page at a time."""

    first: int
    most: int
    href: Callable[[int], str]  # the URL of the page starting at that row


def timeline(session: Session, anchored: bool = False, window: Window | None = None) -> str:
    """Every action, as `timeline.tree` groups them: a tool call with its result, a subagent's
    rows nested (collapsed) under its spawn. Collapsed on the static page, open in the viewer."""
    nodes = tree(session)
    pager = ""
    if window is not None and len(nodes) > window.most:
        first = max(0, min(window.first, len(nodes) - 1))
        last = min(len(nodes), first + window.most)
        links = [f'<a href="{_e(window.href(max(0, first - window.most)))}">← earlier rows</a>' if first else "", f'<a rel="next" href="{_e(window.href(last))}">later rows →</a>' if last < len(nodes) else ""]
        pager = f'<p class="pager">rows {first + 1}–{last} of {len(nodes)} · {" ".join(x for x in links if x)}</p>'
        nodes = nodes[first:last]
    rows = _node_rows(nodes, anchored)
    head = "<tr><th>seq</th><th>thread</th><th>kind</th><th>tool</th><th>outcome</th><th>text</th></tr>"
    opened = " open" if anchored else ""
    return f"<details class=\"timeline\"{opened}><summary>Timeline ({len(session.actions)} actions)</summary>\n{pager}<table class=\"timeline\">{head}{''.join(rows)}</table>\n{pager}</details>\n"


def _node_rows(nodes: list[Node], anchored: bool) -> list[str]:
    rows = []
    for node in nodes:
        st = node.step
        text = long_text(st.text)
        if st.detail:
            text += f"<details class=\"long\"><summary><small>whole input</small></summary><pre>{_e(st.detail)}</pre></details>"
        if node.result is not None:
            text += _result(node.result, anchored)
        if node.children is not None:
            inner = "".join(_node_rows(node.children, anchored))
            sub_id = f' id="sub-{_e(node.sub_thread)}"' if anchored else ""
            summary = f"subagent {_e(node.agent or '')} · {sum(c.actions for c in node.children)} action(s)"
            text += f"<details class=\"subagent\"{sub_id}><summary>{summary}</summary><table class=\"timeline\">{''.join(inner)}</table></details>"
        outcome = f'<span class="st {_e(st.outcome)}">{_e(st.outcome)}</span>' if st.outcome else ""
        rows.append(
            f"<tr{_row_attrs(node, anchored)}><td class=\"num\">{_seq_cell(st, anchored)}</td><td>{_e(st.thread)}</td><td>{_e(st.kind)}</td>"
            f"<td>{_e(st.tool or '')}</td><td>{outcome}</td><td class=\"text\">{text}</td></tr>"
        )
    return rows


def _row_attrs(node: Node, anchored: bool) -> str:
    kind = _e(node.step.kind.replace(".", "-"))  # a store is anyone's file: even a kind is escaped
    if not anchored:
        return f' class="k-{kind}"'
    ident = f' id="a-{_e(node.step.seq)}"' if node.step.seq is not None else ""
    call = " data-call" if node.step.kind in ("tool.call", "subagent.spawned") else ""
    return f' class="k-{kind}"{ident}{call}'


def _seq_cell(st: Step, anchored: bool) -> str:
    if not anchored or st.seq is None:
        return _e(st.seq)
    return f'<a href="#a-{_e(st.seq)}">{_e(st.seq)}</a>'


def _result(st: Step, anchored: bool) -> str:
    """A tool call's result, under its input: short ones inline, long ones collapsed."""
    seq = f" #{st.seq}" if st.seq is not None else ""
    label = f"<small class=\"result-of\">result{_e(seq)}</small>"
    ident = f' id="a-{_e(st.seq)}"' if anchored and st.seq is not None else ""
    return f"<div class=\"result\"{ident}>{label} {long_text(st.text)}</div>"


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1d1d1f;background:#fff}
h1{font-size:1.5em;margin:0 0 .5em}h2{font-size:1.2em;margin:0 0 .3em}h3{font-size:1em;margin:1em 0 .3em}
small{color:#666;font-weight:normal}code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}
header{border-bottom:2px solid #ddd;padding-bottom:1em;margin-bottom:1.5em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.25em .5em;border-bottom:1px solid #eee}
table.facts{width:auto}table.facts th{color:#666;font-weight:normal;padding-right:1.5em}
td.num{text-align:right;white-space:nowrap}td.reason,td.text{white-space:pre-wrap;word-break:break-word}
tr.child td{color:#444;font-size:.95em;background:#fafafa}
section.session{border:1px solid #ddd;border-radius:6px;padding:1em;margin:0 0 1.5em}
.meta{color:#555;margin:.2em 0}.metrics .metric{display:inline-block;margin-right:1.5em}.none{color:#888;font-style:italic}
.badge{display:inline-block;padding:.05em .6em;border-radius:1em;font-size:.85em;font-weight:600;color:#fff;background:#888}
.badge.pass{background:#1a7f37}.badge.fail{background:#cf222e}.badge.error{background:#bf8700}.badge.not-graded{background:#888}
.st.pass,.st.ok{color:#1a7f37;font-weight:600}.st.fail,.st.error{color:#cf222e;font-weight:600}.st.error{color:#bf8700}.st.na{color:#888}
pre.output{background:#f6f8fa;border:1px solid #eee;padding:.8em;white-space:pre-wrap;word-break:break-word}
details summary{cursor:pointer;font-weight:600;margin:1em 0 .3em}
details.long summary{font-weight:normal;margin:0}details.long pre{white-space:pre-wrap;word-break:break-word;margin:.3em 0}
table.summary,table.index{margin-bottom:1em}nav.index{margin-bottom:1.5em}a.top{font-size:.8em;text-decoration:none;color:#888}
.badge.flaky{background:#bf8700}
pre.diff{background:#f6f8fa;border:1px solid #eee;padding:.8em;overflow-x:auto}pre.diff .add{color:#1a7f37}pre.diff .del{color:#cf222e}pre.diff .hunk{color:#0550ae}pre.diff .hd{font-weight:600}
tr.judge td{border-bottom:1px solid #eee;color:#444;font-size:.92em;background:#f6f8fa}.judge-facts{color:#666}.judge-reasoning{white-space:pre-wrap;word-break:break-word;margin-top:.2em}
pre.diff .meta{color:#57606a}div.result{margin-top:.2em;padding-left:.6em;border-left:3px solid #d0d7de}small.result-of{color:#888}
details.subagent{margin:.3em 0;border-left:3px solid #8250df;padding-left:.5em}details.subagent>summary{margin:.2em 0;color:#8250df}
tr.k-error td,tr.k-adapter-warning td{background:#fff5f5}tr.k-thinking td.text{color:#555;font-style:italic}tr.k-hook td{background:#fbf8ff}
tr.k-message-user td.text{font-weight:600}table.environment th{width:12em}table.environment tr.differs td{background:#fff8c5}
"""
