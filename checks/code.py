"""Code checks: your grader, in its own process. `python` (an `evaluate(output, context)`
function), `custom:exec` (any program: the envelope on stdin, a Result on stdout) and
`custom:http` (a service: the envelope POSTed, a Result in the response).

A grader never runs inside benchtape's process: a crash, a hang or a stray global there
would take the grading down with it. Programs run through `ctx.run_command` with a
scrubbed environment, so they see no API keys, and a container sandbox can confine them.
"""

from __future__ import annotations

import ast
import os
import shlex
import tempfile
import textwrap
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from benchtape.checks.child_runtime import PY_ANSWER, runner_reply
from benchtape.checks.common import args_of, dumps_json, format_seconds, loads_json, parse_duration, score_threshold, short, tail
from benchtape.checks.envelope import envelope, last_json_object, result_from_reply, score_passes
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, PreflightContext, register
from benchtape.core.command_runner import grading_env
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

# ---------------------------------------------------------------- shared


@contextmanager
def _run_dir(ctx: CheckContext) -> Iterator[Path]:
    """The workspace when there is one (graders inspect it), else the bench directory, else
    a throwaway directory."""
    if ctx.work_dir is not None:
        yield Path(ctx.work_dir)
    elif ctx.bench_dir is not None:
        yield Path(ctx.bench_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="benchtape-grader-") as d:
            yield Path(d)


def _timeout(spec: CheckSpec, type: str) -> float:
    return parse_duration(args_of(spec).get("timeout"), type=type, default="30s")


_TIMEOUT_ARG = 'a duration with a unit (default "30s")'
_SCORE_BAR_ARG = "bar for a reply carrying only a score (default: none, and such a reply fails, as madbench reads an absent `pass` as false)"


# ---------------------------------------------------------------- python

# Runs in the child interpreter. User prints go to stderr so stdout carries only the reply.
_RUNNER = PY_ANSWER + r"""
import os, runpy, traceback
try:
    job = json.loads(sys.stdin.buffer.read())
    if job.get("path"):
        sys.path.insert(0, os.path.dirname(job["path"]))
        ns = runpy.run_path(job["path"], run_name="__benchtape_check__")
    else:
        ns = {"__name__": "__benchtape_check__"}
        exec(compile(job["source"], "<python check>", "exec"), ns)
    fn = ns.get("evaluate")
    if not callable(fn):
        emit({"error": "the script defines no evaluate(output, context)"})
    else:
        emit({"value": fn(job["output"], job["context"])})
except BaseException:
    emit({"error": traceback.format_exc(limit=-3)})
"""


def _defines_evaluate(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "evaluate":
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "evaluate" for t in node.targets):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == "evaluate" for a in node.names):
            return True
    return False


def _python_source(spec: CheckSpec) -> tuple[str | None, str | None]:
    """(inline source, file path) from `value`; inline source is compiled now."""
    v = spec.value
    if not isinstance(v, str) or not v.strip():
        raise CheckConfigError("python: 'value' (inline source, or file://path relative to the bench file) is required")
    if v.startswith("file://"):
        path = v[len("file://") :]
        if not path:
            raise CheckConfigError("python: 'value' file:// names no file")
        if os.path.isabs(path) and not os.path.isfile(path):
            raise CheckConfigError(f"python: grader {path} does not exist")
        return None, path
    try:
        tree = ast.parse(v, "<python check>")
        compile(tree, "<python check>", "exec")
    except SyntaxError as exc:
        snippet = _snippet(v)
        if snippet is None:
            raise CheckConfigError(f"python: the inline source does not compile: line {exc.lineno}: {exc.msg}") from exc
        return snippet, None
    if not _defines_evaluate(tree):
        snippet = _snippet(v)
        if snippet is None:
            raise CheckConfigError("python: the inline source must define evaluate(output, context), or be its body (`return 'done' in output`) or one expression")
        return snippet, None
    return v, None


# An inline snippet's scope, as madbench gives a script: output, vars, config, session, assertion, context.
_SNIPPET_HEAD = """def evaluate(output, context):
    vars, config, session, assertion = (context.get(k) or {} for k in ("vars", "config", "session", "assertion"))
"""


