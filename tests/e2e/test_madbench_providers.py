"""`providers:` on a scenario, as a madbench user writes it: one session per label (the mock
says a `mock:<payload>` label's payload), and select-best, max-score and compare comparing
the providers' sessions; the verdicts reproduce under `grade` and `regrade`."""

from __future__ import annotations

import json
import textwrap

from cli import benchtape

BENCH = """
description: which provider answers best
harness: mock
defaults: {interactive: false, timeout: 60s}
scenarios:
  - name: pick
    prompt: "What is 6 x 7?"
    providers: ["mock:42", "mock:the answer is 41", "mock:I do not know"]
    checks:
      - {type: contains, value: "42"}
      - {type: levenshtein, value: "42", threshold: 20, metric: closeness}
      - {type: select-best}
      - {type: compare}
      - type: max-score
        threshold: 0.9
        checks: [{type: levenshtein, value: "42", threshold: 20}]
"""


def _run(tmp_path, text, *extra):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(text).lstrip())
    out = benchtape("madbench.yaml", "--db", "x.db", "--report-json", "r.json", *extra, cwd=tmp_path)
    return out, json.loads((tmp_path / "r.json").read_text())


def test_providers_fan_out_and_the_composites_compare_them(tmp_path):
    out, report = _run(tmp_path, BENCH)
    assert out.returncode == 1, out.stdout + out.stderr  # two providers fail `contains 42`
    rows = report["results"]
    assert [r["session"]["provider"] for r in rows] == ["mock:42", "mock:the answer is 41", "mock:I do not know"]
    assert [r["session"]["final_output"] for r in rows] == ["42", "the answer is 41", "I do not know"]  # the payload, as madbench's mock
    assert {r["scenario_id"] for r in rows} == {"pick"} and {r["attempt"] for r in rows} == {1}
    assert [r["status"] for r in rows] == ["pass", "fail", "fail"]
    for r in rows:
        contains, closeness, best, compare, top = r["checks"]
        assert best["result"]["pass"] and best["result"]["evidence"]["winner"] == "mock:42"
        assert [c["type"] for c in best["spec"]["checks"]] == ["contains", "levenshtein"]  # no children: it borrowed its siblings
        assert compare["result"]["pass"] and "'mock:42' scored higher than every other provider" in compare["result"]["reason"]
        assert top["result"]["pass"] and top["result"]["score"] == 1.0
        assert set(best["result"]["evidence"]["providers"]) == {"mock:42", "mock:the answer is 41", "mock:I do not know"}
    graded = benchtape("grade", report["run_id"], "--db", "x.db", "--json", cwd=tmp_path)
    assert graded.returncode == 0, graded.stdout + graded.stderr  # the composites reproduce: graded with their peers again
    assert json.loads(graded.stdout)["counts"] == {"REPRODUCED": 15, "DIVERGED": 0, "COULD NOT RE-GRADE": 0, "SKIPPED": 0}
    from_report = benchtape("grade", "r.json", cwd=tmp_path)
    assert from_report.returncode == 0 and "DIVERGED " not in from_report.stdout, from_report.stdout
    regraded = benchtape("regrade", "--bench", "madbench.yaml", "--all", "--db", "x.db", cwd=tmp_path)
    assert regraded.returncode == 0, regraded.stderr
    winners = benchtape("query", "verdicts[?type=='select-best'].evidence.winner | [0]", "--all", "--db", "x.db", cwd=tmp_path)
    assert [json.loads(line)["result"] for line in winners.stdout.splitlines()] == ["mock:42"] * 3  # the regrade compared the three again


def test_compare_fails_when_the_first_provider_is_not_strictly_best_and_one_provider_is_one_session(tmp_path):
    out, report = _run(tmp_path, BENCH.replace('["mock:42", "mock:the answer is 41", "mock:I do not know"]', '["mock:41", "mock:42"]'))
    compare = report["results"][0]["checks"][3]
    assert compare["result"]["pass"] is False and "'mock:41' is not strictly higher than 'mock:42'" in compare["result"]["reason"]
    out, report = _run(tmp_path, BENCH.replace('["mock:42", "mock:the answer is 41", "mock:I do not know"]', '["mock:42"]').replace("      - {type: select-best}\n      - {type: compare}\n", ""))
    assert out.returncode == 0 and len(report["results"]) == 1 and report["results"][0]["session"]["provider"] == "mock:42"


def test_a_provider_listed_twice_is_a_load_error(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(BENCH).lstrip().replace('"mock:I do not know"', '"mock:42"'))
    out = benchtape("list", "madbench.yaml", cwd=tmp_path)
    assert out.returncode == 1 and "`providers:` lists 'mock:42' twice" in out.stderr


RICH = """
description: judge checks offline
harness: mock
defaults: {interactive: false, timeout: 60s}
scenarios:
  - name: explains
    prompt: "Why did the test fail?"
    providers: ["mock:The test failed because add subtracted; the fix replaces minus with plus."]
    checks:
      - {type: llm-rubric, value: "Names the subtraction bug. Explains the fix with plus."}
      - {type: llm-rubric, value: "Mentions the database migration."}
"""


def test_madbench_mock_rich_answers_ai_checks_offline_with_their_criteria(tmp_path):
    (tmp_path / "madbench.yaml").write_text(textwrap.dedent(RICH).lstrip())
    no_keys = dict.fromkeys(("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MADBENCH_MOCK_RICH", "BENCHTAPE_MOCK_RICH"), "")
    blocked = benchtape("preflight", "madbench.yaml", cwd=tmp_path, env=no_keys)
    assert blocked.returncode in (2, 3), blocked.stdout + blocked.stderr  # no judge, not rich: refused before anything runs
    out = benchtape("madbench.yaml", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path, env={**no_keys, "MADBENCH_MOCK_RICH": "1"})
    assert "offline demo evaluator" in out.stderr, out.stdout + out.stderr
    first, second = json.loads((tmp_path / "r.json").read_text())["results"][0]["checks"]
    assert first["result"]["pass"] is True and first["result"]["evidence"]["judge_model"] == "mock-rich"
    assert [c["met"] for c in first["result"]["evidence"]["criteria"]] == [True, True]
    assert second["result"]["pass"] is False and second["result"]["evidence"]["criteria"] == [{"criterion": "Mentions the database migration", "met": False}]
