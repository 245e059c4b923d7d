"""The check registry: one decorated builder per type, exact and prefix dispatch, aliases.

A check is registered once, with everything `benchtape checks`, `docs/checks.md` and
preflight need to know about it; constructing it validates its arguments, so a bad
check is refused before anything runs, never discovered mid-run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping

import orjson

from benchtape.checks.output_transforms import SessionTransforms, check_view, transforms_in
from benchtape.core.command_runner import CommandRunner, Interpreter, Unavailable, local_interpreter, run_local
from benchtape.core.errors import closest
from benchtape.core.judgments import Judge
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result
from benchtape.spec.transform_source import TransformRefused, TransformValue, transform_of

# Bumped whenever any check's behaviour changes: part of every check's identity.
CATALOG_VERSION = "4"


class CheckConfigError(Exception):
    """A check refused at construction (bad arguments, unknown or unsupported type)."""




class CheckContext:
    """What a check may read besides the Session: never the store, a sandbox or an adapter.

    `work_dir` is the session's final workspace, restored from its snapshot; when it is given
    as `workspace` (a callable), it is restored only when a check first asks, and a workspace
    that cannot be provided raises `Unavailable` there, so only the checks that read it ERROR.
    Exec-style checks run commands through `run_command` and find their runtime through
    `interpreter`, both provided by where grading runs (the host, or a container). AI checks
    ask `judge` (None: no judge configured, and they ERROR saying so); `model:current` reads
    the live model catalog through `catalog`; `runtimes` holds the scenario's runtime pins
    (`defaults.bun:` → {"bun": "1.1"}). `transforms` runs the session's output transforms
    where grading runs, all at once (None: a check with a `transform:` runs its own through
    `run_command`). `peers` grades a check on each session of a multi-provider scenario.
    """

    __slots__ = ("_work_dir", "_workspace", "bench_dir", "vars", "run_command", "interpreter", "control", "judge", "catalog", "runtimes", "transforms", "peers")

    def __init__(
        self,
        work_dir: Path | None = None,
        bench_dir: Path | None = None,
        vars: Mapping[str, Any] | None = None,
        run_command: CommandRunner = run_local,
        interpreter: Interpreter = local_interpreter,
        control: bool = False,
        workspace: Callable[[], Path | None] | None = None,
        judge: Judge | None = None,
        catalog: ModelCatalog | None = None,
        runtimes: Mapping[str, str] | None = None,
        transforms: SessionTransforms | None = None,
        peers: Mapping[str, PeerGrader] | None = None,
    ) -> None:
        self._work_dir = work_dir
        self._workspace = workspace
        self.bench_dir = bench_dir
        self.vars: Mapping[str, Any] = vars if vars is not None else {}
        self.run_command = run_command
        self.interpreter = interpreter
        self.control = control  # grading the negative control (latency/cost are not applicable)
        self.judge = judge  # asks a judge model (benchtape.replay.grading_judges builds it per grading)
        self.catalog = catalog  # provider id (None: every one) -> the models it lists now
        self.runtimes: Mapping[str, str] = runtimes if runtimes is not None else {}  # runtime pins: {"bun": "1.1.30"}
        self.transforms = transforms
        # A multi-provider scenario's sessions, label → a grader of one check on that label's
        # session (this one's included), in the scenario's `providers:` order: what
        # select-best, max-score and compare compare. None: one session, graded alone.
        self.peers: Mapping[str, PeerGrader] | None = peers

    @property
    def work_dir(self) -> Path | None:
        if self._workspace is not None:
            return self._workspace()
        return self._work_dir


PeerGrader = Callable[["Check"], Result]
"""A check evaluated on one provider's session, with that session's own workspace and context."""

ModelCatalog = Callable[["str | None"], "list[dict[str, Any]]"]
"""The live model catalog: a provider id (None: every provider configured) → the models its
listing answers with now, each `{"id", "provider", "created"?}`. Raises when unreachable."""


Evaluator = Callable[[Session, CheckContext], Result]
Builder = Callable[[CheckSpec], Evaluator]


@dataclass(frozen=True)
class PreflightContext:
    """What preflight knows of where a check will run: the bench's folder, the environment,
    and the scenario's runtime pins."""

    bench_dir: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    runtimes: Mapping[str, str] = field(default_factory=dict)
    interpreter: Interpreter | None = None  # where code checks will run, when not this host (a container image)
    where: str = "this machine"  # named in findings


