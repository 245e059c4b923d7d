"""Terminal output of the read-side commands (check, grade, regrade, diff, gradings, query,
sessions, show): rich for people, plain lines when `plain_wanted`, JSON via orjson."""

from __future__ import annotations

import datetime as dt
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable

import orjson

from benchtape.app.sessions import AGENT_TAGS as SHORT
from benchtape.core.termtext import printable
from benchtape.render import STATUS_STYLE, PlainLines, console, line_printer, plain_table
from benchtape.replay.document import placed

if TYPE_CHECKING:  # rich is imported where a table or styled text is drawn: a plain line needs none
    from rich.console import Console, JustifyMethod
    from rich.text import Text

VERDICT_STYLE = {
    "REPRODUCED": "green",
    "DIVERGED": "bold red",
    "SKIPPED": "dim",
    "COULD NOT RE-GRADE": "yellow",
    "failed as required": "green",
    "WRONGLY PASSED": "bold red",
    "ERRORED": "yellow",
    "NOT APPLICABLE": "dim",
}


def emit_json(value: Any) -> None:
    """One JSON document on stdout (indented for people, keys as built)."""
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def emit_jsonl(value: Any) -> None:
    """One JSON line on stdout. Not flushed per line: a terminal's stdout is line-buffered
    already, and to a pipe a flush per line was a write(2) per session."""
    sys.stdout.write(orjson.dumps(value, default=str).decode() + "\n")


def when(epoch: float | None) -> str:
    if not epoch:
        return ""
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def _t(value: Any) -> Text:
    """A table cell that is never read as rich markup: names and texts come from agents and users."""
    from rich.text import Text

    return Text("" if value is None else str(value))


def _say(out: Console | PlainLines, text: str, style: str = "") -> None:
    if isinstance(out, PlainLines):
        out.say(text)
        return
    from rich.text import Text

    out.print(Text(text, style=style), soft_wrap=True)


def _outcome(o: Any) -> str:
    return f"{o.status} {o.score:.2f}" if o is not None else "—"


# ---------------------------------------------------------------- check (negative control)


def control_report(report: Any, verbose: bool, plain: bool) -> None:
    from benchtape.replay.control import BUCKETS, ERRORED, WRONGLY_PASSED

    out = console(plain)
    for cell in report.cells:
        tally = " · ".join(f"{cell.count(b)} {b}" for b in BUCKETS)
        mark = "holds" if cell.holds else "DOES NOT HOLD"
        name = f"{cell.scenario} #{cell.attempt}"
        _say(out, f"{name}  [{mark}]  {tally}", "" if cell.holds else "red")
        if cell.session_status not in (None, "ok"):
            _say(out, f"    the no-op session ended {cell.session_status}; see `benchtape show {cell.session_id}`", "yellow")
        for c in cell.checks:
            if verbose or c.bucket in (WRONGLY_PASSED, ERRORED):
                label = c.type + (" (readout)" if c.readout else "")
                reason = f" — {c.reason}" if c.reason else ""
                _say(out, f"    {c.bucket:<18} {c.check_path:<10} {label}: {c.status}{reason}", VERDICT_STYLE.get(c.bucket, ""))
    for run_id, grading_id in zip(report.run_ids, report.grading_ids):
        _say(out, f"run {run_id} · grading {grading_id} (source control)", "dim")
    code = report.exit_code
    if code == 3:
        _say(out, "nothing gradable: every check is not applicable under the no-op mock (0 gradable checks)", "yellow")
    elif code == 1 and not (report.total(WRONGLY_PASSED) or report.total(ERRORED)):
        _say(out, "the control does NOT hold: a no-op session did not run to its end, so its scenario could not be graded (see the session named above)", "red")
    elif code == 1:
        _say(out, "the control does NOT hold: a check that passes or errors on an agent that did nothing measures nothing", "red")
    else:
        _say(out, "the control holds: every gradable check failed on an agent that did nothing", "green")
    _say(out, report.closing_line())


