"""Recorded judgments: every judge request stored with its answer; `reuse` (regrade)
answers a byte-identical request from the store, `ask` (grade, live, check) and `rejudge`
always ask; the judge's reasoning shows next to its verdict."""

from __future__ import annotations

import sqlite3

import pytest
from judgekit import grade, local, new_grading, store_sessions, verdict

from benchtape.core.results import CheckSpec
from benchtape.models.server import serve
from benchtape.replay.control import ERRORED, FAILED, WRONGLY_PASSED, bucket_of
from benchtape.replay.grading_judges import judge_for_grading
from benchtape.replay.html import Entry, render
from benchtape.replay.timeline import judge_note
from benchtape.store.database import Store

RUBRIC = CheckSpec("llm-rubric", value="Names the failing test.")
TOX = CheckSpec("toxicity")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "j.db")
    yield s
    s.close()


def test_a_judgment_is_stored_with_what_it_served(store):
    [sid] = store_sessions(store, ["test_add fails: fixed the sign"])
    with serve({"chat": [{"reply": verdict(True, 1, "names test_add"), "usage": {"tokens_in": 90, "tokens_out": 12}}]}) as srv:
        gid = new_grading(store, "live")
        judge = judge_for_grading(store, gid, mode="ask", judges=local(srv.openai_url, price={"input": 1, "output": 2}))
        [result] = grade(store, gid, [sid], [RUBRIC], judge)[sid]
    [row] = store.judgments(grading_id=gid)
    assert result.status == "PASS" and result.evidence["judgments"] == [row["id"]]
    assert (row["session_id"], row["check_type"], row["vote"], row["mode"]) == (sid, "llm-rubric", 0, "ask")
    assert (row["provider"], row["transport"], row["model"], row["endpoint"]) == ("local", "openai", "judge-1", srv.openai_url)
    assert row["prompt"].startswith("You are an impartial grader.") and "test_add fails" in row["prompt"]
    assert row["reply"] == verdict(True, 1, "names test_add") and row["stop_reason"] == "stop"
    assert (row["input_tokens"], row["output_tokens"]) == (90, 12) and row["cost_usd"] == pytest.approx((90 + 24) / 1e6)
    assert row["provider_spec"]["api_key_env"] is None and row["latency_ms"] > 0
    import hashlib

    assert row["prompt_sha256"] == hashlib.sha256(row["prompt"].encode()).hexdigest()
    assert store.judgment_totals(gid) == {"requests": 1, "input_tokens": 90, "output_tokens": 12, "cost_usd": pytest.approx(114 / 1e6)}
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute("UPDATE judgments SET reply = 'changed'")


def test_regrade_reuses_byte_identical_requests_and_asks_changed_ones(store):
    ids = store_sessions(store, ["answer one", "answer two"])
    with serve({"chat": [{"reply": verdict(True, 1)}] * 4 + [{"reply": verdict(False, 0, "new rubric, new answer")}] * 2}) as srv:
        config = local(srv.openai_url)
        first = new_grading(store, "live")
        grade(store, first, ids, [RUBRIC], judge_for_grading(store, first, mode="ask", judges=config))
        assert len(srv.entries(api="chat")) == 2

        again = new_grading(store)
        judge = judge_for_grading(store, again, mode="reuse", judges=config)
        results = grade(store, again, ids, [RUBRIC], judge)
        assert len(srv.entries(api="chat")) == 2  # nothing sent
        assert judge.stats.to_dict() == {"asked": 0, "reused": 2, "failed": 0}
        assert all(r[0].status == "PASS" and r[0].evidence["judge_reused"] for r in results.values())
        assert store.judgments(grading_id=again) == []  # reuse writes no new judgment

        changed = CheckSpec("llm-rubric", value="Names the failing test and the fix.")
        third = new_grading(store)
        results = grade(store, third, ids, [changed], judge_for_grading(store, third, mode="reuse", judges=config))
        assert len(srv.entries(api="chat")) == 4  # a changed rubric is a new request
        assert all(r[0].status == "PASS" and not r[0].evidence["judge_reused"] for r in results.values())

        forced = new_grading(store)
        judge = judge_for_grading(store, forced, mode="rejudge", judges=config)
        results = grade(store, forced, ids, [changed], judge)
        assert len(srv.entries(api="chat")) == 6 and judge.stats.asked == 2
        assert {r["mode"] for r in store.judgments(grading_id=forced)} == {"rejudge"}
        assert all(r[0].status == "FAIL" for r in results.values())


def test_reuse_is_per_vote(store):
    [sid] = store_sessions(store, ["x"])
    three = CheckSpec("llm-rubric", value="v", args={"votes": 3})
    with serve({"chat": [{"reply": verdict(True, 1)}, {"reply": verdict(False, 0)}, {"reply": verdict(True, 1)}]}) as srv:
        g1 = new_grading(store, "live")
        [first] = grade(store, g1, [sid], [three], judge_for_grading(store, g1, mode="ask", judges=local(srv.openai_url)))[sid]
        g2 = new_grading(store)
        [second] = grade(store, g2, [sid], [three], judge_for_grading(store, g2, mode="reuse", judges=local(srv.openai_url)))[sid]
    assert [v["pass"] for v in first.evidence["votes"]] == [True, False, True]
    assert [v["pass"] for v in second.evidence["votes"]] == [True, False, True]  # each vote its own stored answer
    assert (first.score, first.status) == (second.score, second.status)


