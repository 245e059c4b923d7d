"""`ts` and `js`: a grader written in TypeScript or JavaScript, exporting
`evaluate(output, context)`, run like `python` is: in its own process, the job on stdin,
the result on stdout.

The runtime is node, or bun when the scenario pins one (`defaults.bun:`); both come from
where grading commands run (`ctx.interpreter`), so a container grades with its own. node
runs TypeScript by stripping its types, which needs node 22.6 or newer; with an older
node a `ts` check says so and names the way out (bun, or a newer node).

`value` is a module exporting `evaluate` (inline, or `file://` relative to the bench
file), or a snippet in madbench's script scope (`output`, `vars`, `config`, `session`,
`assertion`, `context`): one line is an expression, several lines (or a statement) a
function body that `return`s.
"""

from __future__ import annotations

import re
import secrets
import shutil
from pathlib import Path
from typing import Any

from benchtape.checks.child_runtime import BUN_INSTALL, STRIP_TYPES, js_runtime, js_runtime_problems, probe, runner_reply
from benchtape.checks.code import _TIMEOUT_ARG, _run_dir, _script_result, _timeout
from benchtape.checks.common import bench_relative, dumps_json, format_seconds, score_threshold, tail
from benchtape.checks.envelope import envelope
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, PreflightContext, register
from benchtape.core.command_runner import grading_env
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

# Runs in the runtime. The job arrives on stdin; a file grader that exists where this runs
# is imported in place (its own imports and node_modules resolve), otherwise (inline
# source, or a container that cannot see the bench folder) the source is written to a
# scratch file first. User prints may share the pipe: the result line is marked.
_RUNNER = r"""
const MARK = "@@benchtape-result@@ ";
const emit = (o) => process.stdout.write("\n" + MARK + JSON.stringify(o, (k, v) => (typeof v === "bigint" ? String(v) : v)) + "\n");
try {
  const { pathToFileURL } = await import("node:url");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  let file = job.path && fs.existsSync(job.path) ? job.path : null;
  let scratch = null;
  if (!file) {
    scratch = path.join(os.tmpdir(), job.scratch);
    fs.mkdirSync(scratch, { mode: 0o700 });  // a new folder or an error, never one that exists
    file = path.join(scratch, "grader" + job.ext);
    fs.writeFileSync(file, job.source);
  }
  try {
    const mod = await import(pathToFileURL(file).href);
    const fn = typeof mod.evaluate === "function" ? mod.evaluate
      : mod.default && typeof mod.default.evaluate === "function" ? mod.default.evaluate
      : typeof mod.default === "function" ? mod.default : null;
    if (!fn) emit({ error: "the script exports no evaluate(output, context)" });
    else {
      const value = await fn(job.output, job.context);
      emit({ value: value === undefined ? null : value });
    }
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });  // one per graded session otherwise
  }
} catch (e) {
  emit({ error: e && e.stack ? String(e.stack).split("\n").slice(0, 4).join("\n") : String(e) });
}
"""

_DEFINES_EVALUATE = re.compile(r"\bfunction\s+evaluate\b|\b(?:const|let|var)\s+evaluate\s*=|\bexport\s+default\b")
_EXPORTS = re.compile(r"\bexport\b|\bmodule\.exports\b")
_STATEMENT = re.compile(r"(?:while|for|if|const|let|var|throw|do|switch|try)\b")


def module_source(source: str, lang: str) -> str:
    """Inline `value` as a module exporting `evaluate`: a module as written (exported if it
    only defines evaluate), else a snippet run in the script scope."""
    if _DEFINES_EVALUATE.search(source):
        return source if _EXPORTS.search(source) else source + "\nexport { evaluate };\n"
    body = source.strip()
    if "\n" not in body and not re.search(r"\breturn\b", body) and not _STATEMENT.match(body):
        body = f"return (\n{body}\n);"  # one line: an expression (as promptfoo reads it)
    sig = "output: any, context: any" if lang == "ts" else "output, context"
    return (
        f"export async function evaluate({sig}) {{\n"
        "  const { vars, config, session, assertion } = context;\n"
        f"{body}\n"
        "}\n"
    )


def _source(spec: CheckSpec) -> tuple[str | None, str | None]:
    """(inline source, file path) from `value`."""
    v = spec.value
    if not isinstance(v, str) or not v.strip():
        raise CheckConfigError(f"{spec.type}: 'value' (inline source, or file://path relative to the bench file) is required")
    if v.startswith("file://"):
        path = v[len("file://") :]
        if not path:
            raise CheckConfigError(f"{spec.type}: 'value' file:// names no file")
        return None, path
    return module_source(v, spec.type), None


