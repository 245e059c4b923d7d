"""Loading bench files (madbench v0.23.0 form): strict keys at every level, aliases made
canonical, params filled, `defaultScenario` merged, paths resolved against the bench
file's directory, values validated. Every refusal names the file, the line and the fix.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from benchtape.core.errors import BadInput, closest
from benchtape.core.errors import type_name as _type_name
from benchtape.core.results import CheckSpec, Where
from benchtape.spec.judge_config import JUDGE_TYPE_NAMES, JudgesConfig, ProviderSpec, check_judge_references, load_judges, load_models
from benchtape.spec.params import effective_params, substitute
from benchtape.spec.roots import ALLOW_KEY, outside_fix, real, within
from benchtape.spec.script import STEP_KEYS, STEP_KINDS, TOOL_INPUTS, wide_integer  # one step vocabulary: the mock agent and the scripted model play the same steps
from benchtape.spec.transform_source import TransformRefused, transform_of
from benchtape.spec.units import duration_example, parse_duration, unitless
from benchtape.spec.yamlsrc import LineDict, LineList, as_line_dict, decode_source, load_yaml_text, plain, read_source, shorten, written, yaml12, yaml12_values

# ---------------------------------------------------------------- the schema

TOP_KEYS = {
    "description", "harness", "harness_config", "models", "params", "judges", "metrics",
    "derivedMetrics", "defaults", "defaultScenario", "budget", "token_estimate", "scenarios",
}
TOP_ALIASES = {"runner": "harness", "runner_config": "harness_config", "cases": "scenarios", "tests": "scenarios", "defaultCase": "defaultScenario", "defaultTest": "defaultScenario"}
DEFAULTS_KEYS = {"sandbox", "interactive", "cwd", "timeout", "capture", "staging_timeout", "bun", "python", "lockfile_required"}
SCENARIO_KEYS = DEFAULTS_KEYS | {
    "description", "name", "prompt", "follow_ups", "testdata", "repo", "setup", "generate", "image",
    "vars", "providers", "transform", "metadata", "threshold", "options", "checks", "mock", "protected_paths",
}
SCENARIO_ALIASES = {"fixture": "testdata", "assert": "checks"}
OPTIONS_KEYS = {"transform", "disableDefaultChecks"}
OPTIONS_ALIASES = {"disableDefaultAsserts": "disableDefaultChecks"}
REPO_KEYS = {"url", "ref", "path"}
SANDBOX_KEYS = {"level", "workdir", "image", "dockerfile", "network", "user", "env", "share", "resources"}
SHARE_KEYS = {"env", "secret_env", "paths"}
SHARE_PATH_KEYS = {"from", "to", "access"}
RESOURCE_KEYS = {"memory", "cpus", "pids"}
CHECK_KEYS = {"type", "value", "args", "config", "weight", "threshold", "metric", "readout", "checks", "inline", "transform"}
CHECK_ALIASES = {"assert": "checks"}
METRIC_KEYS = {"name", "source", "aggregate", "unit", "better", "key", "check"}
METRIC_ALIASES = {"agg": "aggregate"}
METRIC_SOURCES = {
    "session.latency", "session.cost", "session.tokens", "session.prompt_tokens", "session.output_tokens",
    "session.steps", "session.steps.main", "session.steps.all", "session.tool_calls", "session.steps.agent",
    "session.turns", "session.model_requests", "session.plugins_reported", "session.plugins_failed",
    "session.skills_registered", "check.score", "check.pass_rate", "check.evidence",
    "event.duration", "event.tokens", "action.duration", "action.tokens",
}
KEYED_SOURCES = {"session.steps.agent": "the subagent's type or id", "check.evidence": "the evidence field to read"}
AGGREGATES = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "add": "sum", "total": "sum", "avg": "mean", "average": "mean"}
MOCK_KEYS = {"steps", "metrics", "chat"}  # chat: the scripted model's replies to a request offering no tools (an agent's title or summary request)
LEVELS = ("none", "workspace", "home", "container")  # the one list of sandbox levels
RETIRED_LEVELS = {"process": "home", "machine": "container", "docker": "container"}
ACCESS = ("rw", "copy", "ro")
CAPTURES = ("log", "proxy", "log+proxy")
DEFAULT_TIMEOUT = 300.0
MAX_DURATION = 7 * 86400.0  # seconds: every duration a bench or task file gives (a scenario's timeout, verify.timeout)
MAX_SCENARIOS = 10_000  # a bench holds tens; each is a session per attempt, and its spec is built before any runs
MAX_NAME_BYTES = 255  # NAME_MAX on Linux
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: no longer path can be opened
EVAL_KEYS = {"description", "bench", "models", "metrics", "control", "runs"}

# Keys that load and validate but whose feature this version does not have; preflight names them.
NOT_BUILT = {
    "capture": "capture modes other than log are not built in this version",
    "python": "pinning a Python for `python` checks is not built in this version; they run with benchtape's own interpreter",
    "lockfile_required": "script-check lockfiles are not built in this version",
}
INFORMATIONAL = {"budget", "token_estimate", "threshold"}


# ---------------------------------------------------------------- loaded forms


# Keys only a Terminal-Bench task.yaml has (with `instruction:`): the format before Harbor's.
TERMINAL_BENCH_KEYS = frozenset({"parser_name", "max_agent_timeout_sec", "max_test_timeout_sec", "run_tests_in_same_shell", "author_email", "difficulty"})


def refuse_terminal_bench(doc: Any, file: str) -> None:
    """A Terminal-Bench task read where a bench or a benchtape document belongs is said as what it
    is, with the command that makes it a Harbor task benchtape runs, rather than refused key by
    key as a bench (`unknown key 'instruction'`) or a document (`no apiVersion:`)."""
    if isinstance(doc, dict) and "instruction" in doc and TERMINAL_BENCH_KEYS & set(doc):
        folder = shlex.quote(str(Path(file).parent))
        raise BadInput(
            "this is a Terminal-Bench task (task.yaml with `instruction:`, the format before Harbor's), not a bench or a benchtape task",
            file=file,
            line=1,
            fix=f"make it a Harbor task with Harbor's own converter, `harbor task migrate -i {folder} -o harbor-tasks` (pip install harbor), then `benchtape run harbor-tasks --harness oracle`",
        )


IMAGE_WORKDIR = "WORKDIR"  # SandboxSpec.mount_at: the image's own working directory


@dataclass
class SandboxSpec:
    level: str = "home"
    workdir: Path | None = None
    image: str | None = None
    dockerfile: Path | None = None
    network: str | None = None
    user: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    share_env: list[str] = field(default_factory=list)
    secret_env: list[str] = field(default_factory=list)
    share_paths: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, Any] = field(default_factory=dict)
    # Where a container mounts the workspace: None for /workspace; a Harbor task's environment
    # working directory (its instruction, solve.sh and tests name paths there: /app/...), or
    # IMAGE_WORKDIR for its image's WORKDIR, read once the image is built. Not a bench key.
    mount_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["workdir"] = str(self.workdir) if self.workdir else None
        d["dockerfile"] = str(self.dockerfile) if self.dockerfile else None
        return d


@dataclass
class ScenarioSpec:
    name: str
    prompt: str
    description: str | None = None
    testdata: Path | None = None
    repo: dict[str, Any] | None = None
    setup: Path | None = None
    generate: Path | None = None
    image: tuple[Path, ...] = ()  # the pictures sent with the prompt, resolved and checked at load (spec/bench_images.py)
    generated_images: tuple[str, ...] = ()  # `image: generated:<name>`: a file the generator writes (preflight refuses: not built)
    cwd: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)
    interactive: bool = True
    timeout: float = DEFAULT_TIMEOUT
    staging_timeout: float | None = None
    capture: str = "log"
    checks: list[CheckSpec] = field(default_factory=list)
    transform: str | dict[str, str] | None = None  # JavaScript, or {python: source} (benchtape.spec.transform_source)
    metadata: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None
    follow_ups: list[str] = field(default_factory=list)
    mock: dict[str, Any] | None = None
    protected_paths: list[str] = field(default_factory=list)  # benchtape extension: globs the agent must not change (evaluations: guard_violation)
    providers: list[str] = field(default_factory=list)  # `providers:` labels: one session each (fan_out); composites compare them
    provider: str | None = None  # in a fanned-out copy: the label this session runs as
    python: str | None = None
    where: Where = field(default_factory=Where)
    raw: dict[str, Any] = field(default_factory=dict)  # the merged scenario, plain, for adapters and hashing

    @property
    def runtimes(self) -> dict[str, str]:
        """Runtime pins for code checks (`defaults.bun:` / `bun:`): `CheckContext.runtimes`."""
        return {k: str(self.raw[k]) for k in ("bun",) if self.raw.get(k) not in (None, "", False)}

    def content_hash(self) -> str:
        import orjson

        return hashlib.sha256(orjson.dumps(self.raw, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


@dataclass
class Finding:
    """A key that loaded but whose feature is not built (preflight reports it)."""

    where: Where
    key: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: `{self.key}`: {self.why}"


@dataclass
class BenchSpec:
    path: Path
    sha256: str
    description: str | None
    harness: str | None
    harness_config: dict[str, Any]
    params: dict[str, Any]
    scenarios: list[ScenarioSpec]
    models: dict[str, ProviderSpec] = field(default_factory=dict)
    judges: JudgesConfig | None = None  # None: no judges: block (the built-in providers, by key)
    metrics: list[dict[str, Any]] | None = None  # `metrics:` (§1.9), None: the built-in schema (cost, duration, tokens, turns)
    derived_metrics: list[dict[str, Any]] = field(default_factory=list)  # `derivedMetrics:` [{name, value}], each value parsed (spec/arith.py)
    budget: float | None = None
    token_estimate: int | None = None
    not_built: list[Finding] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)  # where staged inputs may come from: the bench's folder + x-benchtape-allow-outside

    @property
    def dir(self) -> Path:
        return self.path.parent

    def staging_roots(self) -> list[Path]:
        return self.roots or [real(self.dir)]


# ---------------------------------------------------------------- entry points


@dataclass(frozen=True)
class EvalLevel:
    """What an Eval file sets over the bench it runs (§1.10): its `models:` win over the
    bench's on a clash (params naming one resolve to it), its `metrics:` replace the bench's."""

    models: dict[str, ProviderSpec] = field(default_factory=dict)
    metrics: list[dict[str, Any]] | None = None


def load_bench(path: Path | str, params: dict[str, Any] | None = None, eval_level: EvalLevel | None = None) -> BenchSpec:
    """Load one bench file or case directory (as an Eval's run loads it: `eval_level`)."""
    path = Path(path)
    if path.is_dir():
        if (path / "assert.yaml").is_file():
            return _load_case_dir(path, params or {}, eval_level)
        raise BadInput("is a directory without assert.yaml", file=str(path), fix="pass a bench YAML file, or use expand_paths() for a folder of benches")
    data = read_source(path)
    doc = load_yaml_text(decode_source(data, path), str(path))
    return _load_document(doc, path, data, params or {}, eval_level)


def expand_paths(paths: list[Path | str]) -> list[Path]:
    """Benches named on the command line: files as given; a folder expands to its *.yaml (and a
    madbench.yml), as madbench's does, and its case dirs. Not every *.yml: a docker-compose.yml
    or a CI file beside the benches is no bench, and loading one stopped the whole folder."""
    if not paths:
        return [discover()]
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise BadInput("no such file or directory", file=str(p), fix="check the path")
        if p.is_dir() and not (p / "assert.yaml").is_file():
            found = sorted([*p.glob("*.yaml"), *([p / "madbench.yml"] if (p / "madbench.yml").is_file() else [])])
            found += sorted(d for d in p.iterdir() if d.is_dir() and (d / "assert.yaml").is_file())
            if not found:
                raise BadInput("the folder holds no *.yaml bench file, no case directory (NAME/assert.yaml) and no Harbor task (NAME/task.toml)", file=str(p), fix="pass a bench file, an evaluation, or a folder of Harbor tasks (each a folder with task.toml, instruction.md, tests/test.sh)")
            out.extend(found)
        else:
            out.append(p)
    return out


def discover(folder: Path | None = None) -> Path:
    """No bench named: `madbench.yaml` or `madbench.yml` in the current folder, as madbench does."""
    folder = folder or Path.cwd()
    for name in ("madbench.yaml", "madbench.yml"):
        if (folder / name).is_file():
            return folder / name
    raise BadInput(f"no madbench.yaml or madbench.yml in {folder}", fix="name a bench file: benchtape run BENCH.yaml")


def _load_case_dir(path: Path, params: dict[str, Any], eval_level: EvalLevel | None = None) -> BenchSpec:
    assert_file = path / "assert.yaml"
    try:
        assert_bytes = read_source(assert_file)
        doc = load_yaml_text(decode_source(assert_bytes, assert_file), str(assert_file))
        input_md = path / "input.md"
        input_bytes = read_source(input_md) if input_md.is_file() else b""
        prompt = decode_source(input_bytes, input_md) if input_md.is_file() else None
        if isinstance(doc, dict) and prompt is not None:
            for key in ("scenarios", "cases", "tests"):
                for sc in doc.get(key) or []:
                    if isinstance(sc, dict) and "prompt" not in sc:
                        sc["prompt"] = prompt
            if not any(k in doc for k in ("scenarios", "cases", "tests")):
                scen = LineDict({"name": path.name, "prompt": prompt})
                scen.line, scen.key_lines = doc.line if isinstance(doc, LineDict) else None, {}
                doc["scenarios"] = LineList([scen])
        raw = assert_bytes + input_bytes
        return _load_document(doc, assert_file, raw, params, eval_level)
    except BadInput as exc:
        raise BadInput(f"case dir {path.name}: {exc.what}", file=exc.file, line=exc.line, fix=exc.fix) from None


def is_eval_document(doc: Any) -> bool:
    """An Eval file, by content: `bench:` or `runs:` and no scenarios (so a missing `bench:` is named as such)."""
    return isinstance(doc, dict) and ("bench" in doc or "runs" in doc) and not any(k in doc for k in ("scenarios", "cases", "tests"))


# ---------------------------------------------------------------- the loader


class _Loader:
    def __init__(self, file: Path):
        self.file = str(file)
        self.dir = file.parent.resolve()
        self.not_built: list[Finding] = []
        self.roots: list[Path] = [real(self.dir)]

    # -- helpers
    def err(self, what: str, node: Any = None, key: str | None = None, fix: str | None = None) -> BadInput:
        line = node.line_of(key) if isinstance(node, LineDict) and key else getattr(node, "line", None)
        return BadInput(what, file=self.file, line=line, fix=fix)

    def where(self, node: Any, key: str | None = None) -> Where:
        line = node.line_of(key) if isinstance(node, LineDict) and key else getattr(node, "line", None)
        return Where(self.file, line)

    def mapping(self, node: Any, what: str, parent: Any = None, key: str | None = None) -> LineDict:
        if node is None:
            node = LineDict()
            node.line, node.key_lines = getattr(parent, "line", None), {}
        if not isinstance(node, dict):
            raise self.err(f"{what} must be a mapping, got {_type_name(node)}", parent if parent is not None else node, key, "write it as `name: value` pairs (indented below it, or `{name: value}`)")
        return as_line_dict(node)

    def strict(self, node: dict[str, Any], allowed: set[str], what: str, aliases: dict[str, str] | None = None, extra_hint: dict[str, str] | None = None) -> LineDict:
        """Refuse unknown keys (naming the closest); `x-` keys are ignored; aliases become canonical."""
        node = as_line_dict(node)
        aliases = aliases or {}
        out = LineDict()
        out.line, out.key_lines, out.texts = node.line, {}, {}
        texts = getattr(node, "texts", {})
        for key, value in node.items():
            if not isinstance(key, str):
                raise self.err(f"{what}: key {key!r} is not a string", node, None, "quote the key")
            if key.startswith("x-"):
                continue
            canonical = aliases.get(key, key)
            if canonical not in allowed:
                hint = (extra_hint or {}).get(key)
                near = closest(key, sorted(allowed))
                fix = hint or (f"did you mean `{near}:`?" if near else f"valid keys: {', '.join(sorted(allowed))}")
                raise self.err(f"unknown key `{key}` in {what}", node, key, fix)
            if canonical in out:
                raise self.err(f"`{key}` and its canonical form `{canonical}` are both set in {what}", node, key, f"keep only `{canonical}:`")
            out[canonical] = value
            out.key_lines[canonical] = node.line_of(key) or node.line
            if key in texts:
                out.texts[canonical] = texts[key]
        return out

    def images(self, node: LineDict) -> tuple[tuple[Path, ...], tuple[str, ...]]:
        """`image:` (one path or a list): each file resolved against the bench file's folder and
        checked now (missing, a folder, over 5 MB, not png/jpeg/gif/webp is bad input); a
        `generated:<name>` entry is kept by name (its file exists only once the generator ran)."""
        from benchtape.spec.bench_images import GENERATED, check_image

        value = node.get("image")
        if value is None:
            return (), ()
        entries = value if isinstance(value, list) else [value]
        fix = "write `image: shot.png` (a path relative to the bench file) or a list of them"
        if not entries or not all(isinstance(e, str) and e.strip() for e in entries):
            raise self.err(f"`image:` must be a path or a list of paths to pictures, got {_type_name(value)}", node, "image", fix)
        paths: list[Path] = []
        generated: list[str] = []
        for entry in entries:
            if entry.startswith(GENERATED):
                generated.append(entry[len(GENERATED) :])
                continue
            path = self.path(entry, node, "image", must_exist=False)
            if not within(path, self.roots):  # a bench from elsewhere must not send this host's files to a model
                raise self.err(f"`image:` {shorten(entry, 300)} resolves to {shorten(real(path), 300)}, outside the bench's folder; sending it would hand a file of this host to the model", node, "image", outside_fix(self.dir, path))
            problem = check_image(path)
            if problem is not None:
                raise self.err(f"`image:` {problem}", node, "image", "point `image:` at a PNG, JPEG, GIF or WebP file of at most 5 MB, relative to the bench file")
            paths.append(path)
        return tuple(paths), tuple(generated)

    def path(self, value: Any, node: Any, key: str, must_exist: bool = True, kind: str = "path", staged: bool = False) -> Path:
        """A path relative to the bench file. `staged`: copied into the workspace, so it must
        resolve (links followed) inside the bench's folder or a folder it allows (roots.py)."""
        if not isinstance(value, str) or not value:
            raise self.err(f"`{key}` must be a non-empty path string, got {_type_name(value)}", node, key, "write a path relative to the bench file, e.g. `testdata: data`")
        if "\0" in value:
            raise self.err(f"`{key}` contains a NUL character, which no path can", node, key, "fix the path")
        if len(value) > MAX_PATH_CHARS:
            raise self.err(f"`{key}` is {len(value):,} characters long, longer than any path this system can open ({MAX_PATH_CHARS})", node, key, "fix the path")
        p = Path(value)
        long_part = next((part for part in p.parts if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES), None)
        if long_part is not None:  # no system opens it: refused at load even where existence is a preflight finding
            raise self.err(f"`{key}` has a name of {len(long_part.encode('utf-8', 'surrogatepass')):,} bytes ({shorten(long_part, 40)}), longer than a file name can be ({MAX_NAME_BYTES})", node, key, "fix the path")
        p = p if p.is_absolute() else (self.dir / p)
        p = Path(_normpath(p))
        if must_exist:
            try:
                os.stat(p)
            except (FileNotFoundError, NotADirectoryError):
                raise self.err(f"`{key}`: {shorten(value, 300)} does not exist (resolved against the bench file's folder: {shorten(p, 300)})", node, key, "fix the path; it is relative to the bench file, not the current directory") from None
            except OSError as exc:
                raise self.err(f"`{key}`: {shorten(value, 300)} cannot be used: {exc.strerror or exc}", node, key, "fix the path") from None
        if staged and not within(p, self.roots):
            raise self.err(
                f"`{key}`: {shorten(value, 300)} resolves to {shorten(real(p), 300)}, outside the bench's folder; staging it would copy host files into the workspace and the stored snapshot",
                node,
                key,
                outside_fix(self.dir, p),
            )
        return p

    def allow_outside(self, top: dict[str, Any]) -> None:
        """`x-benchtape-allow-outside: [folder, ...]`: more folders staged inputs may come from."""
        top = as_line_dict(top)
        value = top.get(ALLOW_KEY)
        if value is None:
            return
        folders = [value] if isinstance(value, str) else value
        if not isinstance(folders, list) or not folders:
            raise self.err(f"`{ALLOW_KEY}:` must be a list of folders, got {_type_name(value)}", top, ALLOW_KEY, f"e.g. `{ALLOW_KEY}: [../shared-testdata]`")
        for folder in folders:
            p = self.path(folder, top, ALLOW_KEY)
            if not p.is_dir():
                raise self.err(f"`{ALLOW_KEY}:` {shorten(folder, 300)} is not a folder", top, ALLOW_KEY, "name the folder the staged files are in")
            self.roots.append(real(p))

    # -- the document
    def load(self, doc: Any, raw: bytes, incoming: dict[str, Any], eval_level: EvalLevel | None = None) -> BenchSpec:
        if doc is None:
            raise BadInput("the file is empty", file=self.file, fix="write a bench: description, harness, scenarios")
        if not isinstance(doc, dict):
            raise BadInput("a bench file must be a mapping at the top level", file=self.file, line=getattr(doc, "line", 1))
        refuse_terminal_bench(doc, self.file)
        if is_eval_document(doc):
            raise BadInput(
                "this is an Eval file (bench: + runs:), not a bench",
                file=self.file,
                line=doc.line_of("bench" if "bench" in doc else "runs") if isinstance(doc, LineDict) else None,
                fix="run it as an Eval: `benchtape run EVAL.yaml` (list, preflight and check take it too); where one bench is needed, name the bench file it runs",
            )
        self.allow_outside(doc)
        top = self.strict(
            doc,
            TOP_KEYS,
            "the bench (top level)",
            TOP_ALIASES,
            {"name": "a bench has no `name:`; use `description:`", "matrix": "there is no cross product in a bench; write one scenario per case, or use params", "variations": "there is no cross product in a bench; write one scenario per case, or use params"},
        )
        params_decl = top.get("params")
        if params_decl is not None and not isinstance(params_decl, dict):
            raise self.err("`params:` must be a mapping of name: default", top, "params", "e.g. `params: {variant: a}`")
        params = effective_params(params_decl, incoming, self.file, lambda n: params_decl.line_of(n) if isinstance(params_decl, LineDict) else None)
        models = load_models(self, top.get("models"), top)
        if eval_level is not None:
            models = {**models, **eval_level.models}  # the Eval's models win on a clash
        # a param whose value is a models: key means that model (its canonical id)
        params = {k: (models[v].model if isinstance(v, str) and v in models and models[v].model else v) for k, v in params.items()}
        judges = load_judges(self, top.get("judges"), top, models)

        harness = top.get("harness")
        if harness is not None and not isinstance(harness, str):
            raise self.err("`harness:` must be a string", top, "harness", "e.g. `harness: claude-code` (or codex, mock)")
        hc = self.mapping(top.get("harness_config"), "`harness_config:`", top, "harness_config")
        hc = substitute(hc, params, self.file, top.line_of("harness_config"))
        named = hc.get("model")
        if isinstance(named, str) and named in models and models[named].model:
            hc["model"] = models[named].model  # `model: fast`, a key of models:, is that model's id
        if isinstance(hc.get("agent_env"), str):
            hc["agent_env"] = str(self.path(hc["agent_env"], hc, "agent_env"))
            if (Path(hc["agent_env"]) / "skills").is_dir():
                raise self.err("`agent_env` has a top-level skills/ folder, which Claude Code never loads from an agent_env", hc, "agent_env", "move each skill to plugins/<plugin>/skills/<skill>/SKILL.md inside the agent_env")
        binary = hc.get("binary")
        if isinstance(binary, str) and "/" in binary and not os.path.isabs(binary):
            # `./wrap.sh` is the bench's file, wherever benchtape runs: resolved once, here, so
            # preflight looks for the file the launch starts (a bare name is looked up on PATH)
            hc["binary"] = str(self.path(binary, hc, "binary", must_exist=False))
        for plugin in hc.get("plugins") or [] if isinstance(hc.get("plugins"), list) else []:
            if isinstance(plugin, dict) and isinstance(plugin.get("path"), str):  # staged from the bench's folder, wherever benchtape runs
                plugin["path"] = str(self.path(plugin["path"], plugin, "path"))
        self.check_environment_block(hc)
        defaults = self.strict(self.mapping(top.get("defaults"), "`defaults:`", top, "defaults"), DEFAULTS_KEYS, "`defaults:`")
        default_scenario = top.get("defaultScenario")
        if default_scenario is not None:
            default_scenario = self.strict(self.mapping(default_scenario, "`defaultScenario:`", top, "defaultScenario"), SCENARIO_KEYS, "`defaultScenario:`", SCENARIO_ALIASES)
        metrics = self.load_metrics(top.get("metrics"), top)
        if eval_level is not None and eval_level.metrics is not None:
            metrics = eval_level.metrics  # an Eval's metrics: replace the bench's
        derived = self.load_derived(top.get("derivedMetrics"), top)
        scenarios_node = top.get("scenarios")
        if scenarios_node is None:
            raise self.err("the bench has no `scenarios:`", top, None, "add a `scenarios:` list with at least one scenario (each needs a `prompt:`)")
        if not isinstance(scenarios_node, list):
            raise self.err("`scenarios:` must be a list", top, "scenarios", "write `scenarios:` followed by `- name: ...` entries")
        if len(scenarios_node) > MAX_SCENARIOS:
            raise self.err(f"`scenarios:` lists {len(scenarios_node):,} scenarios, more than the {MAX_SCENARIOS:,} one bench may hold", top, "scenarios", "split them into several bench files (a folder of them runs as one)")
        scenarios = [self.load_scenario(sc, i, defaults, default_scenario, params, scenarios_node) for i, sc in enumerate(scenarios_node)]
        check_judge_references(self, judges, models, [c for sc in scenarios for c in sc.checks], JUDGE_TYPE_NAMES)
        seen: dict[str, ScenarioSpec] = {}
        for sc in scenarios:
            if sc.name in seen:
                raise BadInput(f"two scenarios are named {sc.name!r}", file=self.file, line=sc.where.line, fix="give each scenario a unique `name:`")
            seen[sc.name] = sc
        return BenchSpec(
            path=Path(self.file).resolve(),
            sha256=hashlib.sha256(raw).hexdigest(),
            description=top.get("description"),
            harness=harness,
            harness_config=plain(hc),
            params=params,
            scenarios=scenarios,
            models=models,
            judges=judges,
            metrics=metrics,
            derived_metrics=derived,
            budget=self.number(top, "budget"),
            token_estimate=self.number(top, "token_estimate", whole=True),
            not_built=self.not_built,
            roots=list(self.roots),
        )

    def check_environment_block(self, hc: LineDict) -> None:
        env = hc.get("environment")
        if isinstance(env, dict) and env.get("probe") is False and env.get("require") is True:
            raise self.err(
                "harness_config.environment: `probe: false` with `require: true` can never pass (nothing is probed, so nothing can be required)",
                env,
                "require",
                "drop `require: true`, or turn the probe back on",
            )

    def load_metrics(self, node: Any, top: LineDict) -> list[dict[str, Any]] | None:
        """`metrics:` (§1.9): the report's numeric schema, a list of {name, source, aggregate,
        unit, better} (+ `key:` for the sources that need one, `check:` to read one check)."""
        if node is None:
            return None
        if not isinstance(node, list):
            raise self.err("`metrics:` must be a list of metric specs", top, "metrics", "write `metrics:` followed by `- {name: ..., source: ...}` entries")
        out = []
        seen: set[str] = set()
        for m in node:
            if isinstance(m, str):
                raise self.err(
                    f"`metrics:` entry {shorten(m)!r} is an expression (madbench 0.33's form); v0.23.0's `metrics:` are declarations",
                    node if not isinstance(node, LineDict) else top,
                    "metrics",
                    "write `- {name: passRate, source: check.pass_rate, aggregate: mean}`; arithmetic over check scores goes in `derivedMetrics:`",
                )
            m = self.strict(self.mapping(m, "a metric", node), METRIC_KEYS, "a metric", METRIC_ALIASES)
            name = m.get("name")
            if not isinstance(name, str) or not name.strip():
                raise self.err("a metric needs a `name:`", m, None, "e.g. `- {name: cost, source: session.cost, aggregate: sum}`")
            if name in seen:
                raise self.err(f"two metrics are named {name!r}", m, "name", "give each metric its own name")
            seen.add(name)
            src = m.get("source")
            if not isinstance(src, str) or src not in METRIC_SOURCES:
                near = closest(str(src), sorted(METRIC_SOURCES))
                raise self.err(f'unknown source "{shorten(src)}"', m, "source", f"did you mean `{near}`?" if near else f"use one of {', '.join(sorted(METRIC_SOURCES))}")
            if src in KEYED_SOURCES and not (isinstance(m.get("key"), str) and m["key"]):
                raise self.err(f"metric {name!r}: source {src} needs a `key:` ({KEYED_SOURCES[src]})", m, "source", f"e.g. `key: {'Explore' if src == 'session.steps.agent' else 'raw_latency_ms'}`")
            for text in ("key", "check", "unit"):
                self.text(m, text)
            agg = m.get("aggregate")
            if agg is not None and (not isinstance(agg, str) or agg not in AGGREGATES):
                raise self.err(f'unknown aggregate "{shorten(agg)}"', m, "aggregate", "use sum, mean, max or min")
            if agg is not None:
                m["aggregate"] = AGGREGATES[agg]
            if m.get("better") not in (None, "lower", "higher"):
                raise self.err("`better:` must be lower or higher", m, "better", "write `better: lower` or `better: higher`")
            out.append(plain(m))
        return out

    def load_derived(self, node: Any, top: LineDict) -> list[dict[str, Any]]:
        """`derivedMetrics:` [{name, value}]: JavaScript arithmetic over the scenario's named
        check scores (`"Consistency * 2"`), parsed now (spec/arith.py) so a typo is a load error."""
        from benchtape.spec.arith import ExpressionError, parse

        if node is None:
            return []
        if not isinstance(node, list):
            raise self.err("`derivedMetrics:` must be a list of {name, value}", top, "derivedMetrics", 'e.g. `derivedMetrics: [{name: doubled, value: "Consistency * 2"}]`')
        out = []
        for d in node:
            d = self.strict(self.mapping(d, "a derived metric", node), {"name", "value"}, "a derived metric")
            name, value = d.get("name"), d.get("value")
            if not isinstance(name, str) or not name.strip():
                raise self.err("a derived metric needs a `name:`", d, None, 'e.g. `- {name: doubled, value: "Consistency * 2"}`')
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)
            if not isinstance(value, str) or not value.strip():
                raise self.err(f"derived metric {name!r} needs a `value:` expression", d, "value", 'e.g. `value: "Consistency * 2"` (a check\'s `metric:` name, times 2)')
            try:
                parse(value)
            except ExpressionError as exc:
                raise self.err(f"derived metric {name!r}: `{shorten(value, 80)}`: {exc}", d, "value", "use numbers, check names (their `metric:`), + - * / % **, comparisons, && || !, ? :, parentheses and Math.*") from None
            out.append({"name": name, "value": value})
        return out

    # -- scenarios
    def load_scenario(self, node: Any, index: int, defaults: LineDict, default_scenario: LineDict | None, params: dict[str, Any], parent: Any = None) -> ScenarioSpec:
        node = self.strict(self.mapping(node, f"scenario #{index + 1}", parent), SCENARIO_KEYS, f"scenario #{index + 1}", SCENARIO_ALIASES, {"input": "the prompt key is `prompt:`", "images": "the key is `image:` (one or a list)"})
        if "options" in node:
            node["options"] = self.strict(self.mapping(node["options"], "`options:`", node, "options"), OPTIONS_KEYS, "`options:`", OPTIONS_ALIASES)
        if default_scenario is not None and "options" in default_scenario:
            default_scenario["options"] = self.strict(self.mapping(default_scenario["options"], "`options:`", default_scenario, "options"), OPTIONS_KEYS, "`options:`", OPTIONS_ALIASES)
        merged = self.merge(defaults, default_scenario, node)
        for key in ("name", "description"):
            if isinstance(merged.get(key), (list, dict)):
                raise self.err(f"`{key}:` must be a string, got {_type_name(merged[key])}", merged, key, f'quote it: `{key}: "..."`')
        label = merged.get("name") or merged.get("description") or f"scenario-{index + 1}"
        if not isinstance(label, str):
            label = str(label)
        where = Where(self.file, node.line)

        # placeholders, before path resolution
        for key in ("prompt", "testdata", "repo", "generate", "setup", "cwd", "staging_timeout", "sandbox", "interactive", "transform", "vars", "mock"):
            if key in merged:
                merged[key] = substitute(merged[key], params, self.file, merged.line_of(key))
        for key in ("prompt", "cwd", "timeout", "name", "description"):
            if key in merged and isinstance(merged[key], str):
                merged[key] = substitute(merged[key], params, self.file, merged.line_of(key))

        if "prompt" not in merged:
            raise BadInput(f"scenario {label!r} has no `prompt:`", file=self.file, line=node.line, fix="add `prompt: ...` (or inherit one from defaultScenario, or a case dir's input.md)")
        prompt = merged["prompt"]
        if prompt is None:
            prompt = ""
        elif not isinstance(prompt, str) and written(merged, "prompt") is not None:
            prompt = written(merged, "prompt")  # a string field in madbench's schema: `prompt: 42` is the text written
        if not isinstance(prompt, str):
            raise self.err("`prompt:` must be a string", merged, "prompt", 'quote it: `prompt: "..."`')

        sandbox = self.load_sandbox(merged.get("sandbox", "home"), merged, params)
        interactive = self.boolish(merged.get("interactive", True), merged, "interactive")
        follow_ups = self.strings(merged, "follow_ups")
        if follow_ups and not interactive:
            raise self.err("`follow_ups:` needs an interactive scenario, and this one is `interactive: false`", merged, "follow_ups", "drop follow_ups, or make the scenario interactive")
        if "setup" in merged and "generate" in merged:
            raise self.err("`setup:` and `generate:` are both set; they are mutually exclusive", merged, "generate", "use `generate:` when the program computes the answer, `setup:` otherwise")
        # Loading is parse-only: a testdata folder a setup script generates need not exist yet
        # (preflight says so, exit 3); where it would come from is checked now (staged=True).
        testdata = self.path(merged["testdata"], merged, "testdata", must_exist=False, staged=True) if merged.get("testdata") is not None else None
        if testdata is not None and sandbox.level == "none":
            raise self.err("`testdata:` cannot be used with `sandbox: none` (it would be copied over your real directory)", merged, "testdata", "use sandbox level workspace or home")
        repo = self.load_repo(merged.get("repo"), merged) if merged.get("repo") is not None else None
        setup = self.path(merged["setup"], merged, "setup") if merged.get("setup") is not None else None
        generate = self.path(merged["generate"], merged, "generate") if merged.get("generate") is not None else None
        cwd = merged.get("cwd")
        if cwd is not None:
            if not isinstance(cwd, str) or Path(cwd).is_absolute() or ".." in Path(cwd).parts:
                raise self.err("`cwd:` must be a relative path inside the workspace, without `..`", merged, "cwd", "e.g. `cwd: src` (a folder of the testdata)")
        timeout = self.duration(merged.get("timeout"), merged, "timeout", DEFAULT_TIMEOUT, as_madbench=True) or DEFAULT_TIMEOUT
        staging_timeout = self.duration(merged.get("staging_timeout"), merged, "staging_timeout", None, as_madbench=True)
        capture = merged.get("capture", "log")
        if capture not in CAPTURES:
            raise self.err(f"`capture: {capture}` is not one of {', '.join(CAPTURES)}", merged, "capture", "use `capture: log`")
        images, generated_images = self.images(merged)
        providers = self.provider_labels(merged)
        for key in ("python", "lockfile_required"):
            if merged.get(key):
                self.not_built.append(Finding(self.where(merged, key), key, NOT_BUILT[key]))
        if capture != "log":
            self.not_built.append(Finding(self.where(merged, "capture"), "capture", NOT_BUILT["capture"]))
        vars_ = merged.get("vars") or {}
        if not isinstance(vars_, dict):
            raise self.err("`vars:` must be a mapping", merged, "vars", "write it as `name: value` pairs")
        metadata = self.mapping(merged.get("metadata"), "`metadata:`", merged, "metadata")
        options = merged.get("options") or {}
        transform = self.transform(merged, "transform") or self.transform(options, "transform")
        python = self.text(merged, "python")
        threshold = self.number(merged, "threshold")
        mock = merged.get("mock")
        if mock is not None:
            mock = self.load_mock(mock, merged)
        checks = self.load_checks(merged.get("checks") or [], merged, params, "checks")
        if len(providers) > 1:
            checks = borrow_siblings(checks)
        protected = self.protected_paths(merged)
        return ScenarioSpec(
            name=label,
            prompt=prompt,
            description=None if merged.get("description") is None else str(merged["description"]),
            testdata=testdata,
            repo=repo,
            setup=setup,
            generate=generate,
            image=images,
            generated_images=generated_images,
            cwd=cwd,
            vars=plain(vars_),
            sandbox=sandbox,
            interactive=interactive,
            timeout=timeout,
            staging_timeout=staging_timeout,
            capture=capture,
            checks=checks,
            transform=transform,
            metadata=plain(metadata),
            threshold=threshold,
            follow_ups=plain(follow_ups),
            mock=mock,
            protected_paths=protected,
            providers=providers,
            python=python,
            where=where,
            raw=plain({k: (str(v) if isinstance(v, Path) else v) for k, v in merged.items()}),
        )

    def merge(self, defaults: LineDict, default_scenario: LineDict | None, node: LineDict) -> LineDict:
        """bench defaults → defaultScenario → scenario; scalars: later wins; vars/metadata/options deep-merged; checks: default's first."""
        out = LineDict()
        out.line, out.key_lines, out.texts = node.line, {}, {}
        layers = [defaults] + ([default_scenario] if default_scenario is not None else []) + [node]
        disable_default_checks = bool((node.get("options") or {}).get("disableDefaultChecks"))
        for layer in layers:
            for key, value in layer.items():
                if key == "vars" and isinstance(value, dict):
                    value = yaml12_values(value)  # a var is any value: `answer: no` is the string madbench reads
                if key in ("vars", "metadata", "options") and isinstance(value, dict) and isinstance(out.get(key), dict):
                    out[key] = _deep_merge(out[key], value)
                elif key == "checks":
                    if value is not None and not isinstance(value, list):
                        raise self.err(f"`checks:` must be a list of checks, got {_type_name(value)}", layer, key, "write `checks:` followed by `- type: ...` entries")
                    if layer is default_scenario and disable_default_checks:
                        continue
                    out[key] = LineList(list(out.get(key) or []) + list(value or []))
                    out[key].line = getattr(value, "line", None)
                else:
                    out[key] = value
                out.key_lines[key] = layer.line_of(key) or layer.line
                text = written(layer, key)
                if text is None:
                    out.texts.pop(key, None)
                else:
                    out.texts[key] = text
        return out

    def number(self, node: LineDict, key: str, whole: bool = False) -> Any:
        """An informational number (`budget:`, `token_estimate:`, `threshold:`): absent, or a number."""
        value = node.get(key)
        kinds = (int,) if whole else (int, float)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise self.err(f"`{key}:` must be {'a whole number' if whole else 'a number'}, got {_type_name(value)}", node, key, f"e.g. `{key}: {'1000' if whole else '1.5'}`, or drop it")
        return value

    def strings(self, node: LineDict, key: str) -> list[str]:
        value = node.get(key) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise self.err(f"`{key}:` must be a list of strings, got {_type_name(value)}", node, key, f"e.g. `{key}: [first, second]`")
        return list(value)

    def text(self, node: LineDict, key: str) -> str | None:
        value = node.get(key)
        if value is not None and not isinstance(value, str):
            raise self.err(f"`{key}:` must be a string, got {_type_name(value)}", node, key, f'quote it: `{key}: "..."`')
        return value

    def transform(self, node: Mapping[str, Any], key: str) -> Any:
        """A `transform:` as written (JavaScript, `file://`, or `{python: ...}`), refused at its
        line when it cannot run as written (one that reads as Python, unmarked); a file's path
        resolved against the bench file (a missing one is preflight's finding)."""
        value = node.get(key)
        if value is None:
            return None
        try:
            parsed = transform_of(plain(value))
        except TransformRefused as exc:
            raise self.err(str(exc), node, key, exc.fix) from None
        if parsed.path is not None:
            parsed = parsed.at(str(self.path(parsed.path, node, key, must_exist=False)))
        return parsed.value()

    def boolish(self, value: Any, node: LineDict, key: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise self.err(f"`{key}:` must be true or false, got {shorten(value)}", node, key, f"write `{key}: true` or `{key}: false`")

    def duration(self, value: Any, node: LineDict, key: str, default: float | None, *, as_madbench: bool = False) -> float | None:
        """A duration with a unit. A bare number is refused, except in a madbench bench's own
        keys (`as_madbench`: timeout, staging_timeout), where madbench falls back to the
        default, and so does this (said at preflight)."""
        if value is None:
            return default
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise self.err(f"`{key}:` must be a duration such as \"300s\", got {_type_name(value)}", node, key, f'e.g. `{key}: "300s"` (units: ms, s, m, h)')
        seconds = parse_duration(value)
        if seconds is None:
            if unitless(value) and not as_madbench:
                raise self.err(f"`{key}: {value}` has no unit", node, key, f"write it with a unit, e.g. `{key}: {duration_example(value)}` (units: ms, s, m, h)")
            if unitless(value):
                # madbench's Go ParseDuration fails on it and the default applies, silently: so it
                # does here, said at preflight (the file runs as it runs there, never read as seconds)
                fallback = f"the default, {default:g}s," if default is not None else "no limit"
                self.not_built.append(Finding(self.where(node, key), key, f"`{key}: {value}` has no unit, so {fallback} applies, as in madbench; write `{key}: {duration_example(value)}` (units: ms, s, m, h)"))
                return default
            raise self.err(f"`{key}: {value}` is not a duration: a number and a unit (ms, s, m, h), such as 90s or 1m30s", node, key, f"write `{key}: {duration_example(value)}`")
        if seconds <= 0 or not math.isfinite(seconds):
            raise self.err(f"`{key}:` must be a positive, finite duration", node, key, f'e.g. `{key}: "300s"`')
        if seconds > MAX_DURATION:  # a typo (99999h), and a finite 1e308s overflows the clocks and waits it is added to
            raise self.err(f"`{key}: {value}` is more than a week", node, key, f'e.g. `{key}: "30m"`')
        return seconds

    def load_repo(self, value: Any, node: LineDict) -> dict[str, Any]:
        if isinstance(value, str):
            value = LineDict({"url": value})
            value.line, value.key_lines = node.line_of("repo"), {}
        repo = self.strict(self.mapping(value, "`repo:`", node, "repo"), REPO_KEYS, "`repo:`")
        url = repo.get("url")
        if not isinstance(url, str) or not url:
            raise self.err("`repo:` needs a `url:` (a git URL or a local path)", repo, None, "e.g. `repo: {url: ../app, ref: main}`")
        out = plain(repo)
        for key in ("ref", "path"):
            if key in repo and not isinstance(repo[key], str):
                raise self.err(f"`repo.{key}:` must be a string, got {_type_name(repo[key])}", repo, key, f'quote it: `{key}: "..."`')
        if url.startswith("file://"):
            self.path(url[len("file://"):], repo, "url", staged=True)  # a local repo, whatever its spelling
        elif not re.match(r"^[a-z+]+://|^git@", url):
            out["url"] = str(self.path(url, repo, "url", staged=True))
        return out

    def provider_labels(self, node: LineDict) -> list[str]:
        """`providers:` — a label (or a list of them), one session each; unique, non-empty."""
        value = node.get("providers")
        if value is None:
            return []
        labels = [value] if isinstance(value, str) else value
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x.strip() for x in labels):
            raise self.err(f"`providers:` must be a list of labels, got {_type_name(value)}", node, "providers", "e.g. `providers: [mock:yes, mock:no]` (one session per label)")
        twice = next((x for i, x in enumerate(labels) if x in labels[:i]), None)
        if twice is not None:
            raise self.err(f"`providers:` lists {twice!r} twice", node, "providers", "give each provider once (repeat a scenario with --repeat)")
        return list(labels)

    def protected_paths(self, node: LineDict) -> list[str]:
        """Workspace-relative globs (`tests/**`) an agent's change must not touch."""
        value = node.get("protected_paths")
        if value is None:
            return []
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, str) or not item.strip() or item.startswith("/") or ".." in Path(item).parts:
                raise self.err(f"`protected_paths:` entry {item!r} must be a relative path or glob inside the workspace", node, "protected_paths", "e.g. `protected_paths: [tests/**, setup.cfg]`")
        return [str(i) for i in items]

    def load_mock(self, value: Any, node: LineDict) -> dict[str, Any]:
        mock = self.strict(self.mapping(value, "`mock:`", node, "mock"), MOCK_KEYS, "`mock:` (a benchtape extension)")
        steps = mock.get("steps") or []
        if not isinstance(steps, list):
            raise self.err("`mock.steps:` must be a list", mock, "steps", "write `steps:` followed by `- {say: ...}` entries")
        wide = wide_integer(mock)  # first: a value no JSON carries, whatever the step it is in
        if wide is not None:
            parent, key, what, fix = wide
            raise self.err(f"`mock:` {what}", parent, key, fix)
        kinds = STEP_KINDS
        for step in steps:
            self.check_mock_step(step, kinds, steps)
        metrics = mock.get("metrics")
        allowed_metrics = {"cost_usd", "duration_ms", "tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens", "turns"}
        if metrics is not None:
            self.strict(self.mapping(metrics, "`mock.metrics:`", mock, "metrics"), allowed_metrics, "`mock.metrics:`")
        return plain(mock)

    def check_mock_step(self, step: Any, kinds: tuple[str, ...], parent: Any = None) -> None:
        if not isinstance(step, dict):
            raise self.err(f"a mock step must be a mapping, got {_type_name(step)}", step if parent is None else parent, None, "e.g. `- {tool: Read, input: {file_path: x}}` or `- {say: done}`")
        present = [k for k in kinds if k in step]
        if len(present) != 1:
            raise self.err(f"a mock step needs exactly one of {', '.join(kinds)}; got {shorten(sorted(step))}", step, None, "e.g. `- {say: done}`; split a step that does two things")
        self.strict(step, STEP_KEYS[present[0]], f"a `{present[0]}` mock step")
        if present[0] == "tool":
            self.check_tool_input(step)
        if present[0] == "parallel":
            if not isinstance(step["parallel"], list) or not step["parallel"]:
                raise self.err("`parallel:` must be a non-empty list of tool, skill or subagent steps", step, "parallel")
            for inner in step["parallel"]:
                self.check_mock_step(inner, ("tool", "skill", "subagent"))
        if present[0] == "subagent":
            sub = self.strict(self.mapping(step["subagent"], "`subagent:`", step, "subagent"), {"agent", "prompt", "steps", "tool", "detach"}, "a mock subagent")
            inner_steps = sub.get("steps") or []
            if not isinstance(inner_steps, list):
                raise self.err(f"a mock subagent's `steps:` must be a list, got {_type_name(inner_steps)}", sub, "steps", "write `steps:` followed by `- {say: ...}` entries")
            for inner in inner_steps:
                self.check_mock_step(inner, kinds, inner_steps)

    def check_tool_input(self, step: dict[str, Any]) -> None:
        """A step of a tool the mock really runs (Read, Edit, Bash, …) names the inputs that tool
        takes: a missing or misspelled one is refused here, at its line, not met as a KeyError
        in the recorded session."""
        known = TOOL_INPUTS.get(str(step.get("tool")))
        given = step.get("input")
        if known is None or (given is not None and not isinstance(given, dict)):
            return
        needed, allowed = known
        given = given or {}
        where = given if isinstance(given, LineDict) and given else step
        for key in given:
            if allowed is not None and key not in allowed:
                near = closest(str(key), allowed)
                raise self.err(f"`{step['tool']}` takes no input `{key}`", where, key if where is given else "input", f"did you mean `{near}`?" if near else f"its inputs: {', '.join(sorted(allowed))}")
        missing = sorted(needed - set(given))
        if missing:
            raise self.err(f"`{step['tool']}` needs the input {', '.join(f'`{m}`' for m in missing)}", step, "input" if "input" in step else "tool", f"e.g. `input: {{{', '.join(f'{k}: …' for k in sorted(needed))}}}`")

    def load_sandbox(self, value: Any, node: LineDict, params: dict[str, Any]) -> SandboxSpec:
        if value is not None and not isinstance(value, (str, dict)):
            raise self.err(f"`sandbox:` must be a level (none, workspace, home, container) or a mapping with `level:`, got {_type_name(value)}", node, "sandbox", "e.g. `sandbox: home` or `sandbox: {level: container, image: python:3.12-slim}`")
        if isinstance(value, str):
            level_value, block = value, None
        else:
            block = self.strict(self.mapping(value, "`sandbox:`", node, "sandbox"), SANDBOX_KEYS, "`sandbox:`", extra_hint={"mode": "the key is `level:`"})
            level_value = block.get("level", "home")
        if not isinstance(level_value, str):
            raise self.err(f"sandbox: the level must be one of none, workspace, home, container, got {_type_name(level_value)}", block if block is not None else node, "level" if block is not None else "sandbox", "e.g. `sandbox: home`")
        if level_value in RETIRED_LEVELS:
            raise self.err(
                f'sandbox: level "{level_value}" was renamed to "{RETIRED_LEVELS[level_value]}" (want none, workspace, home, container)',
                block if block is not None else node,
                "level" if block is not None else "sandbox",
                f"write `sandbox: {RETIRED_LEVELS[level_value]}`",
            )
        if level_value not in LEVELS:
            raise self.err(f"sandbox: unknown level {shorten(level_value)!r} (want none, workspace, home, container)", block if block is not None else node, "level" if block is not None else "sandbox", "e.g. `sandbox: home`")
        spec = SandboxSpec(level=level_value)
        if block is None:
            return spec

        def refuse_below_container(key: str) -> None:
            if key in block and level_value != "container":
                raise self.err(f"sandbox: `{key}` can only be honoured at level container (this is {level_value}); it would be ignored", block, key, "remove it, or use `level: container`")

        for key in ("image", "dockerfile", "network", "user", "resources"):
            refuse_below_container(key)
        if "image" in block and "dockerfile" in block:
            raise self.err("sandbox: `image` and `dockerfile` are mutually exclusive", block, "dockerfile", "keep one: `image:` to use a local image, `dockerfile:` to build one")
        if "workdir" in block:
            if level_value != "none":
                raise self.err("sandbox: `workdir` is only for level none (the real directory to run in)", block, "workdir", "remove `workdir:`, or use `level: none`")
            spec.workdir = self.path(block["workdir"], block, "workdir")
        if "image" in block:
            image = block["image"]
            if not isinstance(image, str) or not image.strip():
                raise self.err(f"sandbox: `image` must be an image name such as `python:3.12-slim`, got {_type_name(image) if not isinstance(image, str) else 'an empty string'}", block, "image", "name a local image, or drop `image:` to use benchtape's base image")
            spec.image = image
        if block.get("dockerfile") is not None:
            spec.dockerfile = self.path(block["dockerfile"], block, "dockerfile", staged=True)
        if "network" in block:
            if block["network"] not in ("none", "bridge", "host"):
                raise self.err(f"sandbox: network {block['network']!r} is not one of none, bridge, host", block, "network", "use `network: none` (the default), bridge or host")
            spec.network = block["network"]
        user = block.get("user")
        if user is not None and (isinstance(user, bool) or not isinstance(user, (str, int))):
            raise self.err(f"sandbox: `user` must be a user name or uid, got {_type_name(user)}", block, "user", "e.g. `user: \"1000:1000\"` or `user: agent`")
        spec.user = str(user) if user is not None else None
        env = block.get("env") or {}
        if not isinstance(env, dict) or not all(isinstance(v, (str, int, float, bool)) for v in env.values()):
            raise self.err("sandbox: `env` must map names to literal values", block, "env", "e.g. `env: {LANG: C.UTF-8, DEBUG: \"1\"}`")
        spec.env = {str(k): str(v) for k, v in env.items()}
        if "resources" in block:
            res = self.strict(self.mapping(block["resources"], "`resources:`", block, "resources"), RESOURCE_KEYS, "`sandbox.resources:`")
            spec.resources = plain(res)
        if "share" in block:
            share = self.strict(self.mapping(block["share"], "`share:`", block, "share"), SHARE_KEYS, "`sandbox.share:`")
            spec.share_env = self.names(share, "env")
            spec.secret_env = self.names(share, "secret_env")
            paths = share.get("paths") or []
            if not isinstance(paths, list):
                raise self.err(f"`share.paths:` must be a list of {{from, to, access}} entries, got {_type_name(paths)}", share, "paths", "e.g. `paths: [{from: data, to: data, access: copy}]`")
            for entry in paths:
                entry = self.strict(self.mapping(entry, "a share path", paths), SHARE_PATH_KEYS, "a `share.paths` entry")
                access = entry.get("access", "rw")
                if access not in ACCESS:
                    raise self.err(f"share path access {access!r} is not one of rw, copy, ro", entry, "access", "use `access: rw`, `copy` or `ro`")
                if access == "ro" and level_value != "container":
                    raise self.err("a `ro` share can only be enforced at level container", entry, "access", "use `level: container`, or access rw/copy")
                if "from" not in entry or "to" not in entry:
                    raise self.err("a share path needs `from:` and `to:`", entry, None, "e.g. `- {from: data, to: data, access: copy}`")
                if not isinstance(entry["to"], str) or not entry["to"]:
                    raise self.err(f"a share path's `to:` must be a path string, got {_type_name(entry['to'])}", entry, "to", "e.g. `- {from: data, to: data, access: copy}`")
                source = self.path(entry["from"], entry, "from", staged=access == "copy")  # rw/ro are links and mounts, not copies
                spec.share_paths.append({"from": str(source), "to": entry["to"], "access": access})
        return spec

    def names(self, block: LineDict, key: str) -> list[str]:
        """A list of environment variable names (`share.env`, `share.secret_env`)."""
        value = block.get(key) or []
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            raise self.err(f"`share.{key}:` must be a list of variable names, got {_type_name(value)}" + (" with a non-name entry" if isinstance(value, list) else ""), block, key, f"e.g. `{key}: [GITHUB_TOKEN]`")
        return list(value)

    def load_checks(self, nodes: Any, parent: Any, params: dict[str, Any], key: str) -> list[CheckSpec]:
        if not isinstance(nodes, list):
            raise self.err(f"`{key}:` must be a list of checks, got {_type_name(nodes)}", parent, key, f"write `{key}:` followed by `- type: ...` entries")
        return [self.load_check(n, params, nodes) for n in nodes]

    def load_check(self, node: Any, params: dict[str, Any], parent: Any = None) -> CheckSpec:
        node = self.strict(self.mapping(node, "a check", parent), CHECK_KEYS, "a check", CHECK_ALIASES)
        ctype = node.get("type")
        if not isinstance(ctype, str) or not ctype:
            raise self.err("a check needs a `type:`", node, None, "e.g. `- type: contains` with `value: ...`")
        if "value" in node:
            node["value"] = yaml12(node, "value")  # the needle madbench reads: `value: no` is "no", never false
        for k in ("value", "inline", "transform", "args", "config"):
            if k in node:
                node[k] = substitute(node[k], params, self.file, node.line_of(k))
        args = node.get("args") or {}
        config = node.get("config") or {}
        if not isinstance(args, dict):
            raise self.err("check `args:` must be a mapping", node, "args", "write it as `name: value` pairs, e.g. `args: {cmd: [make, test]}`")
        if not isinstance(config, dict):
            raise self.err("check `config:` must be a mapping", node, "config", "write it as `name: value` pairs")
        for num in ("weight", "threshold"):
            if num == "threshold" and isinstance(node.get(num), str) and node[num].strip():
                continue  # a duration with a unit (`latency`'s `30s`): the check reads it, and refuses it where it takes none
            if num in node and node[num] is not None and (isinstance(node[num], bool) or not isinstance(node[num], (int, float)) or not _finite(node[num])):
                raise self.err(f"check `{num}:` must be a finite number, got {shorten(node[num])}", node, num, f"e.g. `{num}: 0.5`" + (' (or, for latency, a duration: `threshold: 30s`)' if num == "threshold" else ""))
        for key in ("metric", "inline"):
            self.text(node, key)
        value = node.get("value")
        if isinstance(value, str) and value.startswith("file://"):
            # a grader that is not there yet is preflight's finding (exit 3), as madbench's: not a load error
            value = "file://" + str(self.path(value[len("file://"):], node, "value", must_exist=False))
        children = tuple(self.load_checks(node.get("checks") or [], node, params, "checks"))
        return CheckSpec(
            type=ctype,
            value=plain(value),
            args=plain(args),
            config=plain(config),
            weight=float(node.get("weight", 1.0) if node.get("weight") is not None else 1.0),
            threshold=node.get("threshold"),
            metric=node.get("metric"),
            readout=self.boolish(node.get("readout", False), node, "readout"),
            checks=children,
            inline=node.get("inline"),
            transform=self.transform(node, "transform"),
            where=Where(self.file, node.line),
        )


