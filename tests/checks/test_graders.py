"""ts/js, custom:gosrc, custom:wasm and model:current: real runtimes (node, bun, go,
wasmtime) on real mock sessions; each one's preflight names what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gradekit import spec
from mocksession import mock_session

from benchtape.checks.registry import CheckContext, PreflightContext, build, catalog, preflight_problems
from benchtape.core.command_runner import local_interpreter

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")
GO = shutil.which("go")


def _bun() -> str | None:
    """bun on PATH, or where .ci/run installs it (npm, into a local prefix)."""
    found = shutil.which("bun")
    ci = HERE.parents[1] / ".ci" / "tools" / "node_modules" / ".bin" / "bun"
    return found or (str(ci) if ci.exists() else None)


BUN = _bun()
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs it)")
needs_go = pytest.mark.skipif(GO is None, reason="go is not installed (.ci/run installs golang-go)")
needs_bun = pytest.mark.skipif(BUN is None, reason="bun is not installed (.ci/run installs it with npm)")


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("fixed"), [{"say": "fixed: 3 tests pass"}], prompt="fix it")


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("broken"), [{"say": "gave up"}], prompt="please")


def with_bun(ctx_kw: dict | None = None, pin: str = "1") -> CheckContext:
    return CheckContext(runtimes={"bun": pin}, interpreter=lambda n: [BUN] if n == "bun" else local_interpreter(n), **(ctx_kw or {}))


# ---------------------------------------------------------------- js / ts


@needs_node
@pytest.mark.parametrize(
    "value,passed,score",
    [
        ("output.includes('fixed')", True, 1.0),
        ("output.includes('nope')", False, 0.0),
        ("const n = output.split(' ').length;\nreturn {pass: n > 2, score: 0.75, reason: `${n} words`, evidence: {n}}", True, 0.75),
        ("export async function evaluate(output, context) { return context.vars.want === 'x' ? 0.6 : 0 }", True, 0.6),
        ("function evaluate(output) { return output.startsWith('fixed') }", True, 1.0),
    ],
)
def test_js_snippets_and_modules(fixed, value, passed, score):
    r = build(spec({"type": "js", "value": value})).evaluate(fixed, CheckContext(vars={"want": "x"}))
    assert (r.passed, r.score) == (passed, score), r.reason


@needs_node
@pytest.mark.parametrize("value", ["output.includes('fixed')", "throw new Error('no')", "export const nothing = 1;"])
def test_an_inline_script_leaves_no_scratch_folder_behind(fixed, tmp_path, monkeypatch, value):
    """An inline script is written to a scratch folder to be imported: it is removed after, however
    the script ends (a regrade of 10,000 sessions left 10,000 folders in the temp dir)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    r = build(spec({"type": "js", "value": value})).evaluate(fixed, CheckContext())
    assert r.status in ("PASS", "FAIL", "ERROR"), r.reason
    assert list(temp.iterdir()) == []


