"""A `--report-json` read the way a madbench user's script reads it: by the field names the
spec gives (§4.4, §5), nothing benchtape-specific."""

from __future__ import annotations

import json
import textwrap

from cli import benchtape

BENCH = """
description: report shape
harness: mock
defaults: {interactive: false, timeout: 60s}
scenarios:
  - name: delegates
    prompt: "Find the config, then say DONE."
    metadata: {owner: team-a}
    testdata: repo
    checks:
      - {type: contains, value: DONE}
      - {type: session:tool-used, value: Read}
    mock:
      steps:
        - {tool: Read, input: {file_path: app.cfg}}
        - subagent:
            agent: Explore
            prompt: look around
            steps:
              - {tool: Grep, input: {pattern: cfg}, result: "app.cfg"}
              - {say: found it}
        - {tool: Bash, input: {command: "true"}}
        - {say: DONE}
      metrics: {cost_usd: 0.02, tokens_in: 1200, tokens_out: 300, duration_ms: 4500}
  - name: breaks
    prompt: "!ERROR! nothing"
    checks:
      - {type: contains, value: DONE}
  - name: misses
    prompt: "say nothing useful"
    checks:
      - {type: contains, value: DONE}
"""


def test_a_report_read_by_madbenchs_field_names(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(BENCH).lstrip())
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "app.cfg").write_text("x = 1\n")
    out = benchtape("madbench.yaml", "--db", "x.db", "--report-json", "out.json", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["summary"] == {"total": 3, "passed": 1, "failed": 1, "errors": 1, "skipped": 0}  # read `errors` first
    by = {r["scenario_id"]: r for r in report["results"]}
    assert {name: r["status"] for name, r in by.items()} == {"delegates": "pass", "breaks": "fail", "misses": "fail"}  # the strings pass / fail
    for check in by["delegates"]["checks"]:
        assert {"type", "spec", "result", "error"} <= set(check) and set(check["result"]) >= {"pass", "score", "reason", "evidence"}
        assert check["result"]["pass"] is True and check["error"] is None
    session = by["delegates"]["session"]
    assert {"final_output", "actions", "calls", "files_changed", "metrics", "work_dir", "subagents", "metadata", "provider", "environment", "turns"} <= set(session)
    assert session["final_output"] == "DONE" and session["metadata"] == {"owner": "team-a"} and set(session["environment"]) == {"expected", "reported"}
    metrics = session["metrics"]
    assert (metrics["latency"], metrics["cost"], metrics["prompt_tokens"], metrics["output_tokens"], metrics["step_count"]) == (4500, 0.02, 1200, 300, 2)
    calls = {c["name"]: c for c in session["calls"]}  # jq '[.results[].session.calls[]?.name]'
    assert set(calls) == {"Read", "Grep", "Bash"}
    assert calls["Read"]["args"] == {"file_path": "app.cfg"} and calls["Read"]["tool_call_id"] and calls["Read"]["thread"] == ""
    assert calls["Bash"]["result_ok"] is True and "result_ok" not in calls["Read"]  # Read's outcome is unknown: absent, never false
    assert calls["Grep"]["thread"] == "Explore" and calls["Grep"]["agent_id"] and "agent_id" not in calls["Read"]
    assert by["breaks"]["checks"][0]["error"] is None or isinstance(by["breaks"]["checks"][0]["error"], str)
    assert by["misses"]["checks"][0]["result"]["pass"] is False


SMALL = """
description: report history
harness: mock
defaults: {interactive: false, timeout: 60s}
metrics:
  - {name: rate, source: check.pass_rate, aggregate: mean, better: higher}
scenarios:
  - name: greets
    prompt: "Say PASS."
    checks: [{type: contains, value: PASS}]
  - name: steady
    prompt: "ok"
    checks: [{type: contains, value: ok}]
"""


def test_report_list_show_compare_trend_over_a_report_dir_and_html_as_before(tmp_path):
    bench = tmp_path / "madbench.yaml"
    bench.write_text(textwrap.dedent(SMALL).lstrip())
    for text in ("Say PASS.", "Say nothing."):  # the second run's `greets` fails
        bench.write_text(textwrap.dedent(SMALL).lstrip().replace("Say PASS.", text))
        benchtape("madbench.yaml", "--db", "x.db", "--report-dir", ".reports", cwd=tmp_path)
    first, second = sorted(p.stem for p in (tmp_path / ".reports").glob("*.json"))
    (tmp_path / ".reports" / "01ZZZZZZZZZZZZZZZZZZZZZZZZ.jsonl").write_text(json.dumps({"scenario_id": "greets", "attempt": 1, "status": "pass", "outcome": "pass", "run_id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "checks": []}) + "\n")  # a run still going: its stream only

    listed = benchtape("report", "list", "--json", cwd=tmp_path)  # .reports is the default folder
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [r["run_id"] for r in runs] == [first, second, "01ZZZZZZZZZZZZZZZZZZZZZZZZ"] and [r["complete"] for r in runs] == [True, True, False]
    assert [r["summary"]["passed"] for r in runs] == [2, 1, 1]
    text = benchtape("report", "list", cwd=tmp_path).stdout
    assert "3 report(s) in .reports" in text and "incomplete" in text

    shown = benchtape("report", "show", second[:10], "--report-dir", ".reports", cwd=tmp_path)
    assert shown.returncode == 0 and "greets #1  FAIL" in shown.stdout and "steady #1  PASS" in shown.stdout and "rate  0.5" in shown.stdout, shown.stdout

    diff = json.loads(benchtape("report", "compare", first, second, "--json", cwd=tmp_path).stdout)
    greets = next(s for s in diff["scenarios"] if s["scenario"] == "greets#1")
    assert (greets["a"], greets["b"], greets["flips"]) == ("pass", "fail", [{"check": "checks[0]", "a": "PASS", "b": "FAIL"}])
    assert diff["changed"] == 1 and diff["metrics"]["rate"] == {"a": 1.0, "b": 0.5, "better": "higher", "delta": -0.5}
    path_form = benchtape("report", "compare", f".reports/{first}.json", f".reports/{second}.json", cwd=tmp_path)
    assert path_form.returncode == 0 and "greets#1: pass → fail" in path_form.stdout

    trend = json.loads(benchtape("report", "trend", "--json", cwd=tmp_path).stdout)
    assert trend["scenarios"]["greets"] == ["pass", "fail", "pass"] and trend["scenarios"]["steady"] == ["pass", "pass", None]
    assert [r["metrics"].get("rate") for r in trend["runs"]] == [1.0, 0.5, None]
    assert "PFP  greets" in benchtape("report", "trend", cwd=tmp_path).stdout

    missing = benchtape("report", "show", "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "no report 'nope' in .reports" in missing.stderr
    nowhere = benchtape("report", "list", "--report-dir", "gone", cwd=tmp_path)
    assert nowhere.returncode == 2 and "no report folder gone" in nowhere.stderr

    for spelling in (["report", "latest", "--html", "old.html"], ["report", "html", "latest", "--html", "new.html"]):  # the older spelling still works
        out = benchtape(*spelling, "--db", "x.db", cwd=tmp_path)
        assert out.returncode == 0, (spelling, out.stderr)
        assert "<html" in (tmp_path / spelling[-1]).read_text()
