"""`metrics:` (§1.9) and `derivedMetrics:` on a bench written as a madbench user writes one:
computed, kept with the grading (never in the recorded stream), shown in the report, `show`,
`query`, and measured again by a regrade."""

from __future__ import annotations

import json
import sqlite3
import textwrap

from cli import benchtape

BENCH = """
description: metrics a madbench user declares
harness: mock
defaults: {interactive: false, timeout: 60s}
metrics:
  - {name: spend, source: session.cost, aggregate: sum, unit: USD, better: lower}
  - {name: calls, source: session.steps.all, aggregate: mean}
  - {name: explore_steps, source: session.steps.agent, key: Explore, aggregate: max}
  - {name: passRate, source: check.pass_rate, agg: avg, better: higher}
  - {name: closeness, source: check.score, check: Consistency, aggregate: mean}
  - {name: distance, source: check.evidence, key: raw_distance, aggregate: min}
derivedMetrics:
  - {name: doubled, value: "Consistency * 2"}
  - {name: blend, value: "(Consistency + Tools) / 2"}
defaultScenario:
  checks:
    - {type: levenshtein, value: "the answer is 42", metric: Consistency, threshold: 20}
    - {type: session:tool-used, value: Read, metric: Tools}
scenarios:
  - name: reads
    prompt: "What is the answer?"
    testdata: repo
    mock:
      steps:
        - {tool: Read, input: {file_path: notes.txt}}
        - subagent: {agent: Explore, prompt: look, steps: [{tool: Grep, input: {pattern: answer}}, {say: ok}]}
        - {say: "the answer is 42"}
      metrics: {cost_usd: 0.25}
  - name: guesses
    prompt: "What is the answer?"
    testdata: repo
    mock:
      steps:
        - {say: "the answer is 41"}
      metrics: {cost_usd: 0.5}
"""


def test_declared_metrics_and_derived_metrics_are_measured_kept_with_the_grading_and_shown(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(BENCH).lstrip())
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "notes.txt").write_text("answer: 42\n")
    out = benchtape("madbench.yaml", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # `guesses` fails its Read check
    assert "not supported" not in out.stderr  # no longer a key that loads and does nothing
    report = json.loads((tmp_path / "r.json").read_text())
    assert [m["name"] for m in report["metric_specs"]] == ["spend", "calls", "explore_steps", "passRate", "closeness", "distance", "doubled", "blend"]
    assert report["metric_specs"][3]["aggregate"] == "mean"  # agg: avg, madbench's alias
    rows = {r["scenario_id"]: r["metrics"] for r in report["results"]}
    assert rows["reads"] == {"spend": 0.25, "calls": 2.0, "explore_steps": 1.0, "passRate": 1.0, "closeness": 1.0, "distance": 0.0, "doubled": 2.0, "blend": 1.0}
    assert rows["guesses"]["explore_steps"] is None  # it never spawned: missing, not 0
    assert rows["guesses"]["closeness"] == rows["guesses"]["doubled"] / 2 == 0.95 and rows["guesses"]["distance"] == 1.0
    assert rows["guesses"]["passRate"] == 0.5 and rows["guesses"]["blend"] == (0.95 + 0.0) / 2
    run = report["metrics"]
    assert run["spend"] == {"value": 0.75, "aggregate": "sum", "n": 2, "missing": 0, "unit": "USD", "better": "lower"}
    assert run["explore_steps"]["value"] == 1.0 and run["explore_steps"]["missing"] == 1 and run["distance"]["value"] == 0.0
    assert abs(run["passRate"]["value"] - 0.75) < 1e-9

    db = sqlite3.connect(tmp_path / "x.db")
    actions_before = db.execute("SELECT COUNT(*) FROM actions").fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM metric_values").fetchone()[0] == 2  # one per (grading, session)

    shown = benchtape("show", "latest/reads", "--db", "x.db", cwd=tmp_path)
    assert shown.returncode == 0 and "metrics (grading" in shown.stdout and "  doubled  2" in shown.stdout and "  explore_steps  1" in shown.stdout
    shown = benchtape("show", "latest/guesses", "--db", "x.db", cwd=tmp_path)
    assert "  explore_steps  n/a" in shown.stdout
    queried = benchtape("query", "bench_metrics.doubled", "--all", "--db", "x.db", cwd=tmp_path)
    assert queried.returncode == 0 and sorted(json.loads(line)["result"] for line in queried.stdout.splitlines()) == [1.9, 2.0]

    # a new metrics: block, regraded: new values with the new grading; the recorded stream untouched
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(BENCH).lstrip().replace("value: \"Consistency * 2\"", "value: \"Consistency * 10\""))
    regraded = benchtape("regrade", "--bench", "madbench.yaml", "--all", "--db", "x.db", cwd=tmp_path)
    assert regraded.returncode == 0, regraded.stderr
    queried = benchtape("query", "bench_metrics.doubled", "--all", "--db", "x.db", cwd=tmp_path)
    assert sorted(json.loads(line)["result"] for line in queried.stdout.splitlines()) == [9.5, 10.0]
    assert db.execute("SELECT COUNT(*) FROM metric_values").fetchone()[0] == 4 and db.execute("SELECT COUNT(*) FROM actions").fetchone()[0] == actions_before


def test_an_eval_sets_metrics_and_models_over_its_bench(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent("""
        description: the bench of an Eval
        harness: mock
        params: {model: fast}
        models: {fast: haiku-4.5}
        harness_config: {model: "{{model}}"}
        metrics:
          - {name: spend, source: session.cost}
        scenarios:
          - {name: says, prompt: "say hi", interactive: false, checks: [{type: contains, value: hi}]}
        """).lstrip())
    (tmp_path / "models.eval.yaml").write_text(textwrap.dedent("""
        bench: madbench.yaml
        models: {fast: sonnet-4.6}
        metrics:
          - {name: rate, source: check.pass_rate, aggregate: mean}
        runs:
          - {name: one, params: {model: fast}}
        """).lstrip())
    out = benchtape("models.eval.yaml", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [m["name"] for m in report["metric_specs"]] == ["rate"]  # the Eval's metrics: replace the bench's
    assert report["results"][0]["metrics"] == {"rate": 1.0}
    started = report["results"][0]["session"]["actions"][0]["data"]
    assert started["model"] == "claude-sonnet-4-6", started  # the Eval's `fast` wins over the bench's


def test_a_bad_metric_is_a_load_error_naming_the_line(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent("""
        description: typo
        harness: mock
        derivedMetrics:
          - {name: x, value: "Consistency *"}
        scenarios:
          - {name: a, prompt: p, checks: [{type: contains, value: p}]}
        """).lstrip())
    out = benchtape("list", "madbench.yaml", cwd=tmp_path)
    assert out.returncode == 1 and "madbench.yaml:4: derived metric 'x'" in out.stderr and "ends too soon" in out.stderr


def test_compare_reads_the_declared_metrics_per_setup(tmp_path):
    from benchtape.replay.metrics import by_setup
    from benchtape.store.database import Store

    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(BENCH).lstrip())
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "notes.txt").write_text("answer: 42\n")
    benchtape("madbench.yaml", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)
    ids = {r["scenario_id"]: r["session_id"] for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    got = by_setup(Store(tmp_path / "x.db", readonly=True), [("a", ids["reads"]), ("a", ids["guesses"]), ("b", ids["guesses"])])
    assert got["a"]["doubled"] == (2.0 + 1.9) / 2 and got["b"]["explore_steps"] is None and got["a"]["explore_steps"] == 1.0