@needs_node
def test_an_inline_script_killed_on_its_timeout_leaves_no_scratch_folder_either(fixed, tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    r = build(spec({"type": "js", "value": "while (true) {}", "args": {"timeout": "1s"}})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR" and "timed out" in r.reason, r.reason
    assert list(temp.iterdir()) == []


@needs_node
def test_js_file_relative_to_the_bench_with_its_own_imports(fixed, tmp_path):
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "helper.mjs").write_text("export const ok = (o) => o.includes('fixed');\n")
    (tmp_path / "graders" / "check.mjs").write_text(
        "import { ok } from './helper.mjs';\n"
        "export function evaluate(output, context) {\n"
        "  console.log('a grader log line');\n"
        "  return { pass: ok(output), reason: context.session.final_output, evidence: { cfg: context.config.level, tools: context.session.calls.length } };\n"
        "}\n"
    )
    r = build(spec({"type": "js", "value": "file://graders/check.mjs", "config": {"level": 3}})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "PASS" and r.reason == "fixed: 3 tests pass" and r.evidence == {"cfg": 3, "tools": 0}


@needs_node
def test_js_errors(fixed, tmp_path):
    r = build(spec({"type": "js", "value": "export function evaluate() { throw new Error('boom') }"})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR" and "Error: boom" in r.reason
    r = build(spec({"type": "js", "value": "export const x = 1; function evaluate() {}"})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR"
    r = build(spec({"type": "js", "value": "file://missing.mjs"})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "does not exist" in r.reason
    r = build(spec({"type": "js", "value": "while (true) {}", "args": {"timeout": "1s"}})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR" and "timed out after 1s" in r.reason
    r = build(spec({"type": "js", "value": "output.length"})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR" and "outside [0, 1]" in r.reason


def test_a_missing_runtime_where_grading_runs_is_named(fixed):
    nothing = CheckContext(interpreter=lambda n: None)
    r = build(spec({"type": "js", "value": "true"})).evaluate(fixed, nothing)
    assert r.status == "ERROR" and "no node" in r.reason and "apt-get install nodejs" in r.reason
    r = build(spec({"type": "ts", "value": "true"})).evaluate(fixed, CheckContext(runtimes={"bun": "1"}, interpreter=lambda n: None))
    assert r.status == "ERROR" and "no bun" in r.reason and "npm install bun" in r.reason
    r = build(spec({"type": "custom:gosrc", "inline": "package main\nfunc main() {}\n"})).evaluate(fixed, nothing)
    assert r.status == "ERROR" and "apt-get install golang-go" in r.reason


@needs_bun
def test_ts_with_a_pinned_bun(fixed):
    ts = "export function evaluate(output: string, context: { vars: Record<string, string> }): { pass: boolean; score: number } {\n  return { pass: output.length > 3, score: 0.9 };\n}"
    r = build(spec({"type": "ts", "value": ts})).evaluate(fixed, with_bun())
    assert r.status == "PASS" and r.score == 0.9
    r = build(spec({"type": "ts", "value": ts})).evaluate(fixed, with_bun(pin="0.1"))
    assert r.status == "ERROR" and "defaults.bun: 0.1" in r.reason and "npm install bun@0.1" in r.reason
    r = build(spec({"type": "js", "value": "typeof Bun !== 'undefined'"})).evaluate(fixed, with_bun())
    assert r.status == "PASS"  # js runs under bun too when bun is pinned


@needs_node
def test_ts_under_node_strips_types_or_says_why_it_cannot(fixed):
    r = build(spec({"type": "ts", "value": "export function evaluate(o: string): boolean { return o.length > 3 }"})).evaluate(fixed, CheckContext())
    if subprocess.run([NODE, "--experimental-strip-types", "-e", "0"], capture_output=True).returncode == 0:
        assert r.status == "PASS"
    else:
        assert r.status == "ERROR" and "node 22.6 or newer" in r.reason and "defaults.bun" in r.reason


# ---------------------------------------------------------------- custom:gosrc

GRADER = """package main

import (
\t"encoding/json"
\t"os"
\t"strings"
)

func main() {
\tvar env struct {
\t\tSession struct {
\t\t\tFinalOutput string `json:"final_output"`
\t\t} `json:"session"`
\t\tVars map[string]string `json:"vars"`
\t}
\tjson.NewDecoder(os.Stdin).Decode(&env)
\tok := strings.Contains(env.Session.FinalOutput, env.Vars["want"])
\tscore := 0.0
\tif ok {
\t\tscore = 1
\t}
\tjson.NewEncoder(os.Stdout).Encode(map[string]any{"pass": ok, "score": score, "reason": "looked for " + env.Vars["want"]})
}
"""


@pytest.fixture
def gocache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHTAPE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@needs_go
def test_gosrc_builds_once_and_grades(fixed, broken, tmp_path, gocache):
    (tmp_path / "grader.go").write_text(GRADER)
    ctx = CheckContext(bench_dir=tmp_path, vars={"want": "fixed"}, work_dir=Path(fixed.work_dir))
    for type_, value in (("custom:gosrc", "grader.go"), ("custom:gosrc:grader.go", None)):
        r = build(spec({"type": type_, "value": value} if value else {"type": type_})).evaluate(fixed, ctx)
        assert r.status == "PASS" and r.reason == "looked for fixed", r.reason
    builds = list(gocache.glob("gosrc/*/grader"))
    assert len(builds) == 1  # one source, one toolchain: one build
    stamp = builds[0].stat().st_mtime_ns
    r = build(spec({"type": "custom:gosrc", "value": "grader.go"})).evaluate(broken, CheckContext(bench_dir=tmp_path, vars={"want": "fixed"}, work_dir=Path(broken.work_dir)))
    assert r.status == "FAIL" and builds[0].stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert not list(Path(fixed.work_dir).glob(".benchtape-gosrc-*"))  # nothing left in the workspace


@needs_go
def test_gosrc_that_does_not_compile_names_the_check_and_the_compiler_line(fixed, tmp_path, gocache):
    bad = spec({"type": "custom:gosrc", "inline": "package main\n\nfunc main() {\n\tx := 1\n}\n"})
    from dataclasses import replace

    from benchtape.core.results import Where

    bad = replace(bad, where=Where(str(tmp_path / "bench.yaml"), 7))
    r = build(bad).evaluate(fixed, CheckContext())
    assert r.status == "ERROR"
    assert f"custom:gosrc ({tmp_path / 'bench.yaml'}:7): the inline Go source does not compile" in r.reason
    assert "main.go:4:2: x declared" in r.reason
    problems = preflight_problems(bad, PreflightContext(env=dict(os.environ)))
    assert len(problems) == 1 and "does not compile" in problems[0] and "x declared" in problems[0]


@needs_go
def test_gosrc_preflight_builds_into_the_cache(tmp_path, gocache):
    (tmp_path / "grader.go").write_text(GRADER)
    assert preflight_problems(spec({"type": "custom:gosrc", "value": "grader.go"}), PreflightContext(bench_dir=tmp_path, env=dict(os.environ))) == []
    assert len(list(gocache.glob("gosrc/*/grader"))) == 1


def test_gosrc_refusals():
    for check, message in [
        ({"type": "custom:gosrc"}, "the Go source is required"),
        ({"type": "custom:gosrc", "value": "x.py"}, "is not a .go file"),
        ({"type": "custom:gosrc", "inline": "fmt.Println()"}, "package main"),
        ({"type": "custom:gosrc", "value": "a.go", "inline": "package main"}, "not both"),
    ]:
        with pytest.raises(Exception, match=message):
            build(spec(check))


def test_gosrc_preflight_without_go_names_the_install(tmp_path):
    (tmp_path / "g.go").write_text(GRADER)
    problems = preflight_problems(spec({"type": "custom:gosrc", "value": "g.go"}), PreflightContext(bench_dir=tmp_path, env={"PATH": str(tmp_path)}))
    assert problems == ["custom:gosrc needs the Go toolchain, which is not on PATH: apt-get install golang-go (or https://go.dev/dl)"]


# ---------------------------------------------------------------- custom:wasm


def wat(tmp_path: Path, name: str, text: str) -> str:
    import wasmtime

    (tmp_path / name).write_bytes(wasmtime.wat2wasm(text))
    return name


ABI = '(memory (export "memory") 1) (func (export "alloc") (param i32) (result i32) i32.const 1024) (func (export "free") (param i32 i32))'


def test_wasm_grades_with_the_spec_abi(fixed, broken, tmp_path):
    wat(tmp_path, "g.wasm", (HERE / "graders" / "contains_fixed.wat").read_text())
    check = build(spec({"type": "custom:wasm", "value": "g.wasm"}))
    assert check.evaluate(fixed, CheckContext(bench_dir=tmp_path)).status == "PASS"
    r = check.evaluate(broken, CheckContext(bench_dir=tmp_path))
    assert (r.status, r.reason) == ("FAIL", "no fixed")
    assert build(spec({"type": "custom:wasm:g.wasm"})).evaluate(fixed, CheckContext(bench_dir=tmp_path)).status == "PASS"


def test_wasm_without_the_exports_is_refused_at_preflight_and_errors_naming_them(fixed, tmp_path):
    wat(tmp_path, "bare.wasm", '(module (memory (export "memory") 1) (func (export "evaluate") (param i32 i32) (result i64) i64.const 0))')
    check = spec({"type": "custom:wasm", "value": "bare.wasm"})
    [problem] = preflight_problems(check, PreflightContext(bench_dir=tmp_path))
    assert "does not export alloc, free" in problem and str(tmp_path / "bare.wasm") in problem
    r = build(check).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "does not export alloc, free" in r.reason
    (tmp_path / "junk.wasm").write_bytes(b"not wasm")
    [problem] = preflight_problems(spec({"type": "custom:wasm", "value": "junk.wasm"}), PreflightContext(bench_dir=tmp_path))
    assert "not a valid WebAssembly module" in problem
    [problem] = preflight_problems(spec({"type": "custom:wasm", "value": "gone.wasm"}), PreflightContext(bench_dir=tmp_path))
    assert "gone.wasm does not exist" in problem


def test_wasm_limits_time_memory_and_bounds(fixed, tmp_path):
    loop = wat(tmp_path, "loop.wasm", f'(module {ABI} (func (export "evaluate") (param i32 i32) (result i64) (loop $l (br $l)) i64.const 0))')
    r = build(spec({"type": "custom:wasm", "value": loop})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "ran past the 5 s limit" in r.reason
    big = wat(tmp_path, "big.wasm", '(module (memory (export "memory") 1100) (func (export "alloc") (param i32) (result i32) i32.const 0) (func (export "free") (param i32 i32)) (func (export "evaluate") (param i32 i32) (result i64) i64.const 0))')
    r = build(spec({"type": "custom:wasm", "value": big})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "exceeds memory limits" in r.reason
    grow = wat(tmp_path, "grow.wasm", f'(module {ABI} (func (export "evaluate") (param i32 i32) (result i64) (i64.extend_i32_s (memory.grow (i32.const 1100)))))')
    r = build(spec({"type": "custom:wasm", "value": grow})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "outside its memory" in r.reason  # grow refused (-1): a bogus answer, never 70 MiB
    trap = wat(tmp_path, "trap.wasm", f'(module {ABI} (func (export "evaluate") (param i32 i32) (result i64) unreachable))')
    r = build(spec({"type": "custom:wasm", "value": trap})).evaluate(fixed, CheckContext(bench_dir=tmp_path))
    assert r.status == "ERROR" and "unreachable" in r.reason


def test_wasm_refusals():
    with pytest.raises(Exception, match="the module is required"):
        build(spec({"type": "custom:wasm"}))
    with pytest.raises(Exception, match="is not a .wasm file"):
        build(spec({"type": "custom:wasm", "value": "g.wat"}))


# ---------------------------------------------------------------- model:current

LISTING = [
    {"id": "claude-sonnet-4-5", "created": "2025-09-29T00:00:00Z", "provider": "a"},
    {"id": "claude-sonnet-4", "created": "2025-05-14T00:00:00Z", "provider": "a"},
    {"id": "claude-haiku-4-5", "created": "2025-10-01T00:00:00Z", "provider": "a"},
]


def catalog_of(listing):
    return lambda provider=None: listing


def test_model_current_standings_and_utilities(tmp_path):
    ws = tmp_path / "ws"
    s = mock_session(ws, [{"tool": "Write", "input": {"file_path": "config.json", "content": '{"models": ["claude-sonnet-4-5", "claude-sonnet-4", "claude-3-opus-20240229", "claude-7-ultra"]}'}}, {"say": "wrote config"}])
    check = {"type": "model:current", "args": {"file": "config.json", "path": "models", "require": "retired"}}
    r = build(spec(check)).evaluate(s, CheckContext(work_dir=ws, catalog=catalog_of(LISTING)))
    assert [(i["id"], i["standing"]) for i in r.evidence["ids"]] == [("claude-sonnet-4-5", "current"), ("claude-sonnet-4", "superseded"), ("claude-3-opus-20240229", "retired"), ("claude-7-ultra", "unknown")]
    assert r.score == pytest.approx((1 + 2 / 3 + 1 / 3 + 0) / 4)
    assert r.status == "FAIL" and "claude-7-ultra (unknown)" in r.reason


def test_model_current_reads_the_output_and_halves_routes(tmp_path):
    s = mock_session(tmp_path / "a", [{"say": "Use claude-haiku-4-5 (or openrouter/claude-sonnet-4-5)."}])
    r = build(spec({"type": "model:current"})).evaluate(s, CheckContext(catalog=catalog_of(LISTING)))
    assert r.status == "PASS" and [i["utility"] for i in r.evidence["ids"]] == [1.0, 0.5]
    r = build(spec({"type": "model:current", "args": {"allow_routes": True}})).evaluate(s, CheckContext(catalog=catalog_of(LISTING)))
    assert r.score == 1.0
    none = mock_session(tmp_path / "b", [{"say": "no ids here"}])
    r = build(spec({"type": "model:current"})).evaluate(none, CheckContext(catalog=catalog_of(LISTING)))
    assert r.status == "FAIL" and "fewer than min_count 1" in r.reason


def test_model_current_unreachable_catalog_fails_and_none_errors(fixed):
    def down(provider=None):
        raise ConnectionError("nothing listens")

    r = build(spec({"type": "model:current"})).evaluate(fixed, CheckContext(catalog=down))
    assert r.status == "FAIL" and "unreachable: nothing listens" in r.reason
    r = build(spec({"type": "model:current"})).evaluate(fixed, CheckContext())
    assert r.status == "ERROR" and "no model catalog configured" in r.reason


def test_model_current_through_a_providers_listing(fixed):
    """The service lists models from the judge providers' own endpoints (the scripted
    server lists none, so every id is unknown; a dead endpoint is unreachable)."""
    from judgekit import local

    from benchtape.models.judge_service import JudgeService
    from benchtape.models.server import serve

    s = fixed.with_output("use claude-haiku-4-5")
    with serve({}) as srv:
        service = JudgeService(local(srv.openai_url), {})
        r = build(spec({"type": "model:current"})).evaluate(s, CheckContext(catalog=service.catalog))
        assert srv.entries(api="models")
    assert r.status == "FAIL" and r.evidence["catalog_size"] == 0 and r.evidence["ids"][0]["standing"] == "unknown"
    dead = JudgeService(local("http://127.0.0.1:9/v1", retries=0, timeout=2), {})
    r = build(spec({"type": "model:current"})).evaluate(s, CheckContext(catalog=dead.catalog))
    assert r.status == "FAIL" and "unreachable" in r.reason


def test_model_current_refusals():
    with pytest.raises(Exception, match="args.require must be one of"):
        build(spec({"type": "model:current", "args": {"require": "newest"}}))
    with pytest.raises(Exception, match="args.min_count"):
        build(spec({"type": "model:current", "args": {"min_count": -1}}))


def test_kinds():
    kinds = {t: catalog()[t].kind for t in ("ts", "js", "custom:gosrc", "custom:wasm", "custom:http", "model:current")}
    assert kinds == {"ts": "Code", "js": "Code", "custom:gosrc": "Code", "custom:wasm": "Code", "custom:http": "Service", "model:current": "Service"}


def test_a_custom_exec_grader_path_that_is_not_there_stops_preflight(tmp_path):
    """madbench's preflight blocks on a command[0]/[1] with a path separator that does not exist;
    benchtape said `preflight: ok` and every session's check then errored."""
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "g.py").write_text("print('{}')\n")
    ok = [{"command": ["python3", "graders/g.py"]}, {"command": ["python3", "-c", "x/y"]}, {"command": [sys.executable, "graders/g.py"]}]
    for args in ok:
        assert preflight_problems(spec({"type": "custom:exec", "args": args}), PreflightContext(bench_dir=tmp_path)) == [], args
    [first, second] = [
        preflight_problems(spec({"type": "custom:exec", "args": {"command": command}}), PreflightContext(bench_dir=tmp_path))
        for command in (["./graders/missing.sh"], ["python3", "graders/missing.py"])
    ]
    assert first == [f"custom:exec: the grader ./graders/missing.sh does not exist beside the bench ({tmp_path}/graders/missing.sh): a relative path is the bench file's"]
    assert "graders/missing.py does not exist beside the bench" in second[0]
    [gone] = preflight_problems(spec({"type": "custom:exec", "value": "/nonexistent/grade.sh --strict"}), PreflightContext(bench_dir=tmp_path))
    assert gone == "custom:exec: the grader /nonexistent/grade.sh does not exist"