# Before any run: (spec, where it will run) -> blocking problems, each naming the fix (a
# missing runtime with its install command, a missing grader file, a source that does not
# compile). Checks whose requirements only show at grading register one.
Preflighter = Callable[[CheckSpec, PreflightContext], "list[str]"]


@dataclass(frozen=True)
class CheckInfo:
    type: str
    family: str
    summary: str
    reads: str
    builder: Builder
    args: Mapping[str, str] = field(default_factory=dict)  # name -> meaning (with default)
    example: str = ""
    errors: tuple[str, ...] = ()
    kind: str = "Logic"  # Logic | AI | Code | Service
    prefix: bool = False
    control_na: bool = False  # not applicable under the negative control
    reads_workspace: bool = False
    preflight: Preflighter | None = None
    accepts: tuple[str, ...] = ()  # args read but not declared on a line of their own (aliases, inputs a shared reader takes)
    open_args: bool = False  # args handed on to the user's own grader (the envelope's assertion.args): any key may mean something

    @cached_property
    def arg_names(self) -> frozenset[str] | None:
        """Every `args:` key this type reads (None: any key, handed on to a grader of the
        user's). The declarations name them as `args.X`, or bare in the families whose args are
        their whole vocabulary (session, environment); `accepts` adds the others it reads
        (a bound's other spellings, `min` for `gte`)."""
        if self.open_args:
            return None
        names = {k[len("args.") :] if k.startswith("args.") else k for k in self.args if k not in _NOT_ARGS}
        return frozenset(names | set(self.accepts))

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "family": self.family,
            "kind": self.kind,
            "summary": self.summary,
            "reads": self.reads,
            "args": dict(self.args),
            "example": self.example,
            "errors": list(self.errors),
            "prefix": self.prefix,
            "reads_workspace": self.reads_workspace,
        }


# The fields of a check beside its `args:` that some types' declarations also describe.
_NOT_ARGS = frozenset({"value", "threshold", "checks", "config", "inline", "weight (on a child)", "metric", "transform"})

REGISTRY: dict[str, CheckInfo] = {}
ALIASES: dict[str, str] = {}
# Types the spec names that this version refuses, with what is missing.
REFUSED: dict[str, str] = {}


def register(
    type: str,
    *,
    family: str,
    summary: str,
    reads: str,
    args: Mapping[str, str] | None = None,
    example: str = "",
    errors: tuple[str, ...] | list[str] = (),
    kind: str = "Logic",
    prefix: bool = False,
    control_na: bool = False,
    reads_workspace: bool = False,
    preflight: Preflighter | None = None,
    accepts: tuple[str, ...] = (),
    open_args: bool = False,
) -> Callable[[Builder], Builder]:
    """Register a check builder: `builder(spec) -> evaluate(session, ctx) -> Result`."""

    def deco(builder: Builder) -> Builder:
        if type in REGISTRY:
            raise RuntimeError(f"check type {type!r} registered twice")
        REGISTRY[type] = CheckInfo(
            type=type,
            family=family,
            summary=summary,
            reads=reads,
            builder=builder,
            args=dict(args or {}),
            example=example,
            errors=tuple(errors),
            kind=kind,
            prefix=prefix,
            control_na=control_na,
            reads_workspace=reads_workspace,
            preflight=preflight,
            accepts=tuple(accepts),
            open_args=open_args,
        )
        return builder

    return deco


def alias(spelling: str, canonical: str) -> None:
    ALIASES[spelling] = canonical


def refuse(type: str, why: str) -> None:
    REFUSED[type] = why


def canonical_type(name: str) -> str:
    from benchtape.checks import _index

    return ALIASES.get(name) or _index.ALIASES.get(name, name)


