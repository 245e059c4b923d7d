"""`benchtape run` and `benchtape demo`: preflight, record every session, grade each as it
finishes, and say what happened (tables, gauges, where the reports went)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import typer

from benchtape.cli import guarded
from benchtape.options import Benches, Db, Params, Plain, open_store, parse_params
from recorder.errors import BadInput

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
    demo: bool = False


def run_cmd(
    benches: Benches = None,
    harness: Optional[str] = typer.Option(None, "--harness", help="Override the bench's harness (mock, claude-code, codex)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model to run."),
    db: Db = None,
    repeat: int = typer.Option(1, "--repeat", min=1, help="Run each scenario N times (flake detection)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Scenarios at once."),
    param: Params = None,
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help="Override the sandbox level: none, workspace, home, container."),
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes", help="Consent for `sandbox: none` (runs in your real directory)."),
    allow_network: bool = typer.Option(False, "--allow-network", help="Consent for a container `network:` other than none (host, bridge, …)."),
    keep_sandbox: bool = typer.Option(False, "--keep-sandbox", help="Keep each session's sandbox for debugging."),
    scenario: Optional[List[str]] = typer.Option(None, "--scenario", help="Run only this scenario (repeatable)."),
    run: Optional[List[str]] = typer.Option(None, "--run", help="With an Eval file: run only this run entry (repeatable)."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Write the JSON report here."),
    report_dir: Optional[Path] = typer.Option(None, "--report-dir", help="Write a versioned report per invocation here, as it goes (with workspace snapshots)."),
    report_junit: Optional[Path] = typer.Option(None, "--report-junit", help="Write JUnit XML here (one testcase per scenario attempt), for CI."),
    plain: Plain = False,
) -> None:
    """Run benches (or an Eval file: one bench run per `runs:` entry) and grade every session as it finishes.

    Example: benchtape run fixtures-red/demo/bench.yaml --repeat 3 --report-json out.json
    """
    request = RunRequest(
        benches=benches,
        harness=harness,
        model=model,
        db=db,
        repeat=repeat,
        concurrency=concurrency,
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
    )
    guarded(lambda: execute(request, param))


def execute(req: RunRequest, param: Optional[List[str]] = None) -> int:
    from benchtape import render
    from benchtape.api import load_inputs, run_benches, run_eval
    from recorder.runner import Interrupted, RunOptions
    from recorder.sandbox.levels import LEVELS
    from recorder.spec.audit import Confounded

    if req.sandbox is not None and req.sandbox not in LEVELS:
        raise BadInput(f"--sandbox {req.sandbox!r} is not a level", fix="use one of none, workspace, home, container")
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
    )
    _check_scenario_names(loaded, req.scenarios)
    from recorder.limits import output_limits

    output_limits()  # a bad BENCHTAPE_MAX_OUTPUT/MAX_LINE is bad input before the store is touched
    store = open_store(req.db)
    is_plain = render.plain_wanted(req.plain)
    try:
        with render.Progress(is_plain) as progress:
            if ev is not None:
                outcome = run_eval(ev, store, options, selected=req.eval_runs, report_json=req.report_json, report_dir=req.report_dir, on_event=progress)
            else:
                outcome = run_benches(loaded, store, options, report_json=req.report_json, report_dir=req.report_dir, on_event=progress)
    except Interrupted:
        raise KeyboardInterrupt from None
    except Confounded as exc:
        return _confounded(exc.report)
    for note in outcome.preflight.notes:
        print(f"note: {note}", file=sys.stderr)
    if outcome.control is not None:
        _control_block(outcome.control)
    labelled = _labelled(outcome.results)
    render.results_table(labelled, is_plain)
    render.repeat_summary(labelled, is_plain)
    for run in outcome.runs:
        _gauges(run)
    failed = [r for r in outcome.results if r["status"] != "pass"]
    print(f"database: {store.path}")
    for run in outcome.runs:
        print(f"run {run.run_id} · grading {run.grading_id}" + (f" · eval run {run.name}" if run.name else ""))
    if req.report_json:
        print(f"report: {req.report_json}")
    if req.report_dir:
        print(f"reports: {req.report_dir}")
    if req.report_junit:
        from replay.junit import junit_xml
        from replay.report import write_text_atomic

        write_text_atomic(req.report_junit, junit_xml(outcome.results))
        print(f"junit: {req.report_junit}")
    first = outcome.runs[0].run_id if outcome.runs else ""
    dbflag = f" --db {store.path}" if req.db else ""
    print(f"next: benchtape query 'calls[].tool' --run {first}{dbflag}   ·   benchtape sessions --run {first}{dbflag}")
    passed = len(outcome.results) - len(failed)
    if req.demo:
        print(f"exit 0: {passed} passed, {len(failed)} failed — scenario outcomes, not a harness crash")
        return 0
    print(f"{passed} passed, {len(failed)} failed")
    return outcome.exit_code


def _labelled(results: list) -> list:
    """An Eval's results carry their run's name in front of the scenario's."""
    return [{**r, "scenario_id": f"{r['eval_run']} · {r['scenario_id']}"} if r.get("eval_run") else r for r in results]


def _control_block(report: dict) -> None:
    from recorder.spec.audit import render_lines

    print("\n".join(render_lines(report)))


def _confounded(report: dict) -> int:
    from recorder.spec.audit import confounded_lines

    _control_block(report)
    print("\n".join(confounded_lines(report)), file=sys.stderr)
    return 1


def _gauges(run) -> None:
    """`budget:` and `token_estimate:` are informational gauges: shown next to what was reported, never enforced."""
    bench = run.bench
    if bench.budget is None and bench.token_estimate is None:
        return
    metrics = [r["session"]["metrics"] for r in run.results]
    costs = [m["cost_usd"] for m in metrics if m.get("cost_usd") is not None]
    tokens = [m["tokens"] for m in metrics if m.get("tokens") is not None]
    if bench.budget is not None:
        spent = f"${sum(costs):.4f} reported by {len(costs)} of {len(metrics)} session(s)" if costs else "no session reported a cost (unknown, not zero)"
        print(f"budget ${bench.budget:g} (informational, not enforced): {spent}")
    if bench.token_estimate is not None:
        used = f"{sum(tokens):,} tokens reported by {len(tokens)} of {len(metrics)} session(s)" if tokens else "no session reported tokens (unknown, not zero)"
        print(f"token estimate {bench.token_estimate:,} (informational, not enforced): {used}")


def _check_scenario_names(benches, names) -> None:
    if not names:
        return
    known = {s.name for b in benches for s in b.scenarios}
    for n in names:
        if n not in known:
            from recorder.errors import closest

            near = closest(n, known)
            raise BadInput(f"--scenario {n!r} names no scenario", fix=f"did you mean {near!r}?" if near else f"scenarios: {', '.join(sorted(known))}")


def demo_cmd(
    db: Db = None,
    plain: Plain = False,
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Write the JSON report here."),
) -> None:
    """Run the demo bench offline under the mock harness: no keys, no network, no spend.

    Example: benchtape demo --db /tmp/demo.db
    """
    from benchtape.api import demo_bench_path

    guarded(lambda: execute(RunRequest(benches=[demo_bench_path()], db=db, report_json=report_json, plain=plain, demo=True)))


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("demo")(demo_cmd)
