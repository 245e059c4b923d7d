"""`custom:gosrc`: a grader written in Go (standard library only), built once and run like
`custom:exec`: the envelope on stdin, a Result JSON on stdout.

The build is cached by sha256(source + GOOS/GOARCH + Go version), so a bench's grader is
compiled once per toolchain, not once per session. The toolchain is the one where grading
commands run (`ctx.interpreter("go")`), so a container grades with the binary its own Go
built. The source is staged, built and run inside the grading folder (the only place the
host and a container both see), and removed again; built binaries are kept in benchtape's
cache folder (`$BENCHTAPE_CACHE`, else `$XDG_CACHE_HOME/benchtape`, else
`~/.cache/benchtape`). Preflight builds it too, so a source that does not compile stops
the run before anything is spent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, Mapping

from benchtape.checks.code import _TIMEOUT_ARG, _run_dir, _timeout
from benchtape.checks.common import args_of, bench_relative, dumps_json, format_seconds, grader_file, score_threshold, tail
from benchtape.checks.envelope import envelope, last_json_object, result_from_reply
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, PreflightContext, register
from benchtape.core.command_runner import CommandResult, grading_env
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

TYPE = "custom:gosrc"
GO_INSTALL = "apt-get install golang-go (or https://go.dev/dl)"
BUILD_TIMEOUT = 300.0
_FACTS: dict[tuple[tuple[str, ...], int], tuple[str, str]] = {}
_FACTS_LOCK = threading.Lock()


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("BENCHTAPE_CACHE"):
        return Path(env["BENCHTAPE_CACHE"])
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "benchtape"


def build_key(source: str, target: str, version: str) -> str:
    return hashlib.sha256(b"\0".join(x.encode("utf-8") for x in (source, target, version))).hexdigest()


def build_env(scratch: str) -> dict[str, str]:
    """A build that downloads nothing and needs no cgo: the binary runs where it was built."""
    return {
        **grading_env(),
        "CGO_ENABLED": "0",
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-buildvcs=false",
        "GOPROXY": "off",
        "GOCACHE": f"{scratch}/benchtape-gocache",
        "GOPATH": f"{scratch}/benchtape-gopath",
    }


def _source_ref(spec: CheckSpec) -> tuple[str | None, str | None]:
    """(inline source, path) from `inline`, `value`, or the type suffix."""
    inline = spec.inline
    path = grader_file(spec, TYPE, ".go")
    if inline is not None and path is not None:
        raise CheckConfigError(f"{TYPE}: give the source once: `inline:` or a path (value, or the type suffix), not both")
    if inline is not None:
        if not isinstance(inline, str) or "package main" not in inline:
            raise CheckConfigError(f"{TYPE}: `inline:` must be a Go program (`package main` with a main function)")
        return inline, None
    if path is None:
        raise CheckConfigError(f"{TYPE}: the Go source is required: `inline:`, `value: ./grader.go`, or `type: custom:gosrc:./grader.go`")
    return None, path


def _facts(go: list[str], run: Callable[..., CommandResult], cwd: Path) -> tuple[str, str] | str:
    """(GOOS/GOARCH, Go version) of the toolchain, or the reason it did not answer."""
    key = (tuple(go), id(run))
    with _FACTS_LOCK:
        if key in _FACTS:
            return _FACTS[key]
    done = run([*go, "env", "GOOS", "GOARCH", "GOVERSION"], cwd, 60, env=build_env("/tmp"))
    lines = [ln.strip() for ln in (done.output or "").splitlines() if ln.strip()]
    if done.exit_code != 0 or len(lines) < 3:
        return f"`go env` failed (exit {done.exit_code}): {tail(done.output or '')}"
    facts = (f"{lines[0]}/{lines[1]}", lines[2])
    with _FACTS_LOCK:
        _FACTS[key] = facts
    return facts


def compile_error(label: str, output: str) -> str:
    return f"{label} does not compile:\n{tail(output)}"


def gosrc_check(spec: CheckSpec) -> Evaluator:
    inline, path = _source_ref(spec)
    timeout = _timeout(spec, TYPE)
    threshold = score_threshold(spec, None)
    args_of(spec)
    where = f" ({spec.where})" if spec.where.file else ""

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        if inline is not None:
            source, label = inline, "the inline Go source"
        else:
            assert path is not None  # _source_ref gives a path whenever it gives no inline source
            full = bench_relative(path, ctx.bench_dir)
            if full is None:
                return Result.error(f"{TYPE}{where}: {path} is relative, but no bench directory is known to resolve it against")
            if not full.is_file():
                return Result.error(f"{TYPE}{where}: grader {full} does not exist")
            source, label = full.read_text(encoding="utf-8"), str(full)
        go = ctx.interpreter("go")
        if go is None:
            return Result.error(f"{TYPE}{where}: no Go toolchain where grading runs: {GO_INSTALL}")
        body = dumps_json(envelope(session, spec, ctx))
        with _run_dir(ctx) as cwd:
            facts = _facts(go, ctx.run_command, cwd)
            if isinstance(facts, str):
                return Result.error(f"{TYPE}{where}: {facts}")
            key = build_key(source, *facts)
            cached = cache_dir() / "gosrc" / key / "grader"
            stage = Path(cwd) / f".benchtape-gosrc-{key[:16]}"
            try:
                stage.mkdir(exist_ok=True)
                if cached.is_file():
                    shutil.copy2(cached, stage / "grader")
                else:
                    (stage / "main.go").write_text(source, encoding="utf-8")
                    built = ctx.run_command([*go, "build", "-o", "grader", "main.go"], stage, BUILD_TIMEOUT, env=build_env("/tmp"))
                    if built.timed_out:
                        return Result.error(f"{TYPE}{where}: go build timed out after {format_seconds(BUILD_TIMEOUT)}")
                    if built.exit_code != 0 or not (stage / "grader").is_file():
                        return Result.error(f"{TYPE}{where}: {compile_error(label, built.output)}", {"build_output": tail(built.output)})
                    _keep(stage / "grader", cached)
                done = ctx.run_command([f"./{stage.name}/grader"], cwd, timeout, env=grading_env(), stdin=body)
            finally:
                shutil.rmtree(stage, ignore_errors=True)
        log = tail(done.output)
        if done.timed_out:
            return Result.error(f"{TYPE}{where}: the grader timed out after {format_seconds(timeout)}", {"output_tail": log})
        reply = last_json_object(done.output)
        if reply is None:
            return Result.error(f"{TYPE}{where}: the grader printed no JSON result (exit {done.exit_code})\n{log}", {"exit_code": done.exit_code, "output_tail": log})
        result = result_from_reply(reply, TYPE, threshold)
        result.evidence.setdefault("build", key[:16])
        return result

    return evaluate


def _keep(binary: Path, cached: Path) -> None:
    """Into the cache atomically: two graders building at once both land a whole file."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".grader-")
    os.close(fd)
    shutil.copy2(binary, tmp)
    os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, cached)


