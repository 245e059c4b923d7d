"""`benchtape run` and `benchtape demo`: preflight, record every session, grade each as it
finishes, and say what happened (tables, gauges, where the reports went)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command
from benchtape.options import Benches, Db, EnvFile, Full, NoEnv, Params, Plain, open_store, parse_params


@dataclass
class RunRequest:
    """What `run` (and `demo`) were asked to do, as one value instead of a long argument list."""

    benches: list[Path] | None = None
    harness: str | None = None
    model: str | None = None
    db: Path | None = None
    repeat: int = 1
    concurrency: int = 4
    params: dict = field(default_factory=dict)
    sandbox: str | None = None
    allow_host_writes: bool = False
    allow_network: bool = False
    keep_sandbox: bool = False
    scenarios: list[str] | None = None
    eval_runs: list[str] | None = None
    report_json: Path | None = None
    report_dir: Path | None = None
    report_junit: Path | None = None
    plain: bool = False
    full: bool = False
    demo: bool = False
    skip_preflight: bool = False


@command()
def run_cmd(
    benches: Benches = None,
    harness: str | None = typer.Option(None, "--harness", help="Override the bench's harness (`benchtape --help` lists every one, plugins too)."),
    model: str | None = typer.Option(None, "--model", help="Model to run."),
    db: Db = None,
    repeat: int = typer.Option(1, "--repeat", min=1, help="Run each scenario N times (flake detection)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Scenarios (or an evaluation's cells) at once: 4, or for an evaluation the project's `defaults.concurrency`."),
    param: Params = None,
    sandbox: str | None = typer.Option(None, "--sandbox", help="Override the sandbox level: none, workspace, home, container."),
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes", help="Consent for `sandbox: none` (runs in your real directory)."),
    allow_network: bool = typer.Option(False, "--allow-network", help="Consent for a container `network:` other than none (host, bridge, …)."),
    keep_sandbox: bool = typer.Option(False, "--keep-sandbox", help="Keep each session's sandbox for debugging."),
    scenario: list[str] | None = typer.Option(None, "--scenario", help="Run only this scenario (repeatable)."),
    run: list[str] | None = typer.Option(None, "--run", help="With an Eval file: run only this run entry (repeatable)."),
    report_json: Path | None = typer.Option(None, "--report-json", help="Write the JSON report here."),
    report_dir: Path | None = typer.Option(None, "--report-dir", help="Per run: RUN_ID.jsonl streamed as sessions finish, RUN_ID.json at the end, workspace snapshots beside."),
    report_junit: Path | None = typer.Option(None, "--report-junit", help="Write JUnit XML here (one testcase per scenario attempt, classname the bench), for CI."),
    plain: Plain = False,
    full: Full = False,
    task: list[str] | None = typer.Option(None, "--task", help="With an evaluation: only this task (repeatable)."),
    fresh: bool = typer.Option(False, "--fresh", help="With an evaluation: measure every selected cell again, even the measured ones (deletes nothing)."),
    yes: bool = typer.Option(False, "--yes", help="With an evaluation: consent to run (and install tool versions) without asking; required without a terminal."),
    dry_run: bool = typer.Option(False, "--dry-run", help="With an evaluation: the preview only (measured cells, cells to run, installs, estimated spend); starts nothing."),
    json_out: bool = typer.Option(False, "--json", help="With an evaluation: print as JSON the preview (with --dry-run) or the result (with --yes)."),
    executor: str | None = typer.Option(None, "--executor", help="With an evaluation: where cells run: local (this machine, the default) or ray (a Ray cluster; docs/scale-out.md)."),
    address: str | None = typer.Option(None, "--address", help="With --executor ray: the cluster's address HOST:PORT (else RAY_ADDRESS, else `runs.address`)."),
    detect: str | None = typer.Option(None, "--detect", metavar="DIFF", help="With an evaluation: the difference in pass rate to plan for (10pp): the preview says the tasks or attempts it needs at 80% power."),
    until_decided: bool = typer.Option(False, "--until-decided", help="With an evaluation: run in rounds, stop when every neighbouring pair of setups is told apart (an always-valid test) or the budget is spent; a stopped one resumes."),
    max_cells: int | None = typer.Option(None, "--max-cells", min=1, help="With --until-decided: run at most this many new cells."),
    budget: str | None = typer.Option(None, "--budget", metavar="USD", help="With --until-decided: spend at most this much ($5, or 5), by the stored cost per cell."),
    round_tasks: int | None = typer.Option(None, "--round", min=1, help="With --until-decided: tasks added per round to each undecided setup (default 5)."),
    env_file: EnvFile = None,
    no_env: NoEnv = False,
    fail_on_failure: bool = typer.Option(False, "--fail-on-failure", help="Exit 1 when a scenario failed: what a bench `run` always does (madbench v0.23.0's rule; accepted so madbench 0.33+ command lines run unchanged); with an evaluation or Harbor tasks, exit 1 when a setup's cell did not pass or a control does not hold."),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Skip the findings that only save spend (a missing binary, key, runtime, grader file); the gates that protect this machine (sandbox none, network, your HOME) still stop the run."),
    manual: bool = typer.Option(False, "--manual", help="madbench's hand-driven session: refused, with why and what to do instead."),
    runs: int | None = typer.Option(None, "--runs", hidden=True, min=1, help="madbench v0.23.0's deprecated spelling of --repeat."),
    no_update_check: bool = typer.Option(False, "--no-update-check", hidden=True, help="madbench's; accepted and changes nothing: benchtape never checks for updates."),
    no_keychain: bool = typer.Option(False, "--no-keychain", hidden=True, help="madbench's; accepted and changes nothing: benchtape reads no keychain (keys come from the environment and ./.env)."),
) -> int:
    """Run benches (or an Eval file: one bench run per `runs:` entry), or an evaluation (`kind: Evaluation`, by name or path), and grade every session as it finishes.

    Example: benchtape run fixtures-red/demo/bench.yaml --repeat 3 --report-json out.json
    Example: benchtape run baseline --dry-run   (then: benchtape run baseline --yes)
    """
    repeat = _repeat(repeat, runs)
    code = _madbench_flags(manual, env_file, no_env)
    if code:
        return code
    if harbor_target(benches):
        assert benches is not None
        refused = bench_only_flags(None, None, 1, param, scenario, run, report_json, report_dir, report_junit)
        return _run_harbor(benches[0], harness, model, repeat, refused, task, fresh, yes, dry_run, json_out, db, concurrency, sandbox, keep_sandbox, (allow_host_writes, allow_network), plain, (executor, address), fail_on_failure=fail_on_failure)
    target = evaluation_target(benches)
    if target is not None:
        refused = bench_only_flags(harness, model, repeat, param, scenario, run, report_json, report_dir, report_junit)
        deciding = (detect, until_decided, max_cells, budget, round_tasks)
        return _run_evaluation(target, refused, task, fresh, yes, dry_run, json_out, db, concurrency, sandbox, keep_sandbox, (allow_host_writes, allow_network), plain, (executor, address), deciding=deciding, fail_on_failure=fail_on_failure)
    misplaced = [flag for flag, value in {"--task": task, "--fresh": fresh, "--yes": yes, "--dry-run": dry_run, "--json": json_out, "--executor": executor, "--address": address, "--detect": detect, "--until-decided": until_decided, "--max-cells": max_cells, "--budget": budget}.items() if value]
    if misplaced:
        return _only_for_evaluations(misplaced[0], benches)
    request = RunRequest(
        benches=benches,
        harness=harness,
        model=model,
        db=db,
        repeat=repeat,
        concurrency=concurrency or 4,
        sandbox=sandbox,
        allow_host_writes=allow_host_writes,
        allow_network=allow_network,
        keep_sandbox=keep_sandbox,
        scenarios=scenario or None,
        eval_runs=run or None,
        report_json=report_json,
        report_dir=report_dir,
        report_junit=report_junit,
        plain=plain,
        full=full,
        skip_preflight=skip_preflight,
    )
    return execute(request, param)


def _repeat(repeat: int, runs: int | None) -> int:
    """--repeat, or madbench v0.23.0's deprecated `--runs` (it still loads there: a CI line
    written for it runs here too, with a note)."""
    if runs is None:
        return repeat
    if repeat != 1 and repeat != runs:
        raise BadInput(f"--runs {runs} and --repeat {repeat} disagree", fix=f"keep one: --repeat {repeat}")
    print(f"note: --runs is madbench's deprecated spelling of --repeat: running each scenario {runs} time(s)", file=sys.stderr)
    return runs


def _madbench_flags(manual: bool, env_file: Path | None, no_env: bool) -> int:
    """The flags a madbench command line carries: one benchtape cannot honour refused with its
    fix, the `.env` loaded (before anything reads the environment)."""
    from benchtape.app import envfile

    if manual:
        raise BadInput(
            "--manual is not supported: benchtape types every prompt itself, so a session can be run again and its verdicts reproduced; a session a person types cannot",
            fix="to drive Claude Code by hand and still keep and grade the record, run `claude` yourself, then `benchtape import claude-code ~/.claude/projects/<project>/` and `benchtape regrade --bench BENCH`",
        )
    envfile.load(env_file, no_env)
    return 0


def evaluation_target(benches: list[Path] | None) -> str | None:
    """The evaluation `run` was given, if it was one: a file whose `kind:` is Evaluation, or the
    name of one in .benchtape/evaluations/ (a bench or Eval file is never mistaken for one)."""
    if not benches or len(benches) != 1:
        return None
    target = benches[0]
    if target.is_file():
        from benchtape.app.evaluations import load_yaml_file

        try:
            doc = load_yaml_file(target)
        except BadInput:
            return None
        return str(target) if isinstance(doc, dict) and doc.get("kind") == "Evaluation" else None
    if target.exists() or target.suffix in (".yaml", ".yml") or len(target.parts) > 1:
        return None
    from benchtape.app.evaluations import evaluation_names

    # A bare name that is no file: an evaluation when this project has any (an unknown one is
    # then refused with the closest name), else the bench error as before.
    return str(target) if evaluation_names(Path.cwd()) else None


def harbor_target(benches: list[Path] | None) -> bool:
    """Whether `run` was given one folder of Harbor tasks (a task folder, or a folder of them)."""
    from benchtape.app.runs import is_harbor_folder

    return bool(benches) and len(benches or []) == 1 and is_harbor_folder(Path(benches[0]))  # type: ignore[index]


def _run_harbor(folder: Path, harness, model, repeat, refused, task, fresh, yes, dry_run, json_out, db, concurrency, sandbox, keep_sandbox, consent, plain, placement=(None, None), fail_on_failure=False) -> int:  # type: ignore[no-untyped-def]
    """`benchtape run DIR --harness H [--model M]` on Harbor tasks: an evaluation made in memory
    (one setup × the tasks × --repeat attempts), run as `benchtape run EVALUATION` runs one:
    preview, consent (--yes), cells recorded once and re-graded when asked for again."""
    from benchtape.app.runs import harbor_evaluation

    if refused:
        raise BadInput(f"{refused[0]} does not apply to a run of Harbor tasks", fix=_WHY_NOT_HARBOR.get(refused[0], _WHY_NOT[refused[0]]))
    ev = harbor_evaluation(folder, harness, model, attempts=repeat)
    return _run_evaluation(str(folder), [], task, fresh, yes, dry_run, json_out, db, concurrency, sandbox, keep_sandbox, consent, plain, placement, loaded=ev, fail_on_failure=fail_on_failure)


_WHY_NOT_HARBOR = {
    "--scenario": "a run of Harbor tasks is narrowed with --task ID",
    "--param": "a Harbor task has no bench parameters",
}


def bench_only_flags(harness, model, repeat, param, scenario, run, report_json, report_dir, report_junit) -> list[str]:  # type: ignore[no-untyped-def]
    """The bench-run options an evaluation run does not take, by flag, when they were given."""
    given = {"--harness": harness, "--model": model, "--repeat": repeat != 1, "--param": param, "--scenario": scenario, "--run": run, "--report-json": report_json, "--report-dir": report_dir, "--report-junit": report_junit}
    return [flag for flag, value in given.items() if value]


_WHY_NOT = {
    "--harness": "an evaluation's setups name their tools (`tool:` in its blocks)",
    "--model": "an evaluation's setups name their models (`model:` in its blocks)",
    "--repeat": "an evaluation repeats each cell `attempts:` times (in its file)",
    "--param": "an evaluation runs its benches as they are",
    "--scenario": "an evaluation's tasks are narrowed with --task",
    "--run": "--run selects the runs of an Eval file (bench + runs), not of an evaluation",
    "--report-json": "an evaluation's results are compared with `benchtape compare NAME [--json] [--html page.html]`",
    "--report-dir": "an evaluation's results are compared with `benchtape compare NAME [--json] [--html page.html]`",
    "--report-junit": "an evaluation's results are compared with `benchtape compare NAME [--json] [--html page.html]`",
}


def _run_evaluation(target: str, refused: list[str], task, fresh, yes, dry_run, json_out, db, concurrency, sandbox, keep_sandbox, consent, plain, placement=(None, None), loaded=None, deciding=(None, False, None, None, None), fail_on_failure=False) -> int:  # type: ignore[no-untyped-def]
    from benchtape.app.evaluation_rounds import until_of
    from benchtape.app.evaluation_run import EvaluationRequest
    from benchtape.app.evaluation_run import execute as run_evaluation
    from benchtape.app.runs import checked_level

    if refused:
        raise BadInput(f"{refused[0]} does not apply to an evaluation", fix=_WHY_NOT[refused[0]])
    checked_level(sandbox)
    request = EvaluationRequest(
        name=target,
        tasks=list(task or []) or None,
        fresh=fresh,
        yes=yes,
        dry_run=dry_run,
        db=db,
        concurrency=concurrency,
        sandbox=sandbox,
        keep_sandbox=keep_sandbox,
        allow_host_writes=consent[0],  # the consent flags, (--allow-host-writes, --allow-network), both handed on
        allow_network=consent[1],
        json_out=json_out,
        plain=plain,
        argv=sys.argv[1:],
        executor=placement[0],
        address=placement[1],
        loaded=loaded,  # an evaluation made in memory (`run DIR` on Harbor tasks), else loaded by name
        fail_on_failure=fail_on_failure,
        **until_of(*deciding),
    )
    from benchtape import render_evaluation

    return run_evaluation(request, render_evaluation)


def _only_for_evaluations(flag: str, benches: list[Path] | None) -> int:
    """An evaluation-only flag on a bench run. A name that is also a file or folder here is read
    as that path (a bench), so an evaluation of the same name is named by its path instead."""
    from benchtape.app.evaluations import evaluation_ref, find_evaluation, project_evaluation

    name = benches[0] if benches and len(benches) == 1 and len(benches[0].parts) == 1 and not benches[0].suffix else None
    if name is not None and not name.exists():
        find_evaluation(str(name))  # this project has no evaluations (else `run` took the name as one): says so, and how to make one
    shadowed = project_evaluation(str(name), Path.cwd()) if name is not None else None
    if shadowed is not None and name is not None:
        what = "folder" if name.is_dir() else "file"
        raise BadInput(f"{name} is a {what} here, so `run` reads it as a bench; the evaluation of that name is {shadowed}", fix=f"name the evaluation by its path: `benchtape run {evaluation_ref(shadowed)} {flag}`")
    folder = benches[0] if benches and len(benches) == 1 and benches[0].is_dir() else None
    if folder is not None:  # a folder that is no evaluation: what it lacks, not the flag, is the problem (a Harbor folder with no task in it)
        from benchtape.app.api import bench_files

        bench_files([folder])
    raise BadInput(f"{flag} applies to an evaluation (`kind: Evaluation`) or a folder of Harbor tasks, and {'neither' if folder is not None else 'none'} was named", fix="name an evaluation: `benchtape run NAME` (.benchtape/evaluations/NAME.yaml) or its path, or a folder of Harbor tasks")


def execute(req: RunRequest, param: list[str] | None = None) -> int:
    from benchtape import render
    from benchtape.app.api import Reports, load_inputs, run_benches, run_eval
    from benchtape.app.runs import Confounded, Interrupted, RunOptions, checked_level

    checked_level(req.sandbox)
    ev, loaded = load_inputs(req.benches, {**req.params, **parse_params(param)})
    if req.eval_runs and ev is None:
        raise BadInput("--run selects runs of an Eval file, and no Eval file was named", fix="name an Eval file (bench: + runs:), or drop --run")
    if ev is not None:
        ev.select(req.eval_runs)  # unknown names are refused before anything runs
    options = RunOptions(
        harness=req.harness,
        model=req.model,
        repeat=req.repeat,
        concurrency=req.concurrency,
        sandbox=req.sandbox,
        allow_host_writes=req.allow_host_writes,
        allow_network=req.allow_network,
        keep_sandbox=req.keep_sandbox,
        argv=sys.argv[1:],
        scenarios=req.scenarios,
        run_kind="demo" if req.demo else "run",
        skip_preflight=req.skip_preflight,
    )
    _check_scenario_names(loaded, req.scenarios)
    _check_database_folder(req.db)
    from benchtape.core.limits import output_limits

    output_limits()  # a bad BENCHTAPE_MAX_OUTPUT/MAX_LINE is bad input before the store is touched
    stores: list[Any] = []

    def open_now() -> Any:
        """The store, opened once the preflight passed: a blocked run leaves no store behind."""
        stores.append(open_store(req.db))
        return stores[-1]

    is_plain = render.plain_wanted(req.plain)
    reports = Reports(json=req.report_json, dir=req.report_dir, junit=req.report_junit)
    try:
        with render.Progress(is_plain) as progress:
            if ev is not None:
                outcome = run_eval(ev, open_now, options, selected=req.eval_runs, reports=reports, on_event=progress)
            else:
                outcome = run_benches(loaded, open_now, options, reports=reports, on_event=progress)
    except Interrupted:
        raise KeyboardInterrupt from None
    except Confounded as exc:
        return render.confounded(exc.report)
    try:
        return _say_what_happened(req, outcome, stores[-1], is_plain)
    finally:
        outcome.close()


TABLE_ROWS = 200  # more sessions than this: the per-scenario pass rates instead of a row per check


def _say_what_happened(req: RunRequest, outcome, store, is_plain: bool) -> int:
    from benchtape import render

    for note in outcome.preflight.notes:
        print(f"note: {note}", file=sys.stderr)
    if outcome.control is not None:
        render.control_block(outcome.control)
    tally = outcome.tally
    if tally.total <= TABLE_ROWS:
        render.results_table(_labelled(outcome.results), is_plain, req.full)
    else:
        print(f"{tally.total} sessions: a row per check would not help; per scenario below (each session: `benchtape sessions --run RUN`, `benchtape show HANDLE`)")
    render.repeat_summary(tally.scenarios, is_plain, always=tally.total > TABLE_ROWS)
    for run in outcome.runs:
        _gauges(run)
    print(f"database: {store.path}")
    for run in outcome.runs:
        print(f"run {run.run_id} · grading {run.grading_id}" + (f" · eval run {run.name}" if run.name else ""))
        if req.report_dir:
            print(f"report: {req.report_dir / (run.run_id + '.json')} (streamed as it ran: {req.report_dir / (run.run_id + '.jsonl')})")
    if req.report_json:
        print(f"report: {req.report_json}")
    if req.report_junit:
        print(f"junit: {req.report_junit}")
    first = outcome.runs[0].run_id if outcome.runs else ""
    dbflag = f" --db {store.path}" if req.db else ""
    print(f"next: benchtape sessions --run {first}{dbflag}   ·   benchtape show latest{dbflag}   ·   benchtape query 'calls[].tool' --run {first}{dbflag}")
    errored = tally.statuses.get("error", 0)
    passed, failed = tally.passed, tally.total - tally.passed - errored
    counts = f"{passed} passed, {failed} failed" + (f", {errored} errored" if errored else "")  # as the report's summary counts them
    if req.demo:
        print(f"exit 0: {counts} — scenario outcomes, not a harness crash")
        return 0
    print(counts)
    return outcome.exit_code


def _labelled(results):
    """An Eval's results carry their run's name in front of the scenario's (read one at a time)."""
    for r in results:
        yield {**r, "scenario_id": f"{r['eval_run']} · {r['scenario_id']}"} if r.get("eval_run") else r


