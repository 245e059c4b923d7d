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