def test_grade_asks_again_and_a_judge_that_changes_its_mind_is_visible(store):
    """The positive control never reuses: the same question, asked again, may get another
    answer, and that flip is what grade reports as DIVERGED."""
    [sid] = store_sessions(store, ["maybe fixed"])
    with serve({"chat": [{"reply": verdict(True, 1, "yes")}, {"reply": verdict(False, 0, "on reflection, no")}]}) as srv:
        live = new_grading(store, "live")
        [before] = grade(store, live, [sid], [RUBRIC], judge_for_grading(store, live, mode="ask", judges=local(srv.openai_url)))[sid]
        control = new_grading(store, "control")
        [after] = grade(store, control, [sid], [RUBRIC], judge_for_grading(store, control, mode="ask", judges=local(srv.openai_url), like_grading=live))[sid]
        assert len(srv.entries(api="chat")) == 2
    assert before.status == "PASS" and after.status == "FAIL"
    a, b = store.judgments(grading_id=live)[0], store.judgments(grading_id=control)[0]
    assert a["request_sha256"] == b["request_sha256"] and a["reply"] != b["reply"]


def test_like_grading_asks_the_original_judge_even_without_the_bench(store):
    [sid] = store_sessions(store, ["x"])
    with serve({"chat": [{"reply": verdict(True, 1)}]}) as first, serve({"chat": [{"reply": verdict(True, 1)}]}) as second:
        live = new_grading(store, "live")
        grade(store, live, [sid], [RUBRIC], judge_for_grading(store, live, mode="ask", judges=local(first.openai_url, pid="orig", model="m-orig")))
        control = new_grading(store, "control")
        # the bench now names another default judge; the control still asks the original one
        grade(store, control, [sid], [RUBRIC], judge_for_grading(store, control, mode="ask", judges=local(second.openai_url, pid="new", model="m-new"), like_grading=live))
        assert len(first.entries(api="chat")) == 2 and len(second.entries(api="chat")) == 0
    assert store.judgments(grading_id=control)[0]["model"] == "m-orig"


def test_a_failing_judge_records_nothing_and_errors_the_check(store):
    [sid] = store_sessions(store, ["x"])
    with serve({"chat": [{"status": 500}] * 3}) as srv:
        gid = new_grading(store, "live")
        judge = judge_for_grading(store, gid, mode="ask", judges=local(srv.openai_url, retries=1))
        [r] = grade(store, gid, [sid], [RUBRIC], judge)[sid]
    assert r.status == "ERROR" and "the judge could not answer" in r.reason and "HTTP 500" in r.reason
    assert store.judgments(grading_id=gid) == [] and judge.stats.failed == 1


def test_unknown_mode_is_refused(store):
    with pytest.raises(ValueError, match="not one of reuse, ask, rejudge"):
        judge_for_grading(store, "g", mode="sometimes", judges=None)


def test_the_negative_control_grades_judge_checks_like_any_check(store):
    """Under `check` the no-op agent echoes the prompt: a judge check must fail there; one
    that passes is WRONGLY PASSED; one with no judge is ERRORED (it graded nothing)."""
    [sid] = store_sessions(store, ["Say which test fails and fix it."])
    with serve({"chat": [{"reply": verdict(False, 0, "it only repeats the task")}, {"reply": verdict(None, 0.0)}, {"reply": verdict(True, 1)}]}) as srv:
        gid = new_grading(store, "control")
        judge = judge_for_grading(store, gid, mode="ask", judges=local(srv.openai_url))
        rubric, tox = grade(store, gid, [sid], [RUBRIC, TOX], judge, control=True)[sid]
        [lenient] = grade(store, gid, store_sessions(store, ["Say which test fails and fix it."]), [RUBRIC], judge, control=True).values()
    assert bucket_of(rubric.status, False) == FAILED
    assert bucket_of(tox.status, False) == WRONGLY_PASSED  # a risk check passes on harmless text: pair it with an activity check
    assert bucket_of(lenient[0].status, False) == WRONGLY_PASSED
    [no_judge] = grade(store, new_grading(store, "control"), [sid], [RUBRIC], None, control=True)[sid]
    assert bucket_of(no_judge.status, False) == ERRORED


def test_show_and_the_html_report_carry_the_judges_reasoning(store):
    [sid] = store_sessions(store, ["fixed <b>it</b>"])
    with serve({"chat": [{"reply": verdict(True, 1, "names the <script> test"), "usage": {"tokens_in": 10, "tokens_out": 5}}]}) as srv:
        gid = new_grading(store, "live")
        grade(store, gid, [sid], [RUBRIC], judge_for_grading(store, gid, mode="ask", judges=local(srv.openai_url)))
    [v] = store.verdicts(grading_id=gid)
    note = judge_note(v["evidence"])
    assert note.startswith("judge local/judge-1 · 10 in / 5 out tokens · cost unknown\n")
    assert note.endswith("names the <script> test")
    assert judge_note({"pass": True}) is None
    page = render(None, [Entry(store.session_row(sid), store.load_session(sid), [{**v, "grading_id": gid}])])
    assert 'class="judge"' in page and "names the &lt;script&gt; test" in page and "<script>" not in page


def test_reused_judgments_say_so_in_show(store):
    [sid] = store_sessions(store, ["y"])
    with serve({"chat": [{"reply": verdict(True, 1, "ok")}]}) as srv:
        g1 = new_grading(store, "live")
        grade(store, g1, [sid], [RUBRIC], judge_for_grading(store, g1, mode="ask", judges=local(srv.openai_url)))
        g2 = new_grading(store)
        grade(store, g2, [sid], [RUBRIC], judge_for_grading(store, g2, mode="reuse", judges=local(srv.openai_url)))
    [v] = store.verdicts(grading_id=g2)
    assert "answered from a stored judgment" in judge_note(v["evidence"])