def _gauges(run) -> None:
    """`budget:` and `token_estimate:` are informational gauges: shown next to what was reported, never enforced."""
    bench = run.bench
    if bench.budget is None and bench.token_estimate is None:
        return
    t = run.spool.tally
    (cost, costed), (tokens, counted) = t.costs, t.tokens
    if bench.budget is not None:
        spent = f"${cost:.4f} reported by {costed} of {t.total} session(s)" if costed else "no session reported a cost (unknown, not zero)"
        print(f"budget ${bench.budget:g} (informational, not enforced): {spent}")
    if bench.token_estimate is not None:
        used = f"{tokens:,} tokens reported by {counted} of {t.total} session(s)" if counted else "no session reported tokens (unknown, not zero)"
        print(f"token estimate {bench.token_estimate:,} (informational, not enforced): {used}")


def _check_database_folder(db: Path | None) -> None:
    """A new database must be creatable where it goes (`demo` in a read-only folder): said before anything runs."""
    from benchtape.app.preflight import unwritable
    from benchtape.options import db_path

    path = db_path(db)
    # the store makes a database's folder (`.benchtape/` by default), so the folder only needs to be makeable
    why = None if path.exists() else unwritable(path.parent, folder=True)
    if why:
        raise BadInput(f"cannot create the database here: {why}", file=str(path), fix="run from a folder you can write to, or pass --db PATH (e.g. --db /tmp/benchtape.db)")


def _check_scenario_names(benches, names) -> None:
    if not names:
        return
    known = {s.name for b in benches for s in b.scenarios}
    for n in names:
        if n not in known:
            from benchtape.core.errors import closest

            near = closest(n, known)
            raise BadInput(f"--scenario {n!r} names no scenario", fix=f"did you mean {near!r}?" if near else f"scenarios: {', '.join(sorted(known))}")


@command()
def demo_cmd(
    db: Db = None,
    plain: Plain = False,
    report_json: Path | None = typer.Option(None, "--report-json", help="Write the JSON report here."),
) -> int:
    """Run the demo bench offline under the mock harness: no keys, no network, no spend.

    Example: benchtape demo --db /tmp/demo.db
    """
    from benchtape.app.api import demo_bench_path

    return execute(RunRequest(benches=[demo_bench_path()], db=db, report_json=report_json, plain=plain, demo=True))


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("demo")(demo_cmd)
