"""Loading Eval files (madbench v0.23.0 §1.10): one bench, several runs of it that differ
in params, and an optional `control:` block that audits what the runs stage.

An Eval is recognised by content (`bench:` + `runs:`, no `scenarios:`), as madbench does.
Each run entry loads the bench with its params, so an undeclared param is refused by the
bench's own strictness. Every refusal names the Eval file, the line and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchtape.core.errors import BadInput, closest
from benchtape.core.results import Where
from benchtape.spec.bench import EVAL_KEYS, BenchSpec, EvalLevel, Finding, _Loader, is_eval_document, load_bench
from benchtape.spec.yamlsrc import LineDict, load_yaml_file, plain, read_source, shorten

MAX_RUNS = 1_000  # an Eval compares a handful of variants; each run loads (and keeps) the bench with its params
MAX_PLANNED = 100_000  # runs × scenarios: the sessions one Eval plans
RUN_KEYS = {"name", "params"}
CONTROL_KEYS = {"baseline", "varies"}
EVAL_HINTS = {
    "matrix": "an Eval has no cross product; write one `runs:` entry per combination",
    "variations": "an Eval has no cross product; write one `runs:` entry per combination",
    "scenarios": "scenarios belong in the bench file that `bench:` names",
    "name": "an Eval has no `name:`; use `description:`",
}


@dataclass
class EvalRun:
    name: str
    params: dict[str, Any]
    bench: BenchSpec
    where: Where


@dataclass
class ControlSpec:
    baseline: str
    varies: list[str]
    where: Where


@dataclass
class EvalSpec:
    path: Path
    description: str | None
    bench_path: Path
    runs: list[EvalRun]
    models: dict[str, Any] = field(default_factory=dict)
    metrics: Any = None
    control: ControlSpec | None = None
    not_built: list[Finding] = field(default_factory=list)

    def select(self, names: list[str] | None) -> list[EvalRun]:
        """The runs `--run NAME` picks (all when none named), in the Eval's order."""
        if not names:
            return list(self.runs)
        known = [r.name for r in self.runs]
        for n in names:
            if n not in known:
                near = closest(n, known)
                raise BadInput(f"--run {n!r} names no run of this Eval", file=str(self.path), fix=f"did you mean {near!r}?" if near else f"runs: {', '.join(known)}")
        return [r for r in self.runs if r.name in names]