def _snippet(source: str) -> str | None:
    """A snippet madbench runs as a check's inline source (`return output.startswith('hel')`,
    or one expression: `'done' in output`), as the evaluate it stands for, or None when it is
    neither (the caller says why the source was refused)."""
    text = textwrap.dedent(source).strip("\n")
    try:
        ast.parse(text, "<python check>", mode="eval")
        body = f"return ({text}\n)"
    except SyntaxError:
        body = text
    wrapped = _SNIPPET_HEAD + textwrap.indent(body, "    ", lambda line: True)
    try:
        tree = ast.parse(wrapped, "<python check>")
        compile(tree, "<python check>", "exec")
    except SyntaxError:
        return None
    return wrapped if _returns(tree.body[0]) else None


def _returns(function: ast.AST) -> bool:
    """Whether the function's own body returns something (a `return` in a nested def or class is not its)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _script_result(value: Any, type: str, threshold: float | None) -> Result:
    """What a script grader's evaluate returned (python, ts, js): a bool, a score, or a Result."""
    if isinstance(value, bool):
        return Result.of(value, f"evaluate returned {value}", {"returned": value})
    if isinstance(value, (int, float)):
        score = float(value)
        if not 0 <= score <= 1:
            return Result.error(f"{type}: evaluate returned the score {value!r}, outside [0, 1]")
        return Result.of(score_passes(score, threshold), f"evaluate returned the score {score:g}", {"returned": score}, score=score)
    if isinstance(value, dict):
        return result_from_reply(value, type, threshold)
    return Result.error(f"{type}: evaluate returned {short(repr(value), 80)}; return a bool, a score in [0, 1], or {{pass, score, reason, evidence}}")


@register(
    "python",
    family="Script",
    open_args=True,  # the envelope hands args to the grader
    summary="a Python `evaluate(output, context)` run in its own interpreter process: a bool, a score in [0, 1], or {pass, score, reason, evidence}",
    reads="final_output; context = {vars, config, session (the grader envelope's), assertion, prompt}",
    args={
        "value": "inline source (a module defining evaluate; or, as madbench takes it, evaluate's body or one expression, with output, vars, config, session and assertion in scope), or file://path relative to the bench file (required)",
        "config": "any mapping, handed to the script as context['config']",
        "args.timeout": _TIMEOUT_ARG,
        "threshold": "bar for a returned score (default: above 0); a returned object with no `pass` passes only at this bar (with none it fails, as madbench reads an absent `pass` as false)",
    },
    example="type: python\nvalue: |\n  def evaluate(output, context):\n      return 'fixed' in output.lower()",
    errors=("no value", "inline source that does not compile or defines no evaluate", "a timeout with no unit", "ERROR: a relative file:// with no bench directory, a missing file, a crash, a timeout"),
    kind="Code",
    reads_workspace=True,
    preflight=lambda spec, pf: python_preflight(pf),
)
def python_check(spec: CheckSpec) -> Evaluator:
    source, path = _python_source(spec)
    timeout = _timeout(spec, "python")
    threshold = score_threshold(spec, None)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        job: dict[str, Any] = {"output": session.final_output or ""}
        if path is not None:
            if os.path.isabs(path):
                full = Path(path)
            elif ctx.bench_dir is None:
                return Result.error(f"python: file://{path} is relative, but no bench directory is known to resolve it against")
            else:
                full = Path(ctx.bench_dir) / path
            if not full.is_file():
                return Result.error(f"python: grader {full} does not exist")
            job["path"] = str(full.resolve())
        else:
            job["source"] = source
        env_doc = envelope(session, spec, ctx)
        job["context"] = {"vars": env_doc["vars"], "config": dict(spec.config or {}), "session": env_doc["session"], "assertion": env_doc["assertion"], "prompt": session.prompt}
        python = ctx.interpreter("python")
        if python is None:
            return Result.error("python: the grading sandbox has no Python interpreter (give the scenario an image with python3)")
        with _run_dir(ctx) as cwd:
            try:
                done = ctx.run_command([*python, "-I", "-c", _RUNNER], cwd, timeout, env=grading_env(), stdin=dumps_json(job))
            except OSError as exc:
                return Result.error(f"python: cannot start the interpreter: {exc}")
        log = done.output
        if done.timed_out:
            return Result.error(f"python: timed out after {format_seconds(timeout)}", {"output_tail": tail(log)})
        reply = runner_reply(log)
        if reply is None:
            return Result.error(f"python: the script produced no result (exit {done.exit_code})\n{tail(log)}", {"output_tail": tail(log)})
        if "error" in reply:
            return Result.error(f"python: {reply['error'].strip()}", {"output_tail": tail(log)})
        return _script_result(reply.get("value"), "python", threshold)

    return evaluate


