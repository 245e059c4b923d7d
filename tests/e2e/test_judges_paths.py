"""AI judges through every grading path, against a scripted judge endpoint on loopback:
live grading asks, `regrade` answers a byte-identical request from the stored judgment
(zero requests), `regrade --rejudge` asks again, and `grade` (the positive control) always
asks again and reports DIVERGED when the judge disagrees with itself."""

from __future__ import annotations

import json
import sqlite3
import textwrap

import pytest
from cli import benchtape

from benchtape.models.server import serve


def _bench(tmp_path, url: str):
    p = tmp_path / "bench.yaml"
    p.write_text(
        textwrap.dedent(
            f"""
            harness: mock
            judges:
              default: local
              providers: {{local: {{endpoint: "{url}", model: judge-1}}}}
            scenarios:
              - name: judged
                prompt: Say which test fails.
                mock: {{steps: [{{say: "test_add fails"}}]}}
                checks:
                  - type: llm-rubric
                    value: Names the failing test.
            """
        ).lstrip()
    )
    return p


def _judge_requests(srv) -> int:
    return len(srv.entries(api="chat"))


@pytest.fixture()
def judge_server():
    script = {
        "chat": [
            {"reply": '{"reason": "it names test_add", "pass": true, "score": 1}'},  # live
            {"reply": '{"reason": "it names test_add", "pass": true, "score": 1}'},  # --rejudge
            {"reply": '{"reason": "no test named", "pass": false, "score": 0}'},  # grade: the judge changed its mind
        ]
    }
    with serve(script) as srv:
        yield srv


def test_judges_are_asked_reused_rejudged_and_reproduced_per_path(tmp_path, judge_server):
    bench = _bench(tmp_path, judge_server.openai_url)
    db = tmp_path / "j.db"
    run = benchtape("run", bench, "--db", db, "--report-json", tmp_path / "r.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _judge_requests(judge_server) == 1
    verdict = json.loads((tmp_path / "r.json").read_text())["results"][0]["checks"][0]
    assert verdict["status"] == "PASS" and verdict["result"]["evidence"]["judge_model"] == "judge-1"

    again = benchtape("regrade", "--bench", bench, "--all", "--db", db)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _judge_requests(judge_server) == 1  # answered from the stored judgment: free and reproducible

    fresh = benchtape("regrade", "--bench", bench, "--all", "--db", db, "--rejudge")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert _judge_requests(judge_server) == 2

    control = benchtape("grade", "--all", "--db", db)
    assert _judge_requests(judge_server) == 3  # the positive control always asks again
    assert control.returncode == 1 and "DIVERGED" in control.stdout, control.stdout + control.stderr

    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 3  # every request recorded, append-only
    sources = [s for (s,) in con.execute("SELECT g.source FROM judgments j JOIN gradings g ON g.id = j.grading_id ORDER BY j.created_at")]
    assert sources == ["live", "regrade", "control"]


def test_a_report_alone_cannot_re_ask_a_judge_and_says_so(tmp_path, judge_server):
    bench = _bench(tmp_path, judge_server.openai_url)
    db = tmp_path / "j.db"
    assert benchtape("run", bench, "--db", db, "--report-json", tmp_path / "r.json").returncode == 0
    db.unlink()
    out = benchtape("grade", tmp_path / "r.json")
    assert "COULD NOT RE-GRADE" in out.stdout and "no judge configured" in out.stdout, out.stdout


def test_the_negative_control_on_a_judge_only_bench(tmp_path):
    """The no-op agent says the prompt back; a judge asked whether that names the failing test
    says no, so the judge check fails as the control requires (and is counted as gradable)."""
    script = {"chat": [{"reply": '{"reason": "it only repeats the question", "pass": false, "score": 0}'}]}
    with serve(script) as srv:
        bench = _bench(tmp_path, srv.openai_url)
        out = benchtape("check", bench, "--db", tmp_path / "c.db", "--json")
        doc = json.loads(out.stdout)
        assert out.returncode == 0, out.stdout + out.stderr
        assert doc["totals"]["failed as required"] == 1 and doc["gradable"] == 1
        assert _judge_requests(srv) == 1