def lookup(name: str) -> CheckInfo:
    """Exact match, else the longest registered prefix; unknown types name the closest."""
    name = canonical_type(name)
    _load_for(name)
    if name in REGISTRY:
        return REGISTRY[name]
    if name in REFUSED:
        raise CheckConfigError(f'check type "{name}" is not supported in this version of benchtape: {REFUSED[name]}')
    for pfx in sorted((t for t, i in REGISTRY.items() if i.prefix), key=len, reverse=True):
        if name.startswith(pfx + ":"):
            return REGISTRY[pfx]
    for pfx in sorted(REFUSED, key=len, reverse=True):
        if name.startswith(pfx + ":"):
            raise CheckConfigError(f'check type "{name}" is not supported in this version of benchtape: {REFUSED[pfx]}')
    _load_catalog()  # unknown: the suggestion looks over every type
    near = closest(name, list(REGISTRY) + list(ALIASES))
    hint = f' (did you mean "{near}"?)' if near else ""
    raise CheckConfigError(f'unknown check type "{name}"{hint}')


def spec_hash(spec: CheckSpec) -> str:
    """A check's identity: its canonical spec plus the catalog version."""
    canon = orjson.dumps({"spec": spec.to_dict(), "catalog": CATALOG_VERSION}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canon).hexdigest()


@dataclass
class Check:
    """A configured check: its spec, its registration and its evaluator."""

    spec: CheckSpec
    info: CheckInfo
    evaluator: Evaluator

    @property
    def type(self) -> str:
        return self.spec.type

    @property
    def metric(self) -> str:
        return self.spec.metric or self.spec.type

    @property
    def readout(self) -> bool:
        return self.spec.readout

    @property
    def identity(self) -> str:
        return spec_hash(self.spec)

    @cached_property
    def transforms(self) -> tuple[TransformValue, ...]:
        """The output transforms in this check and its children (run together per session)."""
        return tuple(transforms_in(self.spec))

    def evaluate(self, session: Session, ctx: CheckContext) -> Result:
        """Run the check; an exception inside it is an ERROR verdict, never a crash."""
        try:
            if not session.records_calls and reads_calls(self.info.reads):
                return Result.not_applicable(f"{self.type}: the {session.harness or 'harness'} session holds no tool calls (its harness could not see them; give the command harness a `transcript:` to read)")
            if self.spec.transform is not None:
                session = check_view(session, self.spec.transform, ctx, self.type)
            result = self.evaluator(session, ctx)
        except Unavailable as exc:  # what it reads could not be provided: one wording per cause
            return Result.error(str(exc), {"unavailable": exc.cause})
        except CheckConfigError as exc:
            return Result.error(str(exc))
        except Exception as exc:  # noqa: BLE001
            return Result.error(f"{self.type}: {type(exc).__name__}: {exc}")
        if not isinstance(result, Result):
            return Result.error(f"{self.type}: check returned {type(result).__name__}, not a Result")
        return result


CALL_READS = ("session.calls", "session.invocations", "tool calls", "session.subagents", "session.skills", "session.turns")


# A check whose registration reads only these needs nothing of a session but its final output,
# its prompt, and the run's reported cost and latency (with the status every grading reads), all
# folded from rows that are not BULK_KINDS: a regrade of checks that all do reads sessions
# without their calls (benchtape.core.model.BULK_KINDS; tests/replay/test_regrade_output_reads.py
# compares these parts of partial and whole sessions on every real transcript).
OUTPUT_READS = frozenset({"final_output", "final_output and the prompt", "final_output, session.prompt", "metrics.cost_usd", "metrics.latency_ms"})


def reads_output_only(reads: str) -> bool:
    """Whether a check (its registration's `reads`) reads only the final output and the prompt,
    or the run's reported cost or latency."""
    return reads in OUTPUT_READS


def reads_calls(reads: str) -> bool:
    """Whether a check reads what a harness blind to the agent's tool calls cannot record (its
    registration's `reads`): under such a session it does not apply, never a FAIL."""
    return any(part in reads for part in CALL_READS)