# ---------------------------------------------------------------- custom:exec


def _exec_command(spec: CheckSpec) -> list[str]:
    cmd = args_of(spec).get("command")
    if cmd is not None:
        if not isinstance(cmd, list) or not cmd or not all(isinstance(a, str) for a in cmd):
            raise CheckConfigError("custom:exec: args.command must be a non-empty list of strings")
        return list(cmd)
    line = spec.value if isinstance(spec.value, str) and spec.value.strip() else None
    if line is None and spec.type.startswith("custom:exec:"):
        line = spec.type[len("custom:exec:") :]
    if not line:
        raise CheckConfigError("custom:exec: 'args.command' (a list) or 'value' (a command line) is required")
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise CheckConfigError(f"custom:exec: cannot split {line!r} into arguments: {exc}") from exc
    if not argv:
        raise CheckConfigError("custom:exec: the command is empty")
    return argv


def _resolve_paths(argv: list[str], bench_dir: Path | None) -> list[str]:
    """A relative path in argv[0] or argv[1] (`./grade.sh`, `python graders/g.py`) is
    relative to the bench file, as `file://` graders are; so is a bare file name as argv[1]
    (`python3 grader.py`) when the bench's folder holds that file. A bare argv[0] stays a
    program looked up on PATH (`python3` is never a file of the bench's)."""
    if bench_dir is None:
        return argv
    out = list(argv)
    for i in range(min(2, len(out))):
        a = out[i]
        beside = Path(bench_dir) / a
        if a and not os.path.isabs(a) and not a.startswith("-") and (beside.exists() if "/" in a else i == 1 and beside.is_file()):
            out[i] = str(beside.resolve())
    return out


def _exec_preflight(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """A grader program named by a path (`./graders/g.sh`, `python3 graders/g.py`: a path
    separator in the command's first two items, as madbench's preflight looks) that is not
    there stops the run before any spend (exit 3), where every session's check would ERROR
    after it. A relative path is the bench file's (_resolve_paths); an absolute one is looked
    for only when grading runs on this machine."""
    out = []
    for item in _exec_command(spec)[:2]:
        if "/" not in item or item.startswith("-"):
            continue
        if os.path.isabs(item):
            if pf.interpreter is None and not os.path.exists(item):
                out.append(f"custom:exec: the grader {item} does not exist")
            continue
        if pf.bench_dir is not None and not (Path(pf.bench_dir) / item).exists():
            out.append(f"custom:exec: the grader {item} does not exist beside the bench ({Path(pf.bench_dir) / item}): a relative path is the bench file's")
    return out


@register(
    "custom:exec",
    family="Custom",
    open_args=True,  # the envelope hands args to the grader
    summary="run a grader program: the envelope {version: madbench/v1, producer: benchtape, session, assertion, vars} on stdin, a Result JSON {pass, score, reason, evidence} as the last JSON line of stdout",
    reads="the whole session (envelope), the workspace as cwd",
    args={
        "args.command": "argv list (preferred); relative paths in its first two items resolve against the bench file (`./grade.sh`, `graders/g.py`, or `grader.py` as the second item when the bench's folder holds it)",
        "value": "a command line, split like a shell would (no shell runs); also accepted as the type suffix custom:exec:<command>",
        "args.timeout": _TIMEOUT_ARG,
        "threshold": _SCORE_BAR_ARG,
    },
    example="type: custom:exec\nargs: {command: [python3, graders/judge.py]}",
    errors=("no command", "unbalanced quotes", "a timeout with no unit", "ERROR: the program cannot start, times out, or prints no JSON result"),
    kind="Code",
    prefix=True,
    reads_workspace=True,
    preflight=_exec_preflight,
)
def custom_exec(spec: CheckSpec) -> Evaluator:
    argv = _exec_command(spec)
    timeout = _timeout(spec, "custom:exec")
    threshold = score_threshold(spec, None)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        full = _resolve_paths(argv, ctx.bench_dir)
        body = dumps_json(envelope(session, spec, ctx))
        with _run_dir(ctx) as cwd:
            try:
                done = ctx.run_command(full, cwd, timeout, env=grading_env(), stdin=body)
            except OSError as exc:
                return Result.error(f"custom:exec: cannot start {full[0]!r}: {exc.strerror or exc}")
        log = tail(done.output)
        if done.timed_out:
            return Result.error(f"custom:exec: {full[0]} timed out after {format_seconds(timeout)}", {"output_tail": log})
        reply = last_json_object(done.output)
        if reply is None:
            return Result.error(f"custom:exec: {full[0]} printed no JSON result (exit {done.exit_code})\n{log}", {"exit_code": done.exit_code, "output_tail": log})
        return result_from_reply(reply, "custom:exec", threshold)

    return evaluate


# ---------------------------------------------------------------- custom:http


def _url(spec: CheckSpec) -> str:
    url = args_of(spec).get("url")
    if url is None:
        url = spec.value
    if url is None and spec.type.startswith("custom:http:"):
        url = spec.type[len("custom:http:") :]
    if not isinstance(url, str) or not url:
        raise CheckConfigError("custom:http: 'args.url' or 'value' (an http or https URL) is required")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CheckConfigError(f"custom:http: {url!r} is not an http:// or https:// URL")
    return url


def _headers(spec: CheckSpec) -> dict[str, str]:
    raw = args_of(spec).get("headers") or {}
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in raw.items()):
        raise CheckConfigError("custom:http: args.headers must map header names to literal strings")
    if any("\n" in k or "\r" in k or "\n" in v or "\r" in v for k, v in raw.items()):
        raise CheckConfigError("custom:http: a header name or value contains a line break")
    return dict(raw)