# ---------------------------------------------------------------- grade (positive control)


def replay_session(one: Any, plain: bool) -> None:
    """One session of a grade pass, printed as it is re-graded: plain, its lines in one write
    (a pass prints a line per check of thousands of sessions)."""
    where = f" (grading {one.grading_id})" if one.grading_id else ""
    lines = [(f"{one.scenario} #{one.attempt}  {one.session_id}{where}", "bold")]
    if one.note:
        lines.append((f"    {one.note}", "dim"))
    for c in one.checks:
        style = VERDICT_STYLE.get(c.verdict, "")
        label = f"    {c.verdict:<18} {c.check_path:<10} {c.type}"
        if c.verdict == "REPRODUCED":
            lines.append((f"{label}: {_outcome(c.stored)}", style))
        elif c.verdict == "DIVERGED":
            lines.append((label, style))
            lines.append((f"        stored : {_outcome(c.stored)} — {c.stored.reason}", ""))
            lines.append((f"        now    : {_outcome(c.regraded)} — {c.regraded.reason}", ""))
        else:
            lines.append((f"{label}: {c.why} (stored {_outcome(c.stored)})", style))
    out = line_printer(plain)
    if isinstance(out, PlainLines):
        out.say("\n".join(text for text, _ in lines))
        return
    for text, style in lines:
        _say(out, text, style)


def reproduction(rep: Any, plain: bool) -> None:
    out = line_printer(plain)
    c = rep.counts
    if rep.grading_id:
        _say(out, f"recorded as grading {rep.grading_id} (source control), reproducing {', '.join(rep.reproduced_gradings)}", "dim")
    if rep.total == 0:
        _say(out, f"nothing to re-grade: {rep.sessions} session(s) with no stored verdicts", "yellow")
    skipped = f" · {c['SKIPPED']} skipped (what they read is not in the input)" if c["SKIPPED"] else ""
    _say(out, f"{c['REPRODUCED']}/{rep.regraded} verdicts reproduced · {c['DIVERGED']} diverged · {c['COULD NOT RE-GRADE']} could not re-grade{skipped} · {rep.sessions} session(s)")


# ---------------------------------------------------------------- regrade


REASONS_SHOWN = 5  # distinct reasons a regrade's summary lists for cells it could not measure


def regrade_summary(summary: Any, plain: bool) -> None:
    said = "each task cell's candidate through its task as it is now" if summary.tasks else f"the checks in {summary.bench}"
    header = f"regraded {summary.graded} session(s) with {said} (no agent ran)"
    names = sorted({k for t in summary.scenarios.values() for k in t.statuses}) if summary.tasks else ["pass", "fail", "error"]
    columns = [(col, "left" if col == "scenario" else "right") for col in ("scenario", "sessions", *names)]
    cells = [[name, str(t.graded), *(str(t.statuses.get(c, 0)) for c in names)] for name, t in summary.scenarios.items()]
    drawn = plain_table(columns, cells) if plain else None  # None: rich draws it
    out: Console | PlainLines
    if drawn is not None:
        out = line_printer(True)
        _say(out, header)
        for line in drawn if cells else ():  # no table at all when nothing was graded
            _say(out, line)
    else:
        out = drawn_by_rich = console(plain)
        _say(out, header)
        if cells:
            from rich.table import Table

            table = Table(box=None, pad_edge=False)
            for col, just in columns:
                table.add_column(col, justify=just)  # type: ignore[arg-type]
            for row in cells:
                table.add_row(_t(row[0]), *row[1:])
            drawn_by_rich.print(table)
    unmeasured: Counter = Counter()
    for tally in summary.scenarios.values():
        unmeasured.update(tally.unmeasured)
    if unmeasured:  # the table counts them; why they were not measured, and what to do, is here
        _say(out, f"{sum(unmeasured.values())} cell(s) not measured:", "yellow")
        for reason, n in unmeasured.most_common(REASONS_SHOWN):
            _say(out, f"    {n} × {reason}", "yellow")
        if len(unmeasured) > REASONS_SHOWN:
            rest = sum(n for _, n in unmeasured.most_common()[REASONS_SHOWN:])
            _say(out, f"    and {rest} more with {len(unmeasured) - REASONS_SHOWN} other reason(s): benchtape query 'outcome.reason' lists every cell's", "yellow")
    if summary.skipped:
        _say(out, f"skipped {sum(summary.skipped.values())} session(s) " + ("that are no task cell (regrade them with --bench):" if summary.tasks else "whose scenario the bench does not have:"), "yellow")
        for name, n in sorted(summary.skipped.items()):
            _say(out, f"    {name}: {n} session(s)", "yellow")
    if summary.previous and summary.others:  # each a part of the sessions: a diff per grading they showed before
        before = [summary.previous, *summary.others]
        _say(out, f"next: {'  ·  '.join(f'benchtape diff {g} {summary.grading_id}' for g in before)}   (these sessions showed {len(before)} gradings before, each over some of them)", "dim")
    elif summary.previous:
        _say(out, f"next: benchtape diff {summary.previous} {summary.grading_id}   (the grading these sessions showed before, against this one)", "dim")
    else:
        _say(out, f"next: benchtape gradings   (these sessions had no grading before {summary.grading_id})", "dim")
    print(summary.grading_id)