def build(spec: CheckSpec) -> Check:
    """Construct a check, validating its arguments; raises CheckConfigError when refused."""
    info = lookup(spec.type)
    canonical = canonical_type(spec.type)
    if canonical != spec.type:
        spec = _respell(spec, canonical)
    if spec.transform is not None:
        try:
            transform_of(spec.transform)
        except TransformRefused as exc:
            raise CheckConfigError(f"{spec.type}: {exc}: {exc.fix}") from None
    try:
        evaluator = info.builder(spec)
    except CheckConfigError:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise CheckConfigError(f"{spec.type}: {exc}") from exc
    return Check(spec=spec, info=info, evaluator=evaluator)


def preflight_problems(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """Construct the check (children too), then ask each type's preflight: a refusal or a
    missing requirement is a blocking finding, found before anything runs or is spent."""
    try:
        build(spec)
    except CheckConfigError as exc:
        return [str(exc)]
    out: list[str] = []
    stack = [spec]
    while stack:
        s = stack.pop(0)
        out.extend(_grader_file(s, pf))
        info = lookup(s.type)
        if info.preflight is not None:
            out.extend(info.preflight(s, pf))
        stack.extend(s.checks)
    return out


def unknown_args(spec: CheckSpec) -> list[str]:
    """The `args:` keys of this check (not its children) that its type never reads: madbench
    takes args as an open map, so a typo (`gtee: 2`) is no error there and the check grades
    with its default, a verdict nobody asked for. Said before any spend, never refused: each
    finding names the key, the closest known one and the type's arguments."""
    try:
        known = lookup(spec.type).arg_names
    except CheckConfigError:
        return []  # an unknown type: refused on its own, with its own fix
    if known is None or not isinstance(spec.args, Mapping):
        return []
    out = []
    for key in spec.args:
        if key in known:
            continue
        near = closest(str(key), known)
        hint = f' (did you mean "{near}"?)' if near else ""
        listed = f"its arguments: {', '.join(sorted(known))}" if known else "it reads no args"
        out.append(f"{spec.type}: args.{key} is not an argument of this check, so it is ignored{hint}; {listed}")
    return out


def _grader_file(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """A `file://` grader that is not there: madbench's preflight block (`grader ts: stat …`),
    found before any spend (the loader resolved it against the bench file's folder)."""
    value = spec.value
    if not isinstance(value, str) or not value.startswith("file://") or not value[len("file://") :]:
        return []
    path = Path(value[len("file://") :])
    if not path.is_absolute() and pf.bench_dir is not None:
        path = pf.bench_dir / path
    if path.is_file():
        return []
    why = "is a folder, not a file" if path.is_dir() else "no such file or directory"
    return [f"grader {spec.type}: stat {path}: {why} (a file:// grader is relative to the bench file)"]


def _respell(spec: CheckSpec, canonical: str) -> CheckSpec:
    from dataclasses import replace

    return replace(spec, type=canonical)


# ---------------------------------------------------------------- catalog loading

_loaded = False


def _load_for(name: str) -> None:
    """Import only the family module that registers `name` (a canonical type), as the
    generated index (checks/_index.py) says; the whole catalog when the index does not know
    it. The longest matching prefix is the index's, so a partly loaded registry answers as
    the whole one does."""
    if _loaded:
        return
    from benchtape.checks import _index

    module = _index.TYPES.get(name) or _index.REFUSED.get(name)
    if module is None:
        prefixes = [p for p in _index.PREFIXES if name.startswith(p + ":")]
        if prefixes:
            module = _index.PREFIXES[max(prefixes, key=len)]
    if module is None:
        _load_catalog()
        return
    import importlib

    importlib.import_module(f"benchtape.checks.{module}")


def _load_catalog() -> None:
    """Import every family module once, so their decorators fill the registry."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    import benchtape.checks as checks

    for mod in pkgutil.iter_modules(checks.__path__):
        if mod.name not in ("registry",) and not mod.name.startswith("_"):
            importlib.import_module(f"benchtape.checks.{mod.name}")


def catalog() -> dict[str, CheckInfo]:
    _load_catalog()
    return dict(REGISTRY)
