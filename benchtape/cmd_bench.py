"""`benchtape list` (parse only, as the spec says) and `benchtape preflight` (could it run)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from benchtape.core.errors import PreflightBlocked
from benchtape.guard import command
from benchtape.options import Benches, EnvFile, NoEnv, Params, parse_params

if TYPE_CHECKING:  # imported where used: `benchtape --help` loads no bench code
    from benchtape.app.runs import EvalRun
    from benchtape.core.results import CheckSpec


@command()
def list_cmd(
    benches: Benches = None,
    param: Params = None,
) -> int:
    """Parse benches and print their scenarios and checks (proves it parses, not that it runs).
    A bench that does not load exits 1, as madbench's `list` does (every other command says 2).

    Example: benchtape list fixtures-red/demo/bench.yaml
    """

    from benchtape.app.api import load_inputs
    from benchtape.app.preflight import arg_warnings
    from benchtape.core.errors import BadInput, ExitCode

    try:
        ev, loaded = load_inputs(benches, parse_params(param))
    except BadInput as exc:  # madbench: `list` exits 1 on a load error; a script branching on it keeps working
        print(f"error: {exc.render()}", file=sys.stderr)
        return ExitCode.FAILED
    runs: list[EvalRun | None] = list(ev.runs) if ev else [None] * len(loaded)
    if ev is not None:
        print(f"{ev.path}  (Eval: {ev.description or 'no description'}; {len(ev.runs)} run(s) of {ev.bench_path})")
    for run, bench in zip(runs, loaded):
        if run is not None:
            print(f"run {run.name}  params {run.params}")
        print(f"{bench.path}  ({bench.description or 'no description'}; harness {bench.harness or 'mock'})")
        for sc in bench.scenarios:
            print(f"  {sc.name}  [sandbox {sc.sandbox.level}, timeout {sc.timeout:g}s{', testdata ' + str(sc.testdata) if sc.testdata else ''}]")
            for i, c in enumerate(sc.checks):
                _print_check(c, f"checks[{i}]", 4)
        for warning in arg_warnings(bench):  # on stderr: the listing stays madbench's
            print(warning, file=sys.stderr)
    return 0


def _print_check(spec: CheckSpec, path: str, indent: int) -> None:
    extra = f" {spec.value!r}" if spec.value is not None and not isinstance(spec.value, (dict, list)) else ""
    flags = " (readout)" if spec.readout else ""
    print(" " * indent + f"{path} {spec.type}{extra}{flags}")
    for j, child in enumerate(spec.checks):
        _print_check(child, f"checks[{j}]", indent + 2)


@command()
def preflight_cmd(
    benches: Benches = None,
    harness: str | None = typer.Option(None, "--harness"),
    model: str | None = typer.Option(None, "--model", help="The model the run will name (`scripted`: what a run against benchtape's scripted model needs)."),
    sandbox: str | None = typer.Option(None, "--sandbox"),
    allow_host_writes: bool = typer.Option(False, "--allow-host-writes"),
    allow_network: bool = typer.Option(False, "--allow-network", help="Consent for a container `network:` other than none."),
    concurrency: int = typer.Option(4, "--concurrency", min=1),
    param: Params = None,
    env_file: EnvFile = None,
    no_env: NoEnv = False,
) -> int:
    """Could these benches run? Binaries, keys, testdata, check types, sandbox gates. Blocking → exit 3.

    Example: benchtape preflight fixtures-red/demo/bench.yaml --harness claude-code --model scripted
    """

    from benchtape import render
    from benchtape.app import envfile
    from benchtape.app.api import control_audit, load_inputs, refuse_uncopyable
    from benchtape.app.preflight import preflight_all
    from benchtape.app.runs import Confounded, RunOptions, checked_level

    envfile.load(env_file, no_env)  # the keys a run would have, from ./.env as for `run`
    checked_level(sandbox)
    ev, loaded = load_inputs(benches, parse_params(param))
    options = RunOptions(harness=harness, sandbox=sandbox, allow_host_writes=allow_host_writes, allow_network=allow_network, concurrency=concurrency, model=model)
    pf = preflight_all(loaded, options, ev)
    for note in pf.notes:
        print(f"  · {note}")
    if not pf.ok:
        raise PreflightBlocked(pf.blocking)
    refuse_uncopyable(loaded, options)  # as `run` does, before the control audit reads (and a FIFO blocks) the testdata
    if ev is not None:
        try:
            render.control_block(control_audit(ev))
        except Confounded as exc:
            return render.confounded(exc.report)
    print(f"preflight: ok — {sum(len(b.scenarios) for b in loaded)} scenario(s) could run")
    return 0


def register(app: typer.Typer) -> None:
    app.command("list")(list_cmd)
    app.command("preflight")(preflight_cmd)