def is_eval_file(path: Path | str) -> bool:
    """Is this path an Eval file (by content)? Folders and unreadable files are not."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        return is_eval_document(load_yaml_file(p))
    except BadInput:
        return False  # the bench loader reports it with its own words


def load_eval(path: Path | str, params: dict[str, Any] | None = None) -> EvalSpec:
    """Load an Eval file and every run's bench (with `params` from the command line under each run's own)."""
    path = Path(path)
    doc = load_yaml_file(path)
    ld = _Loader(path)
    if not is_eval_document(doc):
        raise BadInput("not an Eval file (an Eval has `bench:` and `runs:`, and no `scenarios:`)", file=str(path))
    top = ld.strict(doc, EVAL_KEYS, "the Eval (top level)", None, EVAL_HINTS)
    bench_node = top.get("bench")
    if bench_node is None or bench_node == "":
        raise ld.err("the Eval has no `bench:`", top, "bench", "name the bench file to run, relative to this Eval file: `bench: madbench.yaml`")
    bench_path = ld.path(bench_node, top, "bench")
    if bench_path.is_dir() and not (bench_path / "assert.yaml").is_file():
        raise ld.err(f"`bench:` {shorten(bench_node, 300)} is a folder without assert.yaml", top, "bench", "name the bench file (or a case folder holding assert.yaml)")
    if not bench_path.is_dir():  # a case folder is read by load_bench; anything else must be a readable bench file
        try:
            read_source(bench_path)
        except BadInput as exc:
            raise ld.err(f"`bench:` {shorten(bench_node, 300)} {exc.what}", top, "bench", exc.fix) from None
    if bench_path.is_file() and is_eval_document(load_yaml_file(bench_path)):
        raise ld.err(f"`bench:` {bench_node} is itself an Eval file; an Eval cannot run another Eval", top, "bench", "point `bench:` at the bench file that Eval names")

    runs_node = top.get("runs")
    if not isinstance(runs_node, list) or not runs_node:
        raise ld.err("`runs:` must be a non-empty list", top, "runs", "add at least one run, e.g. `runs: [{}]` (the bench as-is) or `- {name: a, params: {k: v}}`")
    from benchtape.spec.judge_config import load_models

    level = EvalLevel(models=load_models(ld, top.get("models"), top), metrics=ld.load_metrics(top.get("metrics"), top))
    if len(runs_node) > MAX_RUNS:
        raise ld.err(f"`runs:` lists {len(runs_node):,} runs, more than the {MAX_RUNS:,} one Eval may hold (each loads the bench with its params)", top, "runs", "split them into several Eval files")
    incoming = dict(params or {})
    runs: list[EvalRun] = []
    seen: dict[str, EvalRun] = {}
    for i, node in enumerate(runs_node):
        node = ld.strict(ld.mapping(node, f"run #{i + 1}", runs_node), RUN_KEYS, f"run #{i + 1}", None, {"param": "the key is `params:`", "vars": "a run sets `params:`"})
        name = node.get("name", f"run-{i + 1}")
        if not isinstance(name, str) or not name.strip():
            raise ld.err(f"run #{i + 1}: `name:` must be a non-empty string", node, "name", "e.g. `- {name: terse, params: {notes: terse}}`")
        run_params = ld.mapping(node.get("params"), f"run {name!r} `params:`", node, "params")
        where = ld.where(node)
        if name in seen:
            raise BadInput(
                f"two runs resolve to the same name {name!r} (a run without `name:` is run-N)",
                file=str(path),
                line=where.line,
                fix=f"give each run a unique `name:` (the first is at line {seen[name].where.line})",
            )
        try:
            bench = load_bench(bench_path, {**incoming, **plain(run_params)}, level)
        except BadInput as exc:
            raise _in_run(exc, path, name, run_params, node) from None
        if len(runs_node) * len(bench.scenarios) > MAX_PLANNED:
            raise ld.err(f"{len(runs_node):,} runs of a bench of {len(bench.scenarios):,} scenarios are {len(runs_node) * len(bench.scenarios):,} sessions, more than the {MAX_PLANNED:,} one Eval may plan", top, "runs", "split the runs into several Eval files, or the bench into smaller ones")
        run = EvalRun(name=name, params=plain(run_params), bench=bench, where=where)
        seen[name] = run
        runs.append(run)

    control = _control(ld, top, [r.name for r in runs])
    return EvalSpec(
        path=path.resolve(),
        description=top.get("description"),
        bench_path=bench_path,
        runs=runs,
        models=plain(top.get("models") or {}),
        metrics=level.metrics,
        control=control,
    )


def _in_run(exc: BadInput, path: Path, name: str, run_params: Any, node: LineDict) -> BadInput:
    """A bench refusal caused by a run's params is shown at the run's line in the Eval."""
    undeclared = next((k for k in run_params if f"param {k!r} is not declared" in exc.what), None) if isinstance(run_params, dict) else None
    if undeclared is not None:
        line = run_params.line_of(undeclared) if isinstance(run_params, LineDict) else node.line
        return BadInput(f"run {name!r}: {exc.what} ({exc.file})", file=str(path), line=line, fix=f"declare {undeclared!r} under the bench's `params:`, or drop it from this run")
    where = f"{exc.file}:{exc.line}" if exc.line else (exc.file or "the bench")
    return BadInput(f"run {name!r}: the bench does not load with this run's params: {exc.what} ({where})", file=str(path), line=node.line, fix=exc.fix)


def _control(ld: _Loader, top: LineDict, names: list[str]) -> ControlSpec | None:
    if "control" not in top:
        return None
    block = ld.strict(ld.mapping(top["control"], "`control:`", top, "control"), CONTROL_KEYS, "`control:`", None, {"allow": "the v0.23.0 key is `varies:`", "guard_changes": "the v0.23.0 block is `control:`"})
    baseline = block.get("baseline", names[0])
    if baseline not in names:
        near = closest(str(baseline), names)
        raise ld.err(f"control.baseline {baseline!r} names no run", block, "baseline", f"did you mean {near!r}?" if near else f"runs: {', '.join(names)}")
    varies = block.get("varies") or []
    if isinstance(varies, str):
        varies = [varies]
    if not isinstance(varies, list):
        raise ld.err("control.varies must be a list of patterns", block, "varies", "e.g. `varies: [testdata/CLAUDE.md, harness_config.system_prompt]`")
    for pattern in varies:
        problem = varies_problem(pattern)
        if problem:
            raise ld.err(f"control.varies: bad pattern {pattern!r}: {problem}", block, "varies", "patterns name staged inputs relative to their root, e.g. `testdata/CLAUDE.md`, `agent_env/**`, `harness_config.args[2]`")
    return ControlSpec(baseline=baseline, varies=[str(v) for v in varies], where=ld.where(block))


def varies_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str) or not pattern.strip():
        return "empty"
    if pattern.startswith("/") or PurePosixPath(pattern).is_absolute() or (len(pattern) > 1 and pattern[1] == ":"):
        return "absolute (patterns are relative to the staged root)"
    if ".." in PurePosixPath(pattern).parts:
        return "escapes the staged root with `..`"
    return None
