"""`benchtape run EVAL.yaml` end to end: runs labelled by name, the control audit, --run."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from cli import benchtape

BENCH = """
description: say a word
harness: mock
params: {variant: a, word: hello}
defaults: {sandbox: home, interactive: false, timeout: 30s}
scenarios:
  - name: says
    prompt: "say {{word}}"
    testdata: "data-{{variant}}"
    mock: {steps: [{say: "{{word}}"}]}
    checks: [{type: contains, value: "{{word}}"}]
"""


def write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


@pytest.fixture
def evald(tmp_path: Path) -> Path:
    for v, note in (("a", "be terse\n"), ("b", "be very verbose\n")):
        (tmp_path / f"data-{v}").mkdir()
        (tmp_path / f"data-{v}" / "app.py").write_text("print(1)\n")
        (tmp_path / f"data-{v}" / "CLAUDE.md").write_text(note)
    write(tmp_path, "bench.yaml", BENCH)
    return tmp_path


def sessions(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("select count(*) from sessions").fetchone()[0]


def test_two_runs_differing_in_a_param_both_run_labelled(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\nruns:\n  - {name: hi, params: {word: hello}}\n  - {name: bye, params: {word: goodbye}}\n")
    out = benchtape("run", "eval.yaml", "--db", "t.db", "--report-json", "r.json", "--plain", cwd=evald)
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads((evald / "r.json").read_text())
    assert [(r["eval_run"], r["scenario_id"], r["status"]) for r in report["results"]] == [("hi", "says", "pass"), ("bye", "says", "pass")]
    assert [r["name"] for r in report["runs"]] == ["hi", "bye"]
    assert report["control"]["enforced"] is False and report["control"]["runs"][1]["status"] == "same"
    assert "hi · says" in out.stdout and "bye · says" in out.stdout and "── CONTROL" in out.stdout
    with sqlite3.connect(evald / "t.db") as con:
        params = [json.loads(p) for (p,) in con.execute("select params from runs")]
    assert sorted(p["_eval_run"] for p in params) == ["bye", "hi"]


def test_uncovered_testdata_difference_is_confounded_nothing_recorded(evald):
    (evald / "data-b" / "app.py").write_text("print(2)\n")
    write(evald, "eval.yaml", "bench: bench.yaml\ncontrol:\n  varies: [testdata/CLAUDE.md]\nruns:\n  - {name: terse}\n  - {name: verbose, params: {variant: b}}\n")
    out = benchtape("run", "eval.yaml", "--db", "t.db", "--plain", cwd=evald)
    assert out.returncode == 1, out.stderr + out.stdout
    assert "CONFOUNDED: runs differ in more than their instructions" in out.stderr
    assert "verbose: ~ testdata/app.py" in out.stderr and "testdata/CLAUDE.md" not in out.stderr
    assert sessions(evald / "t.db") == 0


def test_difference_covered_by_varies_runs(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\ncontrol:\n  varies: [testdata/CLAUDE.md]\nruns:\n  - {name: terse}\n  - {name: verbose, params: {variant: b}}\n")
    out = benchtape("run", "eval.yaml", "--db", "t.db", "--plain", cwd=evald)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "verbose: allowed" in out.stdout and "~ testdata/CLAUDE.md  changed +7 B" in out.stdout
    assert sessions(evald / "t.db") == 2


def test_varies_matching_nothing_is_a_typo_note(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\ncontrol:\n  varies: [testdata/CLAUDE.md, testdata/CLUADE.md]\nruns:\n  - {name: terse}\n  - {name: verbose, params: {variant: b}}\n")
    out = benchtape("run", "eval.yaml", "--db", "t.db", "--plain", cwd=evald)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "varies entry 'testdata/CLUADE.md' matched nothing — probable typo" in out.stdout


def test_run_flag_selects_one_run(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\nruns:\n  - {name: terse}\n  - {name: verbose, params: {variant: b}}\n")
    out = benchtape("run", "eval.yaml", "--run", "verbose", "--db", "t.db", "--report-json", "r.json", "--plain", cwd=evald)
    assert out.returncode == 0, out.stderr + out.stdout
    assert [r["eval_run"] for r in json.loads((evald / "r.json").read_text())["results"]] == ["verbose"]
    bad = benchtape("run", "eval.yaml", "--run", "verbos", "--db", "t.db", cwd=evald)
    assert bad.returncode == 2 and "did you mean 'verbose'" in bad.stderr


def test_list_preflight_and_eval_level_keys(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\nmodels: {fast: haiku-4.5}\nruns:\n  - {name: terse}\n  - {name: verbose, params: {variant: b}}\n")
    listed = benchtape("list", "eval.yaml", cwd=evald)
    assert listed.returncode == 0 and "run verbose" in listed.stdout and "2 run(s)" in listed.stdout
    pf = benchtape("preflight", "eval.yaml", cwd=evald)
    assert pf.returncode == 0, pf.stderr
    assert "Eval level" not in pf.stdout and "── CONTROL" in pf.stdout  # models: is built, no longer named as ignored


def test_load_error_exits_2_with_line(evald):
    write(evald, "eval.yaml", "bench: bench.yaml\nmatrix: {}\nruns: [{}]\n")
    out = benchtape("run", "eval.yaml", "--db", "t.db", cwd=evald)
    assert out.returncode == 2 and "eval.yaml:2: unknown key `matrix`" in out.stderr
