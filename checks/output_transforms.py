"""Output transforms, run where grading runs: a JavaScript (or marked Python) rewrite of the
output, in the grading host's own interpreter, never in benchtape's process.

A transform is user code like any grader: evaluated inside benchtape it could reach `os`
(`json.codecs.sys.modules` did) and read benchtape's environment, on the host, even when the
session's grading belongs in a container. So it runs as code checks do: through the command
runner and interpreter grading hands the checks (a subprocess on the host with the scrubbed
grading environment, or an exec in the grading container), with its answer fed back.

Every transform one session's grading needs (the scenario's and each check's) runs in one
process per language, the first time a check reads a transformed output; a grading in which
no check reads the output starts none. A check's own transform replaces the scenario's for
that check (madbench: "overrides the scenario transform"), so every transform reads the
output as recorded, and a failure errors only the checks that read what it computed.

What a transform sees and returns (docs/transforms.md): `output` (the recorded final output,
"" when there is none) and `context` ({vars, prompt}); a string is the new output, anything
else its JSON text; a JavaScript `undefined` (a function body with no `return`) is an error.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from benchtape.checks.child_runtime import PY_ANSWER, js_runtime, js_runtime_problems, runner_reply
from benchtape.checks.json_text import dumps_json
from benchtape.core.command_runner import CommandRunner, Interpreter, Unavailable, grading_env
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec
from benchtape.spec.transform_source import PY_FILE_FUNCTION, Transform, TransformRefused, TransformValue, transform_of
from benchtape.spec.yamlsrc import shorten

TRANSFORM = "transform"  # the Unavailable cause: the output a check reads is a transform's, and it failed
TIMEOUT = 30.0  # seconds for one session's transforms of one language
TAIL = 1500

# Runs in node or bun (an ES module). The job arrives on stdin; the answer is one marked line.
# An inline transform is an expression (one line or several), else a function body that
# returns; a file is imported where it is (a container sees the bench folder at its own
# path), or from a scratch copy where it is not.
_JS_COMPILE = r"""
const MARK = "@@benchtape-result@@ ";
const emit = (o) => process.stdout.write("\n" + MARK + JSON.stringify(o) + "\n");
const describe = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : `threw ${String(e)}`);
const AsyncFunction = (async () => {}).constructor;
const compiled = (source) => {
  let first;
  try {
    return new AsyncFunction("output", "context", "return (\n" + source.trim().replace(/;\s*$/, "") + "\n);");
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    first = e;
  }
  try {
    return new AsyncFunction("output", "context", source);
  } catch (e) {
    throw source.trim().includes("\n") ? e : first;  // one line: it was meant as an expression
  }
};
const job = async () => {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
};
"""
_JS_RUNNER = _JS_COMPILE + r"""
try {
  const { pathToFileURL } = await import("node:url");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const { output, context, transforms } = await job();
  const results = [];
  let scratch = null;
  try {
    for (const t of transforms) {
      try {
        let fn;
        if (t.path !== undefined) {
          let file = t.path;
          if (!fs.existsSync(file)) {
            scratch ??= fs.mkdtempSync(path.join(os.tmpdir(), "benchtape-transform-"));
            file = path.join(scratch, results.length + path.extname(t.path));
            fs.writeFileSync(file, t.file_source);
          }
          const mod = await import(pathToFileURL(file).href);
          const own = (name) => (typeof mod[name] === "function" ? mod[name] : mod.default && typeof mod.default[name] === "function" ? mod.default[name] : null);
          fn = t.function ? own(t.function) : typeof mod.default === "function" ? mod.default : own("transform");
          if (!fn) throw new Error(t.function ? `${t.path} exports no function ${t.function}` : `${t.path} exports no default function (or transform)`);
        } else {
          fn = compiled(t.source);
        }
        const value = await fn(output, structuredClone(context));
        results.push(value === undefined
          ? { error: "the transform returned undefined (a transform of statements is a function body: `return` the new output)" }
          : { value: typeof value === "string" ? value : JSON.stringify(value) });
      } catch (e) {
        results.push({ error: describe(e) });
      }
    }
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
  emit({ value: results });
} catch (e) {
  emit({ error: describe(e) });
}
"""
# Preflight: whether each inline source compiles (an expression, else a function body).
_JS_SYNTAX = _JS_COMPILE + r"""
try {
  emit({ value: (await job()).map((source) => { try { compiled(source); return null; } catch (e) { return describe(e); } }) });
} catch (e) {
  emit({ error: describe(e) });
}
"""

# Runs in the grading host's Python (`-I`); `re` and `json` are in scope, as they were when
# transforms were Python only.
_PY_RUNNER = PY_ANSWER + r"""
import os, re, runpy, textwrap
def compiled(source):
    scope = {"re": re, "json": json}
    try:
        code = compile(source.strip(), "<transform>", "eval")
    except SyntaxError:
        exec(compile("def __benchtape_transform(output, context):\n" + textwrap.indent(source, "    "), "<transform>", "exec"), scope)
        return scope["__benchtape_transform"]
    return lambda output, context: eval(code, {**scope, "output": output, "context": context})
def loaded(t):
    if os.path.exists(t["path"]):
        sys.path.insert(0, os.path.dirname(t["path"]))
        scope = runpy.run_path(t["path"], run_name="__benchtape_transform__")
    else:
        scope = {"__name__": "__benchtape_transform__"}
        exec(compile(t["file_source"], t["path"], "exec"), scope)
    fn = scope.get(t["function"])
    if not callable(fn):
        raise LookupError(t["path"] + " defines no " + t["function"] + "(output, context)")
    return fn
try:
    job = json.loads(sys.stdin.buffer.read())
    results = []
    for t in job["transforms"]:
        try:
            fn = loaded(t) if "path" in t else compiled(t["source"])
            value = fn(job["output"], json.loads(json.dumps(job["context"])))
            results.append({"value": value if isinstance(value, str) else json.dumps(value, default=str)})
        except BaseException as exc:
            results.append({"error": type(exc).__name__ + ": " + str(exc)})
    emit({"value": results})
except BaseException as exc:
    emit({"error": type(exc).__name__ + ": " + str(exc)})
"""


class TransformPlace(NamedTuple):
    """Where a session's transforms run: grading's command runner and interpreters, and a folder."""

    run: CommandRunner
    interpreter: Interpreter
    cwd: Path


class TransformFailed(Exception):
    """A transform raised, returned nothing usable, or could not run where grading runs."""


class SessionTransforms:
    """The output transforms of one session's grading, each run at most once.

    Those named up front (every transform in the session's checks, and the scenario's) run
    together, one process per language, when a check first reads a transformed output; one
    asked for later runs then, on its own. `place` is asked once, when the first batch runs:
    it may raise Unavailable (a grading container that cannot start), which the checks that
    read a transformed output then report as theirs."""

    def __init__(self, values: Iterable[TransformValue], output: str | None, context: Mapping[str, Any], place: Callable[[], TransformPlace], runtimes: Mapping[str, str] | None = None, bench_dir: Path | None = None):
        self.output_text = output or ""
        self.context = dict(context)
        self.place = place
        self.runtimes: Mapping[str, str] = runtimes or {}
        self.bench_dir = bench_dir
        self._pending: dict[Any, Transform] = {}
        self._done: dict[Any, str | TransformFailed | Unavailable] = {}
        self._where: TransformPlace | Unavailable | None = None
        for value in values:
            parsed = self._parse(value)
            if isinstance(parsed, Transform) and parsed.key not in self._done:
                self._pending[parsed.key] = parsed

    def output(self, value: TransformValue) -> str:
        """The output as `value` rewrites it; raises TransformFailed, or Unavailable when where
        grading runs could not be provided."""
        parsed = self._parse(value)
        if isinstance(parsed, TransformFailed):
            raise parsed
        if parsed.key not in self._done:
            self._pending.setdefault(parsed.key, parsed)
            self._run_pending()
        got = self._done[parsed.key]
        if isinstance(got, Unavailable):
            raise Unavailable(got.cause, str(got))
        if isinstance(got, TransformFailed):
            raise TransformFailed(str(got))
        return got

    def _parse(self, value: TransformValue) -> Transform | TransformFailed:
        try:
            parsed = transform_of(value)
        except TransformRefused as exc:
            return TransformFailed(f"{exc} ({exc.fix})")
        if parsed.path is not None and not Path(parsed.path).is_absolute():
            if self.bench_dir is None:
                return TransformFailed(f"file://{parsed.path} is relative, but no bench directory is known to resolve it against")
            parsed = parsed.at(str(Path(self.bench_dir) / parsed.path))
        return parsed

    def _run_pending(self) -> None:
        batch, self._pending = list(self._pending.values()), {}
        where = self._place()
        for language in ("js", "python"):
            mine = [t for t in batch if t.language == language]
            if not mine:
                continue
            if isinstance(where, Unavailable):
                self._done.update((t.key, where) for t in mine)
            else:
                self._done.update(zip((t.key for t in mine), self._run(language, mine, where), strict=True))

    def _place(self) -> TransformPlace | Unavailable:
        if self._where is None:
            try:
                self._where = self.place()
            except Unavailable as exc:
                self._where = exc
        return self._where

    def _run(self, language: str, batch: list[Transform], where: TransformPlace) -> list[str | TransformFailed]:
        """One process for the batch: each transform's output, or why it has none."""
        jobs: list[dict[str, Any] | TransformFailed] = [_job(t) for t in batch]
        runnable = [j for j in jobs if isinstance(j, dict)]
        if not runnable:
            return [j for j in jobs if isinstance(j, TransformFailed)]  # every job is one
        argv, problem = self._argv(language, where)
        if argv is None:
            return [TransformFailed(problem) if isinstance(j, dict) else j for j in jobs]
        job = {"output": self.output_text, "context": self.context, "transforms": runnable}
        answers = iter(self._answers(argv, where, job, len(runnable)))
        return [next(answers) if isinstance(j, dict) else j for j in jobs]

    def _argv(self, language: str, where: TransformPlace) -> tuple[list[str] | None, str]:
        if language == "js":
            argv, problem = js_runtime("JavaScript transforms", self.runtimes, where.interpreter, where.run, where.cwd)
            return ([*argv, _JS_RUNNER] if argv else None), problem
        python = where.interpreter("python")
        if python is None:
            return None, "Python transforms: the grading sandbox has no Python interpreter (give the scenario an image with python3)"
        return [*python, "-I", "-c", _PY_RUNNER], ""

    def _answers(self, argv: list[str], where: TransformPlace, job: dict[str, Any], count: int) -> list[str | TransformFailed]:
        def every(why: str) -> list[str | TransformFailed]:
            return [TransformFailed(why)] * count

        try:
            done = where.run(argv, where.cwd, TIMEOUT, env=grading_env(), stdin=dumps_json(job))
        except OSError as exc:
            return every(f"cannot start {argv[0]}: {exc}")
        if done.timed_out:
            return every(f"timed out after {TIMEOUT:g}s")
        reply = runner_reply(done.output)
        if reply is None:
            return every(f"{Path(argv[0]).name} gave no result (exit {done.exit_code}): {_tail(done.output)}")
        if "error" in reply:
            return every(reply["error"].strip())
        results = reply["value"]
        if not isinstance(results, list) or len(results) != count:
            return every(f"{Path(argv[0]).name} answered {len(results) if isinstance(results, list) else 'no'} results for {count} transforms")
        return [_outcome(r) for r in results]


def _job(t: Transform) -> dict[str, Any] | TransformFailed:
    """What the runner needs of one transform: its source, or its file (with the file's text,
    for a place that cannot see the bench folder)."""
    if t.path is None:
        return {"source": t.source}
    try:
        text = Path(t.path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return TransformFailed(f"file://{t.path} does not exist")
    except (OSError, UnicodeDecodeError) as exc:
        return TransformFailed(f"file://{t.path} cannot be read: {exc}")
    function = t.function or (PY_FILE_FUNCTION if t.language == "python" else None)
    return {"path": t.path, "function": function, "file_source": text} if function else {"path": t.path, "file_source": text}


def _outcome(answer: Any) -> str | TransformFailed:
    value = answer.get("value") if isinstance(answer, dict) else None
    if isinstance(value, str):
        return value
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, str):
        return TransformFailed(error.strip())
    return TransformFailed(f"the runner answered {str(answer)[:80]!r}")


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= TAIL else "…" + text[-TAIL:]


# ---------------------------------------------------------------- the session a check reads


class _Transformed(Session):
    """A session whose output is a transform's, computed when first read: a check that never
    reads the output never waits for (or errors on) the transform."""

    @property
    def final_output(self) -> str | None:
        transformed: str | None = self.__dict__["_transformed"]()
        return transformed

    @final_output.setter
    def final_output(self, value: str | None) -> None:
        pass  # the view's output is the transform's

    def with_output(self, text: str | None) -> Session:
        plain = copy.copy(self)
        plain.__class__ = Session  # type: ignore[assignment]
        plain.__dict__.pop("_transformed", None)
        plain.__dict__["final_output"] = text
        return plain


def recorded_output(session: Session) -> str | None:
    """The output as recorded, also under a transformed view (every transform reads this)."""
    return session.__dict__.get("final_output")


def transformed(session: Session, value: TransformValue, outputs: SessionTransforms, whose: str) -> Session:
    """`session` as checks read it under the transform `value`: reading its output runs the
    transform (once, with the session's others); a failure makes that read raise
    Unavailable(TRANSFORM), naming `whose` transform it was ("the scenario's")."""
    view = copy.copy(session)
    view.__class__ = _Transformed

    def read() -> str:
        try:
            return outputs.output(value)
        except TransformFailed as exc:
            raise Unavailable(TRANSFORM, f"{whose} output transform failed: {exc}") from None

    view.__dict__["_transformed"] = read
    return view


def check_view(session: Session, value: TransformValue, ctx: Any, check_type: str) -> Session:
    """The session as a check with its own `transform:` reads it. Graded by `grade_session`,
    the context holds the session's transforms (run together); a check evaluated on its own
    (a test, the public API) runs its transform through the context's runner."""
    outputs = getattr(ctx, "transforms", None)
    if outputs is None:
        here = Path(ctx.bench_dir) if ctx.bench_dir is not None else Path(tempfile.gettempdir())
        outputs = SessionTransforms(
            [value],
            recorded_output(session),
            {"vars": dict(ctx.vars), "prompt": session.prompt},
            lambda: TransformPlace(ctx.run_command, ctx.interpreter, here),
            ctx.runtimes,
            ctx.bench_dir,
        )
    return transformed(session, value, outputs, f"{check_type}: the check's")


def transforms_in(spec: CheckSpec) -> list[TransformValue]:
    """Every transform in a check spec and its children, in order."""
    out = [spec.transform] if spec.transform is not None else []
    for child in spec.checks:
        out.extend(transforms_in(child))
    return out


# ---------------------------------------------------------------- preflight


def transform_problems(values: Iterable[TransformValue], pf: Any) -> list[str]:
    """Before any run: what keeps a scenario's transforms (its own and its checks') from running
    where it will be graded, each finding once and naming the fix: a missing file, a runtime
    the grading place has not got (a refused one was refused when the bench loaded, or, on a
    check, when it was built). `pf` is a PreflightContext."""
    out: list[str] = []
    languages: dict[str, int] = {}
    inline_js: list[str] = []
    for value in values:
        try:
            parsed = transform_of(value)
        except TransformRefused:
            continue
        languages[parsed.language] = languages.get(parsed.language, 0) + 1
        if parsed.language == "js" and parsed.source is not None:
            inline_js.append(parsed.source)
        if parsed.path is not None:
            full = Path(parsed.path) if Path(parsed.path).is_absolute() or pf.bench_dir is None else Path(pf.bench_dir) / parsed.path
            if not full.is_file():
                out.append(f"transform file {full} does not exist (a `file://` transform is relative to the bench file)")
    if "js" in languages:
        missing = js_runtime_problems(_count(languages["js"], "JavaScript transform"), pf, one=languages["js"] == 1)
        out.extend(missing or _js_syntax_problems(inline_js, pf))
    if "python" in languages and pf.interpreter is not None and pf.interpreter("python") is None:
        verb = "runs" if languages["python"] == 1 else "run"
        out.append(f"{_count(languages['python'], 'Python transform')} {verb} with python3, which {pf.where} does not have: give the scenario an image with python3, or write it in JavaScript")
    return out


def python_note(values: Iterable[TransformValue]) -> str | None:
    """A preflight note when a scenario uses Python transforms: benchtape's extension, which
    madbench cannot run (a difference the bench chose, said before any spend)."""
    count = 0
    for value in values:
        try:
            count += transform_of(value).language == "python"
        except TransformRefused:
            continue
    if not count:
        return None
    return f"{_count(count, 'Python transform')} ({{python: ...}} or file://….py) {'is' if count == 1 else 'are'} benchtape's extension: madbench cannot run this scenario as written"


def _js_syntax_problems(sources: list[str], pf: Any) -> list[str]:
    """Inline JavaScript transforms that do not compile, found with this machine's node (or
    bun) when it has one: the same language wherever grading runs, so a typo blocks the run
    instead of erroring every check of every session."""
    if not sources:
        return []
    path = pf.env.get("PATH")
    node, bun = shutil.which("node", path=path), shutil.which("bun", path=path)
    argv = [node, "--no-warnings", "--input-type=module", "-e", _JS_SYNTAX] if node else [bun, "--eval", _JS_SYNTAX] if bun else None
    if argv is None:
        return []  # graded elsewhere, by a runtime this machine has not got: grading will say
    try:
        done = subprocess.run(argv, input=dumps_json(sources), capture_output=True, timeout=TIMEOUT, env=grading_env())
    except (OSError, subprocess.TimeoutExpired):
        return []
    reply = runner_reply(done.stdout.decode("utf-8", "replace"))
    errors = reply.get("value") if reply else None
    if not isinstance(errors, list) or len(errors) != len(sources):
        return []
    return [f"the JavaScript transform `{shorten(src)}` does not compile: {err}" for src, err in zip(sources, errors, strict=True) if err]


def _count(n: int, what: str) -> str:
    return f"its {what}" if n == 1 else f"its {n} {what}s"