# ---------------------------------------------------------------- diff / gradings


def _v(v: Any) -> str:
    return f"{v.status} {v.score:.3f}" if v is not None else "—"


def grading_diff(d: Any, plain: bool) -> None:
    from benchtape.store.database import dumps

    out = console(plain)
    _say(out, f"A {d.a.get('id')} ({d.a.get('source')}, {when(d.a.get('created_at'))})  →  B {d.b.get('id')} ({d.b.get('source')}, {when(d.b.get('created_at'))})", "bold")
    _say(out, f"{d.sessions} session(s) graded by both" + (f" · {d.only_a} only in A" if d.only_a else "") + (f" · {d.only_b} only in B" if d.only_b else ""))
    if d.flips:
        _say(out, f"flips ({len(d.flips)}):", "bold")
        for c in d.flips:
            changed = " (check changed)" if c.spec_changed else ""
            moved = f" (moved from {c.moved_from})" if c.moved_from else ""
            _say(out, f"    {c.label:<12} {c.scenario} {c.session_id} {placed(c.check_path, c.name)}{moved}{changed}: {_v(c.a)} → {_v(c.b)}" + (f" — {c.b.reason}" if c.b.reason else ""), "red" if c.b.status != "PASS" else "green")
    if d.scores:
        _say(out, f"score changes ({len(d.scores)}):", "bold")
        for c in d.scores:
            _say(out, f"    {c.delta:+.3f}       {c.scenario} {c.session_id} {placed(c.check_path, c.name)}{' (check changed)' if c.spec_changed else ''}: {_v(c.a)} → {_v(c.b)}")
    for version in d.tasks.values():
        _say(out, f"{version.why()} ({len(version.sessions)} session(s) graded against each)", "bold")
    for group in d.changed.values():
        _say(out, f"changed check: {group.scenario} {group.check_path}", "bold")
        _say(out, f"    old spec: {dumps(group.spec_a)}")
        _say(out, f"    new spec: {dumps(group.spec_b)}")
        for c in group.sessions:
            _say(out, f"    {c.label:<12} {c.session_id}: {_v(c.a)} → {_v(c.b)}" + (f" — {c.b.reason}" if c.b.reason else ""), STATUS_STYLE.get(c.b.status, ""))
    for title, items, side in (("added", d.added, "b"), ("removed", d.removed, "a")):
        if items:
            _say(out, f"{title} ({len(items)}):", "bold")
            for c in items:
                v = getattr(c, side)
                _say(out, f"    {c.scenario} {c.session_id} {placed(c.check_path, c.name)}: {_v(v)}")
    if not (d.flips or d.scores or d.changed or d.added or d.removed):
        _say(out, "no verdict changed", "green")
    if d.per_session:
        _say(out, f"per session ({len(d.per_session)} with a flip, an added or a removed check):", "bold")
        for s in d.per_session:
            flips = sum(c.kind == "flip" for c in s.changes)
            head = f"    {s.scenario} #{s.attempt} {s.session_id}: {s.outcome_a} → {s.outcome_b}" if s.outcome_changed else f"    {s.scenario} #{s.attempt} {s.session_id}: still {s.outcome_b}"
            _say(out, f"{head} · {flips} flip(s)", "" if not s.outcome_changed else ("green" if s.outcome_b == "pass" else "red"))
            for c in s.deciding() if s.outcome_changed else [c for c in s.changes if c.kind == "flip"]:
                _say(out, f"        {c.why()}")
    if d.pass_rates:
        _say(out, "pass rate per scenario (A → B):", "bold")
        for name, (pa, pb, n) in sorted(d.pass_rates.items()):
            _say(out, f"    {name}: {pa}/{n} → {pb}/{n}", "" if pa == pb else ("green" if pb > pa else "red"))
            if pa != pb:
                for why, up, down in d.reasons(name):
                    moved = " · ".join(p for p in (f"{up} to pass" if up else "", f"{down} from pass" if down else "") if p)
                    _say(out, f"        because {why} ({moved})")
    _say(out, f"{len(d.flips)} flip(s) · {len(d.scores)} score change(s) · {len(d.changed)} changed check(s) · {len(d.added)} added · {len(d.removed)} removed · {d.same} unchanged")


