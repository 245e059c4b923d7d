"""The benchtape command line. Each command parses options, calls one library function, and
hands the result to one renderer. Bad input exits 2, blocked preflight 3, Ctrl-C 130."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from recorder.errors import BadInput, PreflightBlocked
from recorder.leaks import ReportLeak
from recorder.sandbox.staging import StagingFailed
from recorder.version import VERSION

app = typer.Typer(
    name="benchtape",
    help="Benchmark agentic coding tools; record every run as an append-only event log in SQLite; grade it many times.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

DB_HELP = "SQLite store (default .benchtape/benchtape.db, or $BENCHTAPE_DB)."
EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_INTERRUPTED = 2, 3, 130


def db_path(db: Optional[Path]) -> Path:
    from recorder.store import default_db_path

    return db or default_db_path()


def open_store(db: Optional[Path], must_exist: bool = False, readonly: bool = False):
    """The store at --db; `readonly` for commands that only read (they never create, change or
    migrate the file). Every way the path can be wrong is a BadInput from Store's open."""
    from recorder.store import Store

    return Store(db_path(db), readonly=readonly, create=not must_exist)


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body, turning user-facing failures into their exit codes."""
    try:
        code = fn()
    except BadInput as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except PreflightBlocked as exc:
        print("preflight: blocked — nothing was run, no spend", file=sys.stderr)
        for f in exc.findings:
            print(f"  ✗ {f}", file=sys.stderr)
        code = EXIT_BLOCKED
    except StagingFailed as exc:
        print(f"staging failed — nothing ran, no spend: {exc}", file=sys.stderr)
        code = EXIT_BLOCKED
    except ReportLeak as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print("interrupted: what was recorded stays recorded", file=sys.stderr)
        code = EXIT_INTERRUPTED
    raise typer.Exit(code)


def parse_params(values: Optional[List[str]]) -> dict[str, Any]:
    from recorder.spec.params import parse_cli_param

    return dict(parse_cli_param(v) for v in values or [])


# ---------------------------------------------------------------- run / demo


@app.command("run")
def run_cmd(
    benches: Optional[List[Path]] = typer.Argument(None, help="Bench files or folders (a folder runs every *.yaml and case dir in it); default madbench.yaml here."),
    harness: Optional[str] = typer.Option(None, "--harness", help="Override the bench's harness (mock, claude-code, codex)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model to run."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Run each scenario N times (flake detection)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Scenarios at once."),
    param: Optional[List[str]] = typer.Option(None, "--param", help="Override a declared param: k=v (repeatable)."),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help="Override the sandbox level: none, workspace, home, container."),
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes", help="Consent for `sandbox: none` (runs in your real directory)."),
    keep_sandbox: bool = typer.Option(False, "--keep-sandbox", help="Keep each session's sandbox for debugging."),
    scenario: Optional[List[str]] = typer.Option(None, "--scenario", help="Run only this scenario (repeatable)."),
    run: Optional[List[str]] = typer.Option(None, "--run", help="With an Eval file: run only this run entry (repeatable)."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Write the JSON report here."),
    report_dir: Optional[Path] = typer.Option(None, "--report-dir", help="Write a versioned report per invocation here, as it goes (with workspace snapshots)."),
    report_junit: Optional[Path] = typer.Option(None, "--report-junit", help="Write JUnit XML here (one testcase per scenario attempt), for CI."),
    plain: bool = typer.Option(False, "--plain", help="Append-only lines (implied when stderr is not a TTY or NO_COLOR is set)."),
) -> None:
    """Run benches (or an Eval file: one bench run per `runs:` entry) and grade every session as it finishes.

    Example: benchtape run fixtures-red/demo/bench.yaml --repeat 3 --report-json out.json
    """
    guarded(lambda: _run(benches, harness, model, db, repeat, concurrency, param, sandbox, allow_host_writes, keep_sandbox, scenario, report_json, report_dir, plain, report_junit=report_junit, eval_runs=run))


def _run(benches, harness, model, db, repeat, concurrency, param, sandbox, allow_host_writes, keep_sandbox, scenario, report_json, report_dir, plain, demo: bool = False, report_junit: Optional[Path] = None, eval_runs: Optional[List[str]] = None) -> int:
    from benchtape import render
    from benchtape.api import load_inputs, run_benches, run_eval
    from recorder.spec.bench import LEVELS
    from recorder.spec.audit import Confounded
    from recorder.runner import Interrupted, RunOptions

    if sandbox is not None and sandbox not in LEVELS:
        raise BadInput(f"--sandbox {sandbox!r} is not a level", fix="use one of none, workspace, home, container")
    ev, loaded = load_inputs(benches, parse_params(param))
    if eval_runs and ev is None:
        raise BadInput("--run selects runs of an Eval file, and no Eval file was named", fix="name an Eval file (bench: + runs:), or drop --run")
    if ev is not None:
        ev.select(eval_runs)  # unknown names are refused before anything runs
    options = RunOptions(
        harness=harness,
        model=model,
        repeat=repeat,
        concurrency=concurrency,
        sandbox=sandbox,
        allow_host_writes=allow_host_writes,
        keep_sandbox=keep_sandbox,
        argv=sys.argv[1:],
        scenarios=scenario or None,
        run_kind="demo" if demo else "run",
    )
    _check_scenario_names(loaded, scenario)
    store = open_store(db)
    is_plain = render.plain_wanted(plain)
    try:
        with render.Progress(is_plain) as progress:
            if ev is not None:
                outcome = run_eval(ev, store, options, selected=eval_runs, report_json=report_json, report_dir=report_dir, on_event=progress)
            else:
                outcome = run_benches(loaded, store, options, report_json=report_json, report_dir=report_dir, on_event=progress)
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
    if report_json:
        print(f"report: {report_json}")
    if report_dir:
        print(f"reports: {report_dir}")
    if report_junit:
        from replay.junit import junit_xml
        from replay.report import write_text_atomic

        write_text_atomic(report_junit, junit_xml(outcome.results))
        print(f"junit: {report_junit}")
    first = outcome.runs[0].run_id if outcome.runs else ""
    dbflag = f" --db {store.path}" if db else ""
    print(f"next: benchtape query 'calls[].tool' --run {first}{dbflag}   ·   benchtape sessions --run {first}{dbflag}")
    passed = len(outcome.results) - len(failed)
    if demo:
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


@app.command("demo")
def demo_cmd(
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    plain: bool = typer.Option(False, "--plain", help="Append-only lines."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Write the JSON report here."),
) -> None:
    """Run the demo bench offline under the mock harness: no keys, no network, no spend.

    Example: benchtape demo --db /tmp/demo.db
    """
    from benchtape.api import demo_bench_path

    guarded(lambda: _run([demo_bench_path()], None, None, db, 1, 4, None, None, False, False, None, report_json, None, plain, demo=True))


# ---------------------------------------------------------------- list / preflight


@app.command("list")
def list_cmd(
    benches: Optional[List[Path]] = typer.Argument(None, help="Bench files or folders (default: madbench.yaml here)."),
    param: Optional[List[str]] = typer.Option(None, "--param", help="k=v (repeatable)."),
) -> None:
    """Parse benches and print their scenarios and checks (proves it parses, not that it runs).

    Example: benchtape list fixtures-red/demo/bench.yaml
    """

    def body() -> int:
        from benchtape.api import load_inputs

        ev, loaded = load_inputs(benches, parse_params(param))
        names = [r.name for r in ev.runs] if ev else [None] * len(loaded)
        if ev is not None:
            print(f"{ev.path}  (Eval: {ev.description or 'no description'}; {len(ev.runs)} run(s) of {ev.bench_path})")
        for name, bench in zip(names, loaded):
            if name is not None:
                print(f"run {name}  params {ev.runs[names.index(name)].params}")
            print(f"{bench.path}  ({bench.description or 'no description'}; harness {bench.harness or 'mock'})")
            for sc in bench.scenarios:
                print(f"  {sc.name}  [sandbox {sc.sandbox.level}, timeout {sc.timeout:g}s{', testdata ' + str(sc.testdata) if sc.testdata else ''}]")
                for i, c in enumerate(sc.checks):
                    _print_check(c, f"checks[{i}]", 4)
        return 0

    guarded(body)


def _print_check(spec, path: str, indent: int) -> None:
    extra = f" {spec.value!r}" if spec.value is not None and not isinstance(spec.value, (dict, list)) else ""
    flags = " (readout)" if spec.readout else ""
    print(" " * indent + f"{path} {spec.type}{extra}{flags}")
    for j, child in enumerate(spec.checks):
        _print_check(child, f"checks[{j}]", indent + 2)


@app.command("preflight")
def preflight_cmd(
    benches: Optional[List[Path]] = typer.Argument(None, help="Bench files or folders (default: madbench.yaml here)."),
    harness: Optional[str] = typer.Option(None, "--harness"),
    sandbox: Optional[str] = typer.Option(None, "--sandbox"),
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes"),
    concurrency: int = typer.Option(4, "--concurrency", min=1),
    param: Optional[List[str]] = typer.Option(None, "--param"),
) -> None:
    """Could these benches run? Binaries, keys, testdata, check types, sandbox gates. Blocking → exit 3.

    Example: benchtape preflight fixtures-red/demo/bench.yaml --harness claude-code
    """

    def body() -> int:
        from benchtape.api import control_audit, load_inputs, preflight_all
        from recorder.spec.audit import Confounded
        from recorder.runner import RunOptions

        ev, loaded = load_inputs(benches, parse_params(param))
        pf = preflight_all(loaded, RunOptions(harness=harness, sandbox=sandbox, allow_host_writes=allow_host_writes, concurrency=concurrency), ev)
        for note in pf.notes:
            print(f"  · {note}")
        if not pf.ok:
            raise PreflightBlocked(pf.blocking)
        if ev is not None:
            try:
                _control_block(control_audit(ev))
            except Confounded as exc:
                return _confounded(exc.report)
        print(f"preflight: ok — {sum(len(b.scenarios) for b in loaded)} scenario(s) could run")
        return 0

    guarded(body)


@app.command("version")
def version_cmd() -> None:
    """Print benchtape's version.

    Example: benchtape version
    """
    print(f"benchtape {VERSION}")


def main() -> None:
    from benchtape import commands  # noqa: F401 - registers the other command groups

    app()


if __name__ == "__main__":
    main()