MULTI_PROVIDER = ("select-best", "max-score", "compare")  # the composites that compare a scenario's providers


def borrow_siblings(checks: list[CheckSpec]) -> list[CheckSpec]:
    """In a multi-provider scenario a `select-best`, `max-score` or `compare` with no children
    takes the scenario's other checks that are not composites as its own (madbench §3.11)."""
    from dataclasses import replace

    siblings = tuple(c for c in checks if not c.checks and c.type not in MULTI_PROVIDER)
    return [replace(c, checks=siblings) if c.type in MULTI_PROVIDER and not c.checks and siblings else c for c in checks]


def fan_out(scenario: ScenarioSpec) -> list[ScenarioSpec]:
    """A scenario as the sessions it runs: one per `providers:` label (each a copy that knows
    its label, its name unchanged), or itself."""
    from dataclasses import replace

    if not scenario.providers:
        return [scenario]
    return [replace(scenario, provider=label, raw={**scenario.raw, "provider": label}) for label in scenario.providers]


def _load_document(doc: Any, path: Path, raw: bytes, params: dict[str, Any], eval_level: EvalLevel | None = None) -> BenchSpec:
    return _Loader(path).load(doc, raw, params, eval_level)


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(a)
    if isinstance(a, LineDict):
        merged = LineDict(a)
        merged.line, merged.key_lines = a.line, dict(getattr(a, "key_lines", {}))
        out = merged
    for k, v in b.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _normpath(p: Path) -> str:
    import os

    return os.path.normpath(str(p))




