"""The read-side commands: the two controls (check, grade), regrade and diff, query, and
browsing what was recorded (gradings, sessions, show). Each parses, calls the app layer
(benchtape.app) and hands the result to `benchtape.render_replay`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command
from benchtape.options import Benches, Db, EnvFile, Full, IncludeControls, Json, NoEnv, Params, Plain, RunId, Scenario, SessionId, open_store, parse_params, plain_wanted, selection

if TYPE_CHECKING:  # imported where used: `benchtape --help` loads no replay code
    from benchtape.app.gradings import OnSession, Reproduction, SessionReplay
    from benchtape.app.sessions import BrowsingStore
    from benchtape.app.stores import Store

# ---------------------------------------------------------------- check (the negative control)


@command()
def check_cmd(
    benches: Benches = None,
    verbose: bool = typer.Option(False, "-v", "--verbose", help="List every check, not only those that break the control."),
    db: Db = None,
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes", help="Consent for `sandbox: none`: the checks run for real in your directory."),
    param: Params = None,
    as_json: Json = False,
    plain: Plain = False,
    harness: str | None = typer.Option(None, "--harness", help="Run the control through this harness (default mock); claude-code or codex need --model scripted."),
    model: str | None = typer.Option(None, "--model", help="`scripted`: the real binary with the no-op scripted model (it says the prompt back)."),
    env_file: EnvFile = None,
    no_env: NoEnv = False,
) -> int:
    """Negative control: run every scenario under the no-op mock; every gradable check must FAIL.
    On tasks (a folder of Harbor tasks, or an evaluation with `tasks:`): no task may pass under the no-op.

    Exit 0 the control holds, 1 a check wrongly passed or could not be graded, 3 nothing gradable.
    Example: benchtape check fixtures-red/demo/bench.yaml -v
    """

    from benchtape import render, render_replay
    from benchtape.app import envfile
    from benchtape.app.api import load_benches, run_benches
    from benchtape.app.controls import control_options
    from benchtape.app.gradings import refuse_images, tally
    from benchtape.app.runs import Interrupted

    envfile.load(env_file, no_env)
    if benches and len(benches) == 1:
        from benchtape.app.task_check import check_tasks, is_task_target

        if is_task_target(Path(benches[0])):  # a folder of Harbor tasks, or an evaluation with `tasks:`
            from benchtape import render_evaluation

            return check_tasks(Path(benches[0]), render_evaluation, db=db, plain=plain, as_json=as_json)
    loaded = load_benches(benches, parse_params(param))
    refuse_images(loaded)
    is_plain = plain_wanted(plain)
    try:
        with render.Progress(is_plain or as_json) as progress:
            options = control_options(loaded, allow_host_writes=allow_host_writes, argv=sys.argv[1:], harness=harness, model=model)
            # the store opened once the preflight passed, as `run` opens it: a blocked control left an empty store behind
            outcome = run_benches(loaded, lambda: open_store(db), options, on_event=progress, control=True)
    except Interrupted:
        raise KeyboardInterrupt from None
    try:
        report = tally(outcome.runs)
    finally:
        outcome.close()
    if as_json:
        render_replay.emit_json(report.to_dict())
    else:
        render_replay.control_report(report, verbose, is_plain)
    return report.exit_code


# ---------------------------------------------------------------- grade (the positive control)


@command()
def grade_cmd(
    target: str | None = typer.Argument(None, help="A report JSON (from --report-json or --report-dir), or a run (id prefix or `latest`)."),
    session: SessionId = None,
    run: str | None = typer.Option(None, "--run", help="This run's sessions (id prefix or `latest`); the same as giving RUN_ID."),
    all_: bool = typer.Option(False, "--all", help="Every stored session, the negative control's included."),
    grading: str | None = typer.Option(None, "--grading", help="Reproduce this grading (default: each session's first grading, the one made with its run)."),
    db: Db = None,
    as_json: Json = False,
    plain: Plain = False,
) -> int:
    """Positive control: re-grade stored sessions with the exact checks they were graded with.

    Every verdict is REPRODUCED, DIVERGED, COULD NOT RE-GRADE or SKIPPED (a check reading a
    workspace a report never carried, as the spec says). Exit 0 everything re-graded
    reproduced, 1 any diverged or not re-gradable, 3 nothing to re-grade.
    Example: benchtape grade out.json   ·   benchtape grade 01J… --db runs.db
    """

    from benchtape import render_replay
    from benchtape.app.gradings import reproduce_store

    is_plain = plain_wanted(plain)
    collected: list[dict[str, Any]] = []

    def on_session(one: SessionReplay) -> None:
        if as_json:
            collected.append(one.to_dict())
        else:
            render_replay.replay_session(one, is_plain)

    if target is not None and _is_report(target):
        if all_ or grading:
            raise BadInput("--all and --grading read the database; a report is graded on its own", fix="drop them, or pass a run id instead of the report")
        reps = _grade_report(Path(target), session, db, on_session)
    else:
        if target is not None and run is not None:
            raise BadInput("give the run id once: as RUN_ID or as --run")
        run_id = target if target is not None else run
        if run_id is not None and session:
            raise BadInput("give a run id or --session, not both")
        store = open_store(db, must_exist=True)
        reps = [reproduce_store(store, selection(session, run_id, None, all_, controls=True), grading=grading, on_session=on_session)]
    codes = [r.exit_code for r in reps]
    code = 1 if 1 in codes else 0 if 0 in codes else 3
    if as_json:
        counts = {k: sum(r.counts[k] for r in reps) for k in reps[0].counts}
        render_replay.emit_json({"source": reps[0].source, "input": reps[0].input, "grading_id": reps[0].grading_id if len(reps) == 1 else [r.grading_id for r in reps], "reproduces": sorted({g for r in reps for g in r.reproduced_gradings}), "counts": counts, "exit_code": code, "sessions": collected})
    else:
        for rep in reps:
            render_replay.reproduction(rep, is_plain)
    return code


def _grade_report(path: Path, session: str | None, db: Path | None, on_session: OnSession) -> list[Reproduction]:
    """A report written by `run` names its database and runs: re-grade from there when they are
    here (a check that reads the workspace gets it from the stored snapshot), else from the
    report alone (such checks are SKIPPED unless `--report-dir` put snapshots beside it)."""
    from benchtape.app.gradings import reproduce_report, reproduce_store
    from benchtape.app.reports import load_report
    from benchtape.app.sessions import Selection

    doc = load_report(path)
    named = db or (Path(doc["database"]) if doc.get("database") else None)
    runs = [r for r in [doc.get("run_id"), *(r.get("run_id") for r in doc.get("runs") or [])] if r]
    if named is not None and runs:
        if not named.is_file():
            print(f"note: the database {'--db names' if db else 'this report names'} ({named}) is not here: re-grading from the report alone", file=sys.stderr)
        else:
            store = open_store(named, must_exist=True)
            missing = [r for r in runs if store.run(r) is None]
            if not missing:
                if session:
                    return [reproduce_store(store, Selection(session=session), on_session=on_session)]
                return [reproduce_store(store, Selection(run=r, controls=True), on_session=on_session) for r in runs]
            print(f"note: {named} does not hold run {missing[0]} of this report: re-grading from the report alone", file=sys.stderr)
    return [reproduce_report(path, session=session, on_session=on_session)]


def _is_report(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return True
    if target.endswith(".json"):
        raise BadInput("no such report", file=target, fix="pass the path of a --report-json file, or a run id")
    return False


# ---------------------------------------------------------------- regrade / diff / gradings


@command(store="existing")
def regrade_cmd(
    store: Store,
    bench: Path | None = typer.Option(None, "--bench", help="The bench whose checks (as they are now) grade the stored sessions; without it, task cells are re-verified with each task as it is now."),
    run: RunId = None,
    scenario: Scenario = None,
    all_: bool = typer.Option(False, "--all", help="Every stored session (the default)."),
    include_controls: IncludeControls = False,
    param: Params = None,
    db: Db = None,
    rejudge: bool = typer.Option(False, "--rejudge", help="Ask the judges again even where a byte-identical request was answered before (default: reuse the stored judgment, free and reproducible)."),
    plain: Plain = False,
) -> int:
    """Grade stored sessions with the bench's current checks, as a new grading. No agent runs.

    Sessions are matched to scenarios by name; the negative control's sessions only with
    --include-controls (or their run named). Without --bench, every selected task cell's stored
    candidate patch goes through its task's hidden verifier as the task is NOW (a repaired
    tests.patch, validated again, re-grades old sessions; a task changed since its validation is
    not measured: task_stale). The last line printed is the new grading's id.
    Example: benchtape regrade --bench bench.yaml --run 01J…  then  benchtape diff OLD NEW
    """

    from benchtape import render_replay
    from benchtape.app.gradings import regrade, regrade_tasks
    from benchtape.app.runs import load_bench

    chosen = selection(None, run, scenario, all_, controls=include_controls)
    if bench is None:
        summary = regrade_tasks(store, chosen)
        if not summary.graded:
            raise BadInput("no task cell among the selected sessions, and no --bench to regrade the others with", fix="name the bench: benchtape regrade --bench BENCH (task cells are regraded without one)")
    else:
        summary = regrade(store, load_bench(bench, parse_params(param)), chosen, rejudge=rejudge)
    render_replay.regrade_summary(summary, plain_wanted(plain))
    return 0


@command(store="read")
def diff_cmd(
    store: BrowsingStore,
    grading_a: str = typer.Argument(..., help="The earlier grading (id prefix)."),
    grading_b: str = typer.Argument(..., help="The later grading (id prefix, or `latest`)."),
    as_json: Json = False,
    db: Db = None,
    plain: Plain = False,
) -> int:
    """Compare two gradings verdict by verdict: flips, score deltas, changed, added and removed checks.

    Example: benchtape diff 01JA… 01JB… --json
    """

    from benchtape import render_replay
    from benchtape.app.gradings import diff_gradings

    d = diff_gradings(store, grading_a, grading_b)
    if as_json:
        render_replay.emit_json(d.to_dict())
    else:
        render_replay.grading_diff(d, plain_wanted(plain))
    return 0


@command(store="read")
def gradings_cmd(
    store: BrowsingStore,
    as_json: Json = False,
    db: Db = None,
    plain: Plain = False,
) -> int:
    """List gradings: id, source (live, regrade, control), when, how many sessions, bench.

    Example: benchtape gradings --json
    """

    from benchtape import render_replay
    from benchtape.app.gradings import gradings_table

    rows = gradings_table(store)
    if as_json:
        render_replay.emit_json(rows)
    else:
        render_replay.gradings_list(rows, plain_wanted(plain))
    return 0


# ---------------------------------------------------------------- query / sessions / show


QUERY_FORMATS = ("jsonl", "table", "csv")


@command()
def query_cmd(
    expr: str = typer.Argument(..., help="A JMESPath expression over {session, actions, calls, subagents, metrics, environment, final_output, verdicts}."),
    session: str | None = typer.Option(None, "--session", help="One session (id prefix, `latest`, RUN/SCENARIO#N): print the bare result."),
    run: RunId = None,
    scenario: Scenario = None,
    all_: bool = typer.Option(False, "--all", help="Every session (the default)."),
    include_controls: IncludeControls = False,
    keep_null: bool = typer.Option(False, "--keep-null", help="Also print sessions where the result is null."),
    output: str = typer.Option("jsonl", "--format", help="jsonl (one JSON line per session), table, or csv (an object result's keys become columns)."),
    db: Db = None,
    plain: Plain = False,
) -> int:
    """JMESPath over stored sessions: JSON Lines {session_id, scenario, result}, or the bare result with --session.

    A session the expression fails on (length() of a number, say) gets {session_id,
    scenario, error} and the others are still asked; the exit code is then 1.

    Example: benchtape query 'calls[].tool' --run 01J…

    Example: benchtape query '{tool: calls[0].tool, n: length(calls)}' --format csv
    """

    from benchtape import render_replay
    from benchtape.app.sessions import compile_query, evaluate, resolve, run_query

    if output not in QUERY_FORMATS:
        raise BadInput(f"--format {output!r} is not one of {', '.join(QUERY_FORMATS)}", fix="--format jsonl, --format table or --format csv")
    query = compile_query(expr)  # before the store is touched: a typo costs nothing
    store = open_store(db, must_exist=True, readonly=True)
    if session:
        sid = resolve(store, "sessions", session)
        row = store.session_row(sid)
        assert row is not None  # resolve() found it
        render_replay.emit_json(evaluate(store, query, row))
        return 0
    lines = run_query(store, query, selection(None, run, scenario, all_, controls=include_controls), keep_null=keep_null)
    failed = 0
    if output == "jsonl":
        for line in lines:
            failed += "error" in line
            render_replay.emit_jsonl(line)
    else:
        kept = list(lines)
        failed = sum("error" in line for line in kept)
        if output == "table":
            render_replay.query_table(kept, plain_wanted(plain))
        else:
            render_replay.query_csv(kept)
    if failed:
        sys.stderr.write(f"the expression failed on {failed} session(s): each is listed with its `error`, and the others were still asked\n")
    return 1 if failed else 0


@command(store="read")
def sessions_cmd(
    store: BrowsingStore,
    run: RunId = None,
    scenario: Scenario = None,
    limit: int = typer.Option(50, "--limit", min=0, help="At most this many, newest first (0: all)."),
    include_controls: IncludeControls = False,
    as_json: Json = False,
    db: Db = None,
    plain: Plain = False,
) -> int:
    """Stored sessions, newest first: a short handle, outcome, score, cost, duration, harness/model, verdicts.

    Negative-control sessions (the no-op agent of `benchtape check`) are left out unless
    --include-controls or their run is named. Any handle shown works wherever an id is taken.
    Example: benchtape sessions --scenario fixes-the-bug --limit 10
    """

    from benchtape import render_replay
    from benchtape.app.sessions import count_sessions, session_lines

    lines = session_lines(store, run=run, scenario=scenario, limit=limit or None, controls=include_controls)
    if as_json:
        render_replay.emit_json([s.to_dict() for s in lines])
    else:
        # with nothing listed, the store's own count says whether it is empty or the filter matched nothing
        total = len(lines) if lines and (run or scenario or not limit or len(lines) < limit) else count_sessions(store, controls=include_controls)
        asked = " and ".join(f"{flag} {value}" for flag, value in (("--run", run), ("--scenario", scenario)) if value)
        render_replay.session_list(lines, total, plain_wanted(plain), asked=asked)
    return 0


@command(store="read")
def show_cmd(
    store: BrowsingStore,
    session: str = typer.Argument(..., help="The session: an id prefix, `latest`, or RUN/SCENARIO#N."),
    as_json: bool = typer.Option(False, "--json", help="Print the session document (what query reads)."),
    diff: bool = typer.Option(False, "--diff", help="Print what the agent changed: its final workspace against the staged tree, as a git-style patch."),
    full: Full = False,
    db: Db = None,
    plain: Plain = False,
) -> int:
    """One session's timeline (seq, thread, kind, tool, outcome, tokens, text), then its latest verdicts.

    Long texts are shortened to one line with a marker; --full shows them whole. --diff prints
    the agent's changes instead (exit 1 when the session has no staged-tree snapshot to diff).
    Example: benchtape show latest   ·   benchtape show 01J…/fixes-the-bug#2 --diff | git apply
    """

    from benchtape import render_replay
    from benchtape.app.sessions import show, show_document

    shown = show(store, session)
    if diff:
        from benchtape.app.sessions import NoDiff, workspace_changes

        try:
            changes = workspace_changes(store, shown.session)
        except NoDiff as exc:
            print(f"no diff: {exc}", file=sys.stderr)
            return 1
        if as_json:
            render_replay.emit_json(changes.to_dict())
        else:
            render_replay.workspace_diff(shown.row.id, changes, plain_wanted(plain))
        return 0
    if as_json:
        render_replay.emit_json(show_document(store, shown))
    else:
        render_replay.timeline(shown, plain_wanted(plain), full)
    return 0


def register(app: typer.Typer) -> None:
    app.command("check")(check_cmd)
    app.command("grade")(grade_cmd)
    app.command("regrade")(regrade_cmd)
    app.command("diff")(diff_cmd)
    app.command("gradings")(gradings_cmd)
    app.command("query")(query_cmd)
    app.command("sessions")(sessions_cmd)
    app.command("show")(show_cmd)
