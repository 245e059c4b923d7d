"""Each Eval-file loading rule (madbench v0.23.0 §1.10), with the error a user sees and its line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.audit import Confounded, audit
from benchtape.spec.bench import load_bench
from benchtape.spec.evalfile import is_eval_file, load_eval

BENCH = """
description: d
harness: mock
params: {variant: a, word: hello}
scenarios:
  - name: says
    prompt: "say {{word}}"
    testdata: "data-{{variant}}"
    checks: [{type: contains, value: "{{word}}"}]
"""


def write(tmp_path: Path, text: str, name: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    for v in ("a", "b"):
        (tmp_path / f"data-{v}").mkdir()
        (tmp_path / f"data-{v}" / "app.py").write_text("print(1)\n")
    return write(tmp_path, BENCH, "bench.yaml")


def refused(tmp_path: Path, text: str) -> BadInput:
    with pytest.raises(BadInput) as info:
        load_eval(write(tmp_path, text, "eval.yaml"))
    assert info.value.file and info.value.file.endswith("eval.yaml")
    return info.value


def test_loads_runs_with_params_and_default_names(tmp_path, bench):
    ev = load_eval(write(tmp_path, "bench: bench.yaml\nruns:\n  - {}\n  - {name: b, params: {variant: b}}\n", "eval.yaml"))
    assert [r.name for r in ev.runs] == ["run-1", "b"]
    assert ev.runs[0].bench.scenarios[0].testdata.name == "data-a"
    assert ev.runs[1].bench.scenarios[0].testdata.name == "data-b"
    assert ev.control is None and is_eval_file(tmp_path / "eval.yaml") and not is_eval_file(bench)


@pytest.mark.parametrize("key,near", [("matrix", "cross product"), ("variations", "cross product"), ("contrl", "did you mean `control:`")])
def test_unknown_field_names_line_and_fix(tmp_path, bench, key, near):
    err = refused(tmp_path, f"bench: bench.yaml\nruns: [{{}}]\n{key}: {{}}\n")
    assert f"unknown key `{key}`" in err.what and err.line == 3 and near in err.fix


def test_missing_bench(tmp_path, bench):
    err = refused(tmp_path, "description: x\nruns: [{}]\n")
    assert "no `bench:`" in err.what and "bench: madbench.yaml" in err.fix


def test_empty_runs(tmp_path, bench):
    err = refused(tmp_path, "bench: bench.yaml\nruns: []\n")
    assert "`runs:` must be a non-empty list" in err.what and err.line == 2


def test_duplicate_run_names(tmp_path, bench):
    err = refused(tmp_path, "bench: bench.yaml\nruns:\n  - {name: run-2}\n  - {}\n")
    assert "same name 'run-2'" in err.what and err.line == 4 and "line 3" in err.fix


def test_undeclared_param_is_refused_at_the_run(tmp_path, bench):
    err = refused(tmp_path, "bench: bench.yaml\nruns:\n  - name: a\n    params:\n      variant: b\n      colour: red\n")
    assert "param 'colour' is not declared" in err.what and err.line == 6 and "run 'a'" in err.what


def test_eval_runs_eval(tmp_path, bench):
    write(tmp_path, "bench: bench.yaml\nruns: [{}]\n", "inner.yaml")
    err = refused(tmp_path, "description: x\nbench: inner.yaml\nruns: [{}]\n")
    assert "is itself an Eval file" in err.what and err.line == 2


def test_bench_loader_names_an_eval_file(tmp_path, bench):
    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, "bench: bench.yaml\nruns: [{}]\n", "eval.yaml"))
    assert "Eval file" in info.value.what and "benchtape run" in info.value.fix


def test_unknown_baseline(tmp_path, bench):
    err = refused(tmp_path, "bench: bench.yaml\ncontrol:\n  baseline: frist\nruns: [{name: first}]\n")
    assert "control.baseline 'frist' names no run" in err.what and err.line == 3 and "first" in err.fix


@pytest.mark.parametrize("pattern,why", [('""', "empty"), ("/etc/passwd", "absolute"), ("testdata/../../x", "escapes")])
def test_bad_varies_pattern(tmp_path, bench, pattern, why):
    err = refused(tmp_path, f"bench: bench.yaml\ncontrol:\n  varies: [{pattern}]\nruns: [{{}}]\n")
    assert "bad pattern" in err.what and why in err.what and err.line == 3


def test_eval_models_and_metrics_are_set_over_the_bench(tmp_path, bench):
    ev = load_eval(write(tmp_path, "bench: bench.yaml\nmodels: {fast: haiku-4.5}\nmetrics: [{name: rate, source: check.pass_rate}]\nruns: [{}]\n", "eval.yaml"))
    assert ev.not_built == []
    run_bench = ev.runs[0].bench
    assert run_bench.models["fast"].model == "claude-haiku-4-5" and [m["name"] for m in run_bench.metrics] == ["rate"]
    with pytest.raises(BadInput, match="unknown source"):
        load_eval(write(tmp_path, "bench: bench.yaml\nmetrics: [{name: r, source: check.passrate}]\nruns: [{}]\n", "eval2.yaml"))


def test_run_select_refuses_unknown(tmp_path, bench):
    ev = load_eval(write(tmp_path, "bench: bench.yaml\nruns: [{name: alpha}, {name: beta, params: {variant: b}}]\n", "eval.yaml"))
    assert [r.name for r in ev.select(["beta"])] == ["beta"]
    with pytest.raises(BadInput, match="--run 'alpah'"):
        ev.select(["alpah"])


# ---------------------------------------------------------------- the control audit


def two_runs(tmp_path: Path) -> list:
    ev = load_eval(write(tmp_path, "bench: bench.yaml\nruns: [{name: a}, {name: b, params: {variant: b}}]\n", "eval.yaml"))
    return [(r.name, r.bench) for r in ev.runs]


def test_audit_reports_byte_deltas_unguarded(tmp_path, bench):
    (tmp_path / "data-b" / "CLAUDE.md").write_text("be terse\n")
    report = audit(two_runs(tmp_path))
    change = report["runs"][1]["changes"][0]
    assert report["runs"][1]["status"] == "unguarded" and not report["confounded"]
    assert change == {"label": "testdata/CLAUDE.md", "kind": "added", "before_bytes": None, "after_bytes": 9, "delta": 9, "scenarios": ["says"], "covered_by": None}


def test_audit_enforced_uncovered_is_confounded(tmp_path, bench):
    (tmp_path / "data-b" / "app.py").write_text("print(2)\nprint(3)\n")
    with pytest.raises(Confounded) as info:
        audit(two_runs(tmp_path), varies=["testdata/CLAUDE.md"], enforced=True)
    run = info.value.report["runs"][1]
    assert run["status"] == "CONFOUNDED" and run["changes"][0]["label"] == "testdata/app.py" and run["changes"][0]["delta"] == 9
    assert info.value.report["unmatched_varies"] == ["testdata/CLAUDE.md"]


def test_audit_same_root_not_audited_and_harness_config_inputs(tmp_path, bench):
    b = write(tmp_path, BENCH.replace("harness: mock", "harness: mock\nharness_config: {system_prompt: '{{word}}', args: [--x, '{{word}}']}"), "bench.yaml")
    ev = load_eval(write(tmp_path, f"bench: {b.name}\nruns: [{{name: a}}, {{name: b, params: {{word: goodbye}}}}]\n", "eval.yaml"))
    report = audit([(r.name, r.bench) for r in ev.runs], varies=["harness_config.system_prompt"], enforced=False)
    labels = [c["label"] for c in report["runs"][1]["changes"]]
    assert labels == ["harness_config.args[1]", "harness_config.system_prompt"]
    assert report["runs"][1]["changes"][0]["delta"] == 2