@register(
    "custom:http",
    family="Custom",
    open_args=True,  # the envelope hands args to the grader
    summary="POST the envelope to a grading service; its JSON response {pass, score, reason, evidence} is the Result",
    reads="the whole session (envelope)",
    args={
        "args.url": "http:// or https:// URL (or `value`, or the type suffix)",
        "args.headers": "header name → literal string (no variables are expanded)",
        "args.timeout": _TIMEOUT_ARG,
        "threshold": _SCORE_BAR_ARG,
    },
    example="type: custom:http\nargs: {url: 'http://127.0.0.1:8080/grade', headers: {X-Bench: demo}}",
    errors=("no URL, or a scheme other than http/https", "headers that are not literal strings", "ERROR: unreachable, a non-2xx status, a timeout, or a reply that is not a Result"),
    kind="Service",
    prefix=True,
)
def custom_http(spec: CheckSpec) -> Evaluator:
    url = _url(spec)
    headers = _headers(spec)
    timeout = _timeout(spec, "custom:http")
    threshold = score_threshold(spec, None)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        import urllib.error  # urllib.request (http.client, email): loaded by the first custom:http check that runs
        import urllib.request

        body = dumps_json(envelope(session, spec, ctx))
        req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", "User-Agent": "benchtape", **headers})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - scheme checked at construction
                status, text = resp.status, resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace") if exc.fp else ""
            return Result.error(f"custom:http: {url} answered HTTP {exc.code}: {short(text.strip(), 300)}", {"status": exc.code})
        except TimeoutError:
            return Result.error(f"custom:http: {url} did not answer within {format_seconds(timeout)}")
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            return Result.error(f"custom:http: cannot reach {url}: {why}")
        try:
            reply = loads_json(text)
        except ValueError:
            return Result.error(f"custom:http: {url} answered {status} with no JSON result: {short(text.strip(), 300)}", {"status": status})
        return result_from_reply(reply, "custom:http", threshold)

    return evaluate


def python_preflight(pf: Any) -> list[str]:
    """Where python checks are graded must have a Python: this host always does (benchtape's
    own); a container image may not."""
    if pf.interpreter is not None and pf.interpreter("python") is None:
        return [f"python checks run with python3, which {pf.where} does not have: give the scenario an image with python3 (benchtape's base image has one)"]
    return []
