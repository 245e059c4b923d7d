"""A bench written as a madbench user writes it, `transform:` in JavaScript, through the real
`benchtape` command: it runs and passes under the mock harness (print mode), re-grades the
same; Python needs its marker; an unmarked Python transform is refused at load (exit 2,
file:line, the fix); no JavaScript runtime is a preflight block (exit 3, how to install)."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest
from cli import benchtape

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (.ci/run installs it)")

MADBENCH = """
description: answers, normalised before they are checked
harness: mock
defaults: {interactive: false, timeout: 60s}
scenarios:
  - name: shout
    prompt: "What is the answer? Reply in a sentence."
    vars: {answer: "42"}
    transform: output.trim().toUpperCase()
    mock:
      steps:
        - say: "  the answer is 42  "
    checks:
      - {type: equals, value: "THE ANSWER IS 42"}
      - {type: contains, value: "42", transform: "output.split(' ').filter(w => w).pop()"}
      - {type: equals, value: "true", transform: "String(output.includes(context.vars.answer))"}
      - {type: is-json, transform: "JSON.stringify({said: output.trim()})"}
      - {type: regex, value: "^[a-z ]+42$", transform: "output.trim()"}
      - {type: equals, value: "the answer is 42", transform: {python: "output.strip()"}}
"""


def _bench(tmp_path, text=MADBENCH):
    path = tmp_path / "bench.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@needs_node
def test_a_madbench_bench_with_javascript_transforms_passes_end_to_end(tmp_path):
    bench, db, report = _bench(tmp_path), tmp_path / "t.db", tmp_path / "r.json"
    pre = benchtape("preflight", bench)
    assert pre.returncode == 0, pre.stdout + pre.stderr
    assert "scenario 'shout': its Python transform ({python: ...} or file://….py) is benchtape's extension: madbench cannot run this scenario as written" in pre.stdout + pre.stderr
    out = benchtape("run", bench, "--db", db, "--report-json", report)
    assert out.returncode == 0, out.stdout + out.stderr
    [result] = json.loads(report.read_text())["results"]
    assert result["status"] == "pass"
    assert [c["result"]["pass"] for c in result["checks"]] == [True] * 6, result["checks"]
    regraded = benchtape("grade", "--all", "--db", db)  # the transforms run again, the same verdicts
    assert regraded.returncode == 0 and "DIVERGED" not in regraded.stdout, regraded.stdout + regraded.stderr
    assert "6/6 verdicts reproduced" in regraded.stdout


def test_an_unmarked_python_transform_is_refused_at_load(tmp_path):
    bench = _bench(tmp_path, MADBENCH.replace("output.trim().toUpperCase()", "output.strip().upper()"))
    out = benchtape("list", bench)
    assert out.returncode == 1, out.stdout + out.stderr  # `list` exits 1 on a load error, as madbench's does
    assert f"{bench.name}:8: `transform: output.strip().upper()` reads as Python" in out.stderr
    assert 'fix: write it in JavaScript (e.g. `output.toUpperCase()`), or mark it as Python: `transform: {python: "output.strip().upper()"}`' in out.stderr


def test_no_javascript_runtime_blocks_at_preflight_naming_how_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    out = benchtape("preflight", _bench(tmp_path), env={"PATH": str(empty)})
    assert out.returncode == 3, out.stdout + out.stderr
    assert "scenario 'shout': its 5 JavaScript transforms run with node, which is not on PATH: apt-get install nodejs" in out.stderr
    assert "npm install bun" in out.stderr  # the other way out


@needs_node
def test_a_javascript_transform_that_does_not_compile_blocks_at_preflight(tmp_path):
    out = benchtape("preflight", _bench(tmp_path, MADBENCH.replace("output.trim().toUpperCase()", "output.trim(.toUpperCase()")))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "the JavaScript transform `output.trim(.toUpperCase()` does not compile: SyntaxError" in out.stderr
