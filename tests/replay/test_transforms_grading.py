"""Output transforms at grading: run by the grading host's interpreter (real node, real
python3 subprocesses with the scrubbed grading environment), never inside benchtape; one
session's transforms in one process per language; a failure errors only what read it."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest
from mocksession import mock_session

from benchtape.checks.registry import CheckContext, build
from benchtape.core.results import CheckSpec
from benchtape.replay.grading import GradingContext, NoWorkspace, build_checks, grade_session
from benchtape.spec.bench import load_bench

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs it)")
BUN = shutil.which("bun") or next((str(p) for p in [Path(__file__).resolve().parents[2] / ".ci" / "tools" / "node_modules" / ".bin" / "bun"] if p.exists()), None)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("s"), [{"say": "fixed it"}], prompt="fix it")


@pytest.fixture
def node_calls(tmp_path, monkeypatch):
    """A `node` first on PATH that counts its starts, then is the real node."""
    if NODE is None:
        pytest.skip("node is not installed")
    shim, log = tmp_path / "shim", tmp_path / "node-starts"
    shim.mkdir()
    (shim / "node").write_text(f"#!/bin/sh\necho started >> {log}\nexec {NODE} \"$@\"\n")
    (shim / "node").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    return lambda: len(log.read_text().splitlines()) if log.exists() else 0


def grade(session, specs, transform=None, vars=None, bench_dir=None, runtimes=None):
    verdicts = grade_session(session, build_checks(specs), NoWorkspace(), GradingContext(bench_dir, vars or {}, transform, False, runtimes or {}))
    return [(v.result.status, v.result.reason) for v in verdicts]


def statuses(verdicts):
    return [s for s, _ in verdicts]


def test_every_transform_of_a_session_runs_in_one_node_process(session, node_calls):
    specs = [CheckSpec(type="contains", value="FIXED IT")]  # reads the scenario's transform
    specs += [CheckSpec(type="equals", value=f"fixed it {i}", transform=f"output + ' ' + {i}") for i in range(12)]
    specs += [CheckSpec(type="equals", value="Fixed It", transform={"python": "output.title()"})]
    specs += [CheckSpec(type="any-of", checks=(CheckSpec(type="equals", value="8", transform="String(output.length)"),))]
    got = grade(session, specs, transform="output.toUpperCase()")
    assert statuses(got) == ["PASS"] * len(specs), got
    assert node_calls() == 1  # 14 JavaScript transforms, one process; the Python one ran in python3


def test_no_process_starts_when_no_check_reads_a_transformed_output(session, node_calls):
    specs = [CheckSpec(type="session:tool-used", value="Edit", transform="output.trim()"), CheckSpec(type="session:step-count", args={"gte": 0})]
    got = grade(session, specs, transform="output.toUpperCase()")
    assert statuses(got) == ["FAIL", "PASS"]
    assert node_calls() == 0


@needs_node
def test_a_failing_transform_errors_only_the_checks_that_read_its_output(session):
    specs = [
        CheckSpec(type="contains", value="fixed", transform="output.foo.bar"),
        CheckSpec(type="contains", value="FIXED"),
        CheckSpec(type="contains", value="x", transform="const y = output"),
        CheckSpec(type="session:step-count", args={"gte": 0}, transform="output.foo.bar"),
    ]
    got = grade(session, specs, transform="output.toUpperCase()")
    assert statuses(got) == ["ERROR", "PASS", "ERROR", "PASS"], got
    assert got[0][1] == "contains: the check's output transform failed: TypeError: Cannot read properties of undefined (reading 'bar')"
    assert "returned undefined" in got[2][1] and "`return` the new output" in got[2][1]


@needs_node
def test_a_check_transform_overrides_the_scenarios(session):
    """madbench: a check's transform rewrites `output` for that check only, overriding the
    scenario's: it reads the output as recorded, not the scenario's rewrite of it."""
    got = grade(session, [CheckSpec(type="equals", value="fixed it!", transform="output + '!'"), CheckSpec(type="equals", value="FIXED IT")], transform="output.toUpperCase()")
    assert statuses(got) == ["PASS", "PASS"], got


@needs_node
def test_output_and_context_are_in_scope_and_a_value_becomes_its_json(session):
    specs = [
        CheckSpec(type="equals", value="x:fixed it:fix it", transform="context.vars.want + ':' + output + ':' + context.prompt"),
        CheckSpec(type="equals", value='{"words":2}', transform="({words: output.split(' ').length})"),
        CheckSpec(type="equals", value="FIXED IT", transform="const up = output.toUpperCase();\nreturn up;"),
        CheckSpec(type="equals", value="FIXED IT", transform="output\n  .trim()\n  .toUpperCase()"),  # an expression over lines
        CheckSpec(type="equals", value="FIXED IT", transform="await Promise.resolve(output.toUpperCase())"),
        CheckSpec(type="equals", value='{"n": 2}', transform={"python": "{'n': len(output.split())}"}),
        CheckSpec(type="equals", value="x", transform={"python": "context['vars']['want']"}),
    ]
    got = grade(session, specs, vars={"want": "x"})
    assert statuses(got) == ["PASS"] * len(specs), got


def test_a_transform_cannot_reach_benchtapes_environment_or_process(session, monkeypatch):
    """The escape issue 30 names: `json.codecs.sys.modules` reached `os` in benchtape's own
    process. Now the transform is another process, with the scrubbed grading environment."""
    monkeypatch.setenv("BENCHTAPE_TEST_PLANTED", "leaked")
    escape = "json.codecs.sys.modules['os']"
    specs = [
        CheckSpec(type="equals", value="nothing", transform={"python": f"{escape}.environ.get('BENCHTAPE_TEST_PLANTED', 'nothing')"}),
        CheckSpec(type="not-equals", value=str(os.getpid()), transform={"python": f"str({escape}.getpid())"}),
        CheckSpec(type="equals", value="1", transform={"python": f"{escape}.environ.get('BENCHTAPE', '')"}),  # the grading env's marker
    ]
    if NODE is not None:
        specs.append(CheckSpec(type="equals", value="nothing", transform="process.env.BENCHTAPE_TEST_PLANTED ?? 'nothing'"))
    got = grade(session, specs)
    assert statuses(got) == ["PASS"] * len(specs), got


@needs_node
def test_file_transforms_in_either_language_relative_to_the_bench(tmp_path, session):
    folder = tmp_path / "bench"
    (folder / "t").mkdir(parents=True)
    (folder / "t" / "up.mjs").write_text("export default (output, context) => output.toUpperCase();\nexport const first = (output) => output.split(' ')[0];\n")
    (folder / "t" / "cjs.cjs").write_text("module.exports = (output) => output.length;\n")
    (folder / "t" / "clean.py").write_text("def get_transform(output, context):\n    return output.replace('it', 'IT')\n\ndef last(output, context):\n    return output.split()[-1]\n")
    (folder / "bench.yaml").write_text(
        textwrap.dedent(
            """
            harness: mock
            scenarios:
              - name: s
                prompt: fix it
                transform: file://t/up.mjs
                checks:
                  - {type: equals, value: FIXED IT}
                  - {type: equals, value: fixed, transform: "file://t/up.mjs:first"}
                  - {type: equals, value: "8", transform: file://t/cjs.cjs}
                  - {type: equals, value: fixed IT, transform: file://t/clean.py}
                  - {type: equals, value: it, transform: "file://t/clean.py:last"}
                  - {type: equals, value: x, transform: file://t/missing.js}
            """
        )
    )
    sc = load_bench(folder / "bench.yaml").scenarios[0]
    assert sc.transform == f"file://{folder / 't' / 'up.mjs'}"  # resolved against the bench file, not the cwd
    got = grade(session, sc.checks, transform=sc.transform, bench_dir=folder)
    assert statuses(got) == ["PASS", "PASS", "PASS", "PASS", "PASS", "ERROR"], got
    assert "missing.js does not exist" in got[-1][1]


def test_a_stored_unmarked_python_transform_is_refused_not_run_as_javascript(session):
    """A grading stored when transforms were Python kept them unmarked; graded again, it errors
    the checks that read the output with the fix, instead of meaning something else."""
    got = grade(session, [CheckSpec(type="contains", value="FIXED"), CheckSpec(type="session:step-count", args={"gte": 0})], transform="output.upper()")
    assert statuses(got) == ["ERROR", "PASS"]
    assert "the scenario's output transform failed" in got[0][1] and "{python: " in got[0][1]


@needs_node
def test_a_check_evaluated_on_its_own_runs_its_transform_through_its_context(session):
    check = build(CheckSpec(type="equals", value="FIXED IT", transform="output.toUpperCase()"))
    assert check.evaluate(session, CheckContext()).status == "PASS"


@pytest.mark.skipif(BUN is None, reason="bun is not installed (.ci/run installs it with npm)")
def test_a_bun_pin_runs_javascript_transforms_with_bun(session, node_calls, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(BUN).parent}:{os.environ['PATH']}")
    got = grade(session, [CheckSpec(type="equals", value="bun", transform="typeof Bun === 'undefined' ? 'node' : 'bun'")], runtimes={"bun": "latest"})
    assert statuses(got) == ["PASS"], got
    assert node_calls() == 0