def preflight(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """go on PATH, the source present, and the source compiling (built into the cache now,
    so grading finds it there)."""
    try:
        inline, path = _source_ref(spec)
    except CheckConfigError as exc:
        return [str(exc)]
    go = shutil.which("go", path=pf.env.get("PATH"))
    if go is None:
        return [f"{TYPE} needs the Go toolchain, which is not on PATH: {GO_INSTALL}"]
    if inline is not None:
        source, label = inline, "the inline Go source"
    else:
        assert path is not None  # _source_ref gives a path whenever it gives no inline source
        full = bench_relative(path, pf.bench_dir)
        if full is None or not full.is_file():
            return [f"grader {TYPE}: {full or path} does not exist (a path is relative to the bench file)"]
        source, label = full.read_text(encoding="utf-8"), str(full)
    with tempfile.TemporaryDirectory(prefix="benchtape-gosrc-") as scratch:
        from benchtape.core.command_runner import run_local

        facts = _facts([go], run_local, Path(scratch))
        if isinstance(facts, str):
            return [f"{TYPE}: {facts}"]
        cached = cache_dir(pf.env) / "gosrc" / build_key(source, *facts) / "grader"
        if cached.is_file():
            return []
        (Path(scratch) / "main.go").write_text(source, encoding="utf-8")
        try:
            done = subprocess.run([go, "build", "-o", "grader", "main.go"], cwd=scratch, env=build_env(scratch), capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            return [f"{TYPE}: go build of {label} timed out after {BUILD_TIMEOUT:g}s"]
        if done.returncode != 0:
            return [f"{TYPE}: {compile_error(label, done.stdout + done.stderr)}"]
        _keep(Path(scratch) / "grader", cached)
    return []


register(
    TYPE,
    family="Custom",
    open_args=True,  # the envelope hands args to the grader
    summary="a Go grader (standard library only), built with `go build` (cached by sha256 of source + GOOS/GOARCH + Go version) and run like custom:exec: the envelope on stdin, a Result JSON on stdout",
    reads="the whole session (envelope), the workspace as cwd",
    args={
        "inline": "the Go program itself (`package main`)",
        "value": "a .go file relative to the bench file (or the type suffix custom:gosrc:./grader.go)",
        "args.timeout": _TIMEOUT_ARG,
        "threshold": "bar for a reply carrying only a score (default: above 0)",
    },
    example='type: custom:gosrc\ninline: |\n  package main\n\n  import ("encoding/json"; "os"; "strings")\n\n  func main() {\n    var env struct{ Session struct{ FinalOutput string `json:"final_output"` } `json:"session"` }\n    json.NewDecoder(os.Stdin).Decode(&env)\n    ok := strings.Contains(env.Session.FinalOutput, "fixed")\n    json.NewEncoder(os.Stdout).Encode(map[string]any{"pass": ok, "reason": "says fixed"})\n  }',
    errors=(
        "no source, or both inline and a path; a path that is not a .go file; inline that is not `package main`",
        "preflight: no go on PATH; a missing source file; a source that does not compile (the compiler's message)",
        "ERROR: no Go where grading runs; a missing file; a compile error; a timeout; no JSON result",
    ),
    kind="Code",
    prefix=True,
    reads_workspace=True,
    preflight=preflight,
)(gosrc_check)