def script_check(spec: CheckSpec) -> Evaluator:
    lang = spec.type
    source, path = _source(spec)
    timeout = _timeout(spec, lang)
    threshold = score_threshold(spec, None)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        job: dict[str, Any] = {"output": session.final_output or "", "ext": ".ts" if lang == "ts" else ".mjs"}
        if path is not None:
            full = bench_relative(path, ctx.bench_dir)
            if full is None:
                return Result.error(f"{lang}: file://{path} is relative, but no bench directory is known to resolve it against")
            if not full.is_file():
                return Result.error(f"grader {lang}: {full} does not exist")
            job["path"] = str(full.resolve())
            job["source"] = full.read_text(encoding="utf-8")
            job["ext"] = full.suffix or job["ext"]
        else:
            job["source"] = source
        env_doc = envelope(session, spec, ctx)
        job["context"] = {"vars": env_doc["vars"], "config": dict(spec.config or {}), "session": env_doc["session"], "assertion": env_doc["assertion"], "prompt": session.prompt}
        env = grading_env()
        # Where the runner writes an inline script to import it, named here: it removes the
        # folder itself, and should the runtime be killed (a timeout) first, this does, when
        # the runtime ran on this host (in a container, the container's temp dir goes with it).
        job["scratch"] = f"benchtape-grader-{secrets.token_hex(8)}"
        try:
            with _run_dir(ctx) as cwd:
                argv, problem = js_runtime(lang, ctx.runtimes, ctx.interpreter, ctx.run_command, cwd, strip_types=lang == "ts")
                if argv is None:
                    return Result.error(problem)
                try:
                    done = ctx.run_command([*argv, _RUNNER], cwd, timeout, env=env, stdin=dumps_json(job))
                except OSError as exc:
                    return Result.error(f"{lang}: cannot start {argv[0]}: {exc}")
        finally:
            shutil.rmtree(Path(env.get("TMPDIR") or "/tmp") / job["scratch"], ignore_errors=True)  # where node's os.tmpdir() is, given that environment
        log = done.output
        if done.timed_out:
            return Result.error(f"{lang}: timed out after {format_seconds(timeout)}", {"output_tail": tail(log)})
        if STRIP_TYPES in log and "bad option" in log:
            return Result.error(f"{lang}: this node cannot run TypeScript (it has no {STRIP_TYPES}: node 22.6 or newer does); declare `defaults.bun:` and install bun ({BUN_INSTALL}), or upgrade node")
        reply = runner_reply(log)
        if reply is None:
            return Result.error(f"{lang}: the script produced no result (exit {done.exit_code})\n{tail(log)}", {"output_tail": tail(log)})
        if "error" in reply:
            return Result.error(f"{lang}: {reply['error'].strip()}", {"output_tail": tail(log)})
        return _script_result(reply.get("value"), lang, threshold)

    return evaluate


def preflight(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """The runtime where grading will run (bun when pinned, at the pinned version, else node),
    and for `ts` on this machine a node that strips types."""
    lang = spec.type
    problems = js_runtime_problems(f"{lang} checks", pf)
    if problems or pf.interpreter is not None or pf.runtimes.get("bun") or lang != "ts":
        return problems
    node = shutil.which("node", path=pf.env.get("PATH"))
    if node is not None and probe([node, STRIP_TYPES, "-e", "0"]) is None:
        version = probe([node, "--version"]) or "this node"
        return [f"ts checks need node 22.6 or newer (it strips the types), and the node on PATH is {version}: declare `defaults.bun:` and install bun ({BUN_INSTALL}), or upgrade node"]
    return []


for _lang, _what in (("ts", "TypeScript"), ("js", "JavaScript")):
    register(
        _lang,
        family="Script",
        open_args=True,  # the envelope hands args to the grader
        summary=f"a {_what} `evaluate(output, context)` run by node (or bun, when `defaults.bun:` pins it) in its own process: a bool, a score in [0, 1], or {{pass, score, reason, evidence}}",
        reads="final_output; context = {vars, config, session (the grader envelope's), assertion, prompt}",
        args={
            "value": "inline source (a module exporting evaluate, or a snippet over output/vars/config/session/assertion/context), or file://path relative to the bench file (required)",
            "config": "any mapping, handed to the script as context.config",
            "args.timeout": _TIMEOUT_ARG,
            "threshold": "bar for a returned score (default: above 0); a returned object with no `pass` passes only at this bar (with none it fails, as madbench reads an absent `pass` as false)",
        },
        example=f"type: {_lang}\nvalue: output.includes('fixed')" if _lang == "js" else "type: ts\nvalue: |\n  export function evaluate(output: string, context: any) {\n    return { pass: output.includes('fixed'), score: 1, reason: 'says fixed' };\n  }",
        errors=(
            "no value",
            "a timeout with no unit",
            "ERROR: no node (or no bun when pinned, or a bun of another version); for ts, a node older than 22.6; a missing file; a crash; a timeout; no result",
        ),
        kind="Code",
        reads_workspace=True,
        preflight=preflight,
    )(script_check)