def gradings_list(rows: list[dict[str, Any]], plain: bool) -> None:
    from rich.table import Table

    out = console(plain)
    table = Table(box=None, pad_edge=False)
    for col in ("grading", "source", "created", "sessions", "bench", "note"):
        table.add_column(col, overflow="fold")
    for g in rows:
        table.add_row(g["id"], _t(g["source"]), when(g["created_at"]), str(g["sessions"]), _t(g["bench"]), _t(g["note"]))
    out.print(table)


# ---------------------------------------------------------------- query


def query_columns(lines: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """`query`'s answers as rows of text: session, scenario, then the result (its keys as
    columns when every result is an object, as `{tool: tool, n: length(calls)}` gives), and
    an `error` column when the expression failed on some session."""
    results = [ln["result"] for ln in lines if "result" in ln]
    spread = bool(results) and all(isinstance(r, dict) for r in results)
    keys = list(dict.fromkeys(k for r in results for k in r)) if spread else ["result"]
    errors = any("error" in ln for ln in lines)
    head = ["session_id", "scenario", *keys, *(["error"] if errors else [])]
    rows = []
    for ln in lines:
        got = ln.get("result")
        values = [got.get(k) for k in keys] if spread and isinstance(got, dict) else [got]
        if "error" in ln:
            values = [None] * len(keys)
        rows.append([ln["session_id"], ln["scenario"], *(_cell(v) for v in values), *([ln.get("error", "")] if errors else [])])
    return head, rows


def _cell(value: Any) -> str:
    """A value as a table or CSV cell: a float to 15 significant figures, which keeps a time
    (`at`: 1796582497.71674, never `1.79658e+09`) and drops a float sum's noise (0.0056,
    never 0.005600000000000001)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format(value, ".15g") if isinstance(value, float) else str(value)
    return orjson.dumps(value, default=str).decode()


def query_table(lines: list[dict[str, Any]], plain: bool) -> None:
    from rich.table import Table

    out = console(plain)
    if not lines:
        _say(out, "no session gave a result (--keep-null shows the nulls)", "dim")
        return
    head, rows = query_columns(lines)
    table = Table(box=None, pad_edge=False, show_header=True)
    for col in head:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(_t(c) for c in row))
    out.print(table)


def query_csv(lines: list[dict[str, Any]]) -> None:
    """CSV has no escape of its own for ESC: every cell (a result, a key, a scenario's name
    comes from a transcript or a bench nobody here wrote) is escaped as plain output is
    (`\x1b`, core/termtext.py), to a terminal or a pipe alike, as the table and JSON Lines are;
    newlines and tabs stay, inside CSV's quotes."""
    import csv

    head, rows = query_columns(lines)
    writer = csv.writer(sys.stdout, lineterminator="\n")
    for row in (head, *rows):
        writer.writerow([printable(cell, one_line=False) for cell in row])


# ---------------------------------------------------------------- sessions / show


def session_list(lines: list[Any], total: int, plain: bool, asked: str = "") -> None:
    """Sessions newest first: a short handle, what happened, what it cost, how it graded."""
    if not lines:
        matches = f"no session matches {asked} ({total} stored; `benchtape sessions` lists them)" if asked else "no session matches"
        _say(line_printer(True) if plain else console(False), "no sessions recorded yet: `benchtape run BENCH` or `benchtape demo`" if not total else matches, "yellow")
        return
    from rich.table import Table
    from rich.text import Text

    out = console(plain)
    table = Table(box=None, pad_edge=False, show_header=True)
    columns: tuple[tuple[str, JustifyMethod], ...] = (("session", "left"), ("started", "left"), ("scenario", "left"), ("harness/model", "left"), ("outcome", "left"), ("score", "right"), ("cost", "right"), ("duration", "right"), ("verdicts", "left"), ("run", "left"))
    for col, just in columns:
        table.add_column(col, justify=just, overflow="fold")
    for s in lines:
        name = f"{s.scenario} #{s.attempt}" + ("  [control]" if s.control else "")
        who = (s.harness or "-") + (f"/{s.model}" if s.model else "") + (f" [{SHORT[s.agent_kind]}]" if s.agent_kind and not s.control else "")
        outcome = s.outcome.upper() if s.outcome in ("pass", "fail", "error") else s.outcome
        table.add_row(
            s.handle,
            when(s.started_at),
            _t(name),
            _t(who),
            Text(outcome, style=STATUS_STYLE.get(s.outcome, "yellow" if s.outcome == "incomplete" else "dim")),
            "" if s.score is None else f"{s.score:.2f}",
            "unknown" if s.cost_usd is None else f"${s.cost_usd:.4f}",
            "" if s.duration_ms is None else seconds(s.duration_ms),
            s.summary,
            s.run_handle,
        )
    out.print(table)
    if len(lines) < total:
        _say(out, f"{len(lines)} of {total} session(s), newest first; --limit 0 lists all", "dim")
    _say(out, "a handle, `latest` or RUN/SCENARIO#N names a session: benchtape show HANDLE", "dim")


def seconds(ms: float) -> str:
    return f"{ms / 1000:.1f}s" if ms < 600_000 else f"{ms / 60000:.1f}m"


def timeline(shown: Any, plain: bool, full: bool = False) -> None:
    from rich.table import Table
    from rich.text import Text

    from benchtape.app.sessions import AGENT_LABELS as LABELS
    from benchtape.app.sessions import shown_kind
    from benchtape.replay.document import check_name
    from benchtape.replay.timeline import free_cost_note, judge_note, one_line, shorten

    out = console(plain)
    row, s = shown.row, shown.session
    control = " (negative control: the no-op agent)" if shown.control else ""
    _say(out, f"session {row.id}  {row.scenario} #{row.attempt}  run {row.run_id}{control}", "bold")
    _say(out, f"harness {s.harness or row.harness or '-'}  model {s.model or row.model or '-'}  status {s.status or 'incomplete'}  {len(s.actions)} actions, {len(s.calls)} tool calls")
    kind = shown_kind(shown)
    if kind and not shown.control:
        _say(out, f"{LABELS[kind]}: this session measured the pipeline, not an agent", "yellow")
    widths = {"seq": max(3, len(str(len(s.actions)))), "thread": max([6] + [len(st.thread) for st in shown.steps]), "kind": max([4] + [len(st.kind) for st in shown.steps]), "tool": max([4] + [len(st.tool or "") for st in shown.steps]), "outcome": 7, "tokens": 6}
    widths = {k: min(w, 24) for k, w in widths.items()}
    right = {"seq", "tokens"}

    def cell(name: str, value: str) -> str:
        value = value[: widths[name]]
        return value.rjust(widths[name]) if name in right else value.ljust(widths[name])

    room = max(20, out.width - sum(widths.values()) - len(widths))  # laid out by hand: the text column gets exactly the rest
    _say(out, " ".join(cell(k, k) for k in widths) + " text", "bold")
    hidden = False
    for st in shown.steps:
        if full:
            text = st.text + (f"\n{st.detail}" if st.detail else "")
        else:
            line = one_line(st.text)
            text = shorten(line, room)
            hidden = hidden or text != line or st.detail is not None
        row = Text(" ".join([cell("seq", str(st.seq if st.seq is not None else "")), cell("thread", st.thread), cell("kind", st.kind), cell("tool", st.tool or "")]) + " ")
        row.append(cell("outcome", st.outcome or ""), style={"ok": "green", "error": "red"}.get(st.outcome or "", ""))
        row.append(" " + cell("tokens", "" if st.tokens is None else str(st.tokens)) + " ")
        if full and "\n" in text:
            pad = " " * (sum(widths.values()) + len(widths))
            text = text.replace("\n", "\n" + pad)
        row.append(text)
        out.print(row, soft_wrap=not full, no_wrap=not full, crop=False)
    if hidden:
        _say(out, "(long texts are shortened to a line, and tool inputs show their main field; --full shows everything whole)", "dim")
    if s.final_output is not None:
        said = s.final_output if full or len(s.final_output) <= FINAL_OUTPUT_CHARS else f"{s.final_output[:FINAL_OUTPUT_CHARS]}… [+{len(s.final_output) - FINAL_OUTPUT_CHARS} chars, --full shows it whole]"
        _say(out, f"final output: {said}")
    if shown.verdicts:
        _say(out, f"verdicts (grading {shown.verdicts[0]['grading_id']}):", "bold")
        vt = Table(box=None, pad_edge=False)
        for col in ("path", "check", "type", "status", "score", "reason"):
            vt.add_column(col, overflow="fold")
        for v in shown.verdicts:
            vt.add_row(_t(v["check_path"]), _t(check_name(v.get("metric"), v["type"]) + (" (readout)" if v["readout"] else "")), _t(v["type"]), Text(v["status"], style=STATUS_STYLE.get(v["status"], "")), f"{v['score']:.2f}", _t(v["reason"]))
            for depth, child in _child_verdicts(v.get("evidence")):
                vt.add_row("", _t("  " * depth + "└ " + check_name(child.get("metric"), str(child.get("type")))), _t(child.get("type")), Text(str(child.get("status") or ""), style=STATUS_STYLE.get(str(child.get("status")), "")), "" if child.get("score") is None else f"{child['score']:.2f}", _t(child.get("reason")))
            note = judge_note(v.get("evidence")) or _verifier_log(v, full)
            if note:
                vt.add_row("", "", "", "", "", Text(note, style="dim"))
        out.print(vt)
        _reproduction_line(out, shown.reproduction, shown.row.id)
    else:
        _say(out, "not graded", "dim")
    if shown.metrics and shown.metrics.get("values"):
        kept = shown.metrics.get("grading_id")
        _say(out, f"metrics (grading {kept}):" if kept else "metrics (built-in: the bench declares none):", "bold")
        for name, value in shown.metrics["values"].items():
            why = (shown.metrics.get("errors") or {}).get(name) or (_turns_note(shown.session, value) if name == "turns" and not kept else None) or (free_cost_note(shown.session, value) if name == "cost" else None)
            unit = " ms" if name == "duration" and not kept and value is not None else ""  # madbench's built-in duration is in milliseconds
            _say(out, f"  {name}  {metric_text(value)}{unit}" + (f"  ({why})" if why else ""))


VERIFIER_LOG_LINES = 12
FINAL_OUTPUT_CHARS = 4000  # an agent's answer is whole below it; a validation phase's evidence (20 KB of JSON) is not


def _verifier_log(verdict: dict[str, Any], full: bool) -> str | None:
    """Why a task verdict did not pass, in the verifier's own words: the tail of its log (all of
    it with --full). "the verifier's reward 0" alone sent a user to `show --json` to find out."""
    evidence = verdict.get("evidence")
    log = evidence.get("log") if isinstance(evidence, dict) and verdict.get("type") == "task:verify" and verdict.get("status") != "PASS" else None
    if not isinstance(log, str) or not log.strip():
        return None
    lines = log.rstrip().splitlines()
    shown = lines if full else lines[-VERIFIER_LOG_LINES:]
    head = "the verifier's log" + ("" if len(shown) == len(lines) else f" (its last {len(shown)} of {len(lines)} lines; --full shows all)")
    return head + ":\n" + "\n".join(shown)


def _turns_note(session: Any, value: Any) -> str | None:
    """madbench's built-in `turns` counts exchanges (the prompt and each follow-up); a tool's own
    `turns` (Claude's num_turns) counts model round trips: said side by side, so 1 beside 14 reads right."""
    reported = session.metrics.turns
    return None if reported is None or reported == value else f"exchanges: the prompt and each follow-up; the tool reported {reported} model turns"



def metric_text(value: Any) -> str:
    """A metric's value as a person reads it: n/a when missing (unknown is never 0); a whole
    number in full (1135418 tokens, never `1.13542e+06`), a fraction to six figures."""
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 1e6:
        return f"{value:.0f}"
    return f"{value:.6g}" if abs(value) >= 1e-3 else f"{value:.3g}"


def _child_verdicts(evidence: Any, depth: int = 1) -> Iterable[tuple[int, dict[str, Any]]]:
    """A composite's children (from its evidence), depth first."""
    children = evidence.get("children") if isinstance(evidence, dict) else None
    for child in children if isinstance(children, list) else []:
        if isinstance(child, dict):
            yield depth, child
            yield from _child_verdicts(child.get("evidence"), depth + 1)


def workspace_diff(session_id: str, changes: Any, plain: bool) -> None:
    """The agent's changes as a git-style patch: raw on a pipe (for `git apply`), coloured on a terminal."""
    from rich.text import Text

    print(f"# session {session_id}: {changes.summary()}", file=sys.stderr)
    if plain or not sys.stdout.isatty():
        sys.stdout.write(changes.patch)
        return
    from benchtape.replay.changes import HEADER_LINES, display_lines

    out = console(plain)
    for line in display_lines(changes.patch):
        style = "bold" if line.startswith(HEADER_LINES) else "cyan" if line.startswith("@@") else "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        out.print(Text(line, style=style), soft_wrap=True)


def _reproduction_line(out: Any, marker: dict[str, Any] | None, session_id: str) -> None:
    """The positive control's finding, under the verdicts it checked (never in their place)."""
    if marker is None:
        return
    if marker["status"] == "OTHER":
        _say(
            out,
            f"positive control (grade, grading {marker['grading_id']}): it reproduced grading {marker['reproduced']}, not the verdicts above "
            f"(grading {marker['shown']}); `benchtape grade --session {session_id} --grading {marker['shown']}` checks these",
            "yellow",
        )
    elif marker["status"] == "DIVERGED":
        _say(out, f"positive control (grade, grading {marker['grading_id']}): DIVERGED on {', '.join(marker['diverged'])} (the verdicts above are the grading's it reproduced)", "bold red")
    else:
        _say(out, f"positive control (grade, grading {marker['grading_id']}): REPRODUCED", "dim")
