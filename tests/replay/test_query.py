"""`benchtape query`: JMESPath over each session's document, streamed; bad expressions cost nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest
from realdatakit import find_realdata
from replaykit import ROOT, cli, unique_prefix

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from adapterkit import realdata_params  # noqa: E402

from benchtape.replay.document import document, kinds_needed
from benchtape.replay.query import compile_query, counted_keys, reachable_keys
from benchtape.store.database import Store


def _ids(db: Path) -> dict[str, str]:
    return {r.scenario: r.id for r in Store(db).session_rows()}


def test_query_json_lines_per_session(demo_db):
    out = cli("query", "calls[].tool", "--db", demo_db)
    assert out.code == 0, out.stderr
    rows = {r["scenario"]: r for r in out.jsonl()}
    assert rows["fixes-the-bug"]["result"] == ["Read", "Edit", "Bash"]
    assert rows["weakens-the-test"]["result"] == ["Read", "Write", "Bash"]
    assert set(rows["wrong-fix"]) == {"session_id", "scenario", "result"}


def test_null_results_are_skipped_unless_kept(demo_db):
    expr = "calls[?tool=='Bash'] | [0].input.command"
    kept = cli("query", expr, "--db", demo_db, "--keep-null").jsonl()
    skipped = cli("query", expr, "--db", demo_db).jsonl()
    assert len(kept) == 3 and len(skipped) == 2
    assert {r["scenario"] for r in kept if r["result"] is None} == {"wrong-fix"}


def test_session_gives_the_bare_result_and_verdicts_are_in_the_document(demo_db):
    sid = _ids(demo_db)["fixes-the-bug"]
    out = cli("query", "{status: session.status, verdicts: verdicts[].status, cost: metrics.cost_usd, out: final_output}", "--session", unique_prefix(list(_ids(demo_db).values()), sid), "--db", demo_db)
    assert out.code == 0
    assert out.json() == {"status": "ok", "verdicts": ["PASS", "PASS", "PASS", "PASS"], "cost": 0.012, "out": "Fixed the sign error in add(); all tests pass."}


def test_scenario_and_run_selection(demo_db):
    run = Store(demo_db).runs()[0]["id"]
    assert [r["scenario"] for r in cli("query", "session.scenario", "--scenario", "wrong-fix", "--db", demo_db).jsonl()] == ["wrong-fix"]
    assert len(cli("query", "session.run_id", "--run", run[:10], "--db", demo_db).jsonl()) == 3


@pytest.mark.parametrize(
    ("expr", "position"),
    [("calls[?tool=='Read'", 19), ("calls[].tool ~ x", 13), ("metrics..cost", 8), ("length(", 7)],
)
def test_bad_expression_exit_2_with_the_position_before_the_store_is_touched(tmp_path, expr, position):
    missing = tmp_path / "never-created.db"
    out = cli("query", expr, "--db", missing)
    assert out.code == 2
    assert f"bad JMESPath expression, position {position}" in out.stderr
    assert expr in out.stderr and " " * position + "^" in out.stderr
    assert not missing.exists()


def test_unknown_function_is_refused_up_front(tmp_path):
    out = cli("query", "nofn(calls)", "--db", tmp_path / "x.db")
    assert out.code == 2 and "unknown function nofn()" in out.stderr


FAILS_ON_TWO = "calls[?tool == 'Write'] | length([0].input.content)"  # length(null) where the agent wrote nothing


def test_a_runtime_error_in_one_session_is_reported_for_it_and_the_others_go_on(demo_db):
    """It aborted the whole query at the first session it failed on."""
    out = cli("query", FAILS_ON_TWO, "--all", "--db", demo_db)
    assert out.code == 1, out.stderr
    rows = {r["scenario"]: r for r in out.jsonl()}
    assert set(rows) == {"fixes-the-bug", "weakens-the-test", "wrong-fix"}
    assert isinstance(rows["weakens-the-test"]["result"], int) and "error" not in rows["weakens-the-test"]
    assert "length()" in rows["wrong-fix"]["error"] and "result" not in rows["wrong-fix"]
    assert "the expression failed on 2 session(s)" in out.stderr
    single = cli("query", FAILS_ON_TWO, "--session", _ids(demo_db)["wrong-fix"], "--db", demo_db)
    assert single.code == 2 and "the expression failed on session" in single.stderr


def test_table_and_csv_output_beside_json_lines(demo_db):
    import csv
    import io

    out = cli("query", "{first: calls[0].tool, n: length(calls)}", "--all", "--format", "csv", "--db", demo_db)
    assert out.code == 0, out.stderr
    table = list(csv.reader(io.StringIO(out.stdout)))
    assert table[0] == ["session_id", "scenario", "first", "n"]
    assert sorted(row[1:] for row in table[1:]) == [["fixes-the-bug", "Read", "3"], ["weakens-the-test", "Read", "3"], ["wrong-fix", "Read", "2"]]
    listed = cli("query", "calls[].tool", "--all", "--format", "csv", "--db", demo_db)
    assert '"[""Read"",""Edit"",""Bash""]"' in listed.stdout  # a list result is one JSON cell
    failed = cli("query", FAILS_ON_TWO, "--all", "--format", "csv", "--db", demo_db)
    assert failed.code == 1 and failed.stdout.splitlines()[0] == "session_id,scenario,result,error"
    shown = cli("query", "{first: calls[0].tool, n: length(calls)}", "--all", "--format", "table", "--plain", "--db", demo_db)
    assert shown.code == 0 and "first" in shown.stdout and "wrong-fix" in shown.stdout
    assert cli("query", "calls", "--format", "xml", "--db", demo_db).code == 2
    timed = cli("query", "{at: actions[0].at}", "--all", "--format", "csv", "--db", demo_db)
    stamps = [row[2] for row in list(csv.reader(io.StringIO(timed.stdout)))[1:]]
    assert stamps and all("e+" not in t and abs(float(t) - 1.7e9) < 1e9 for t in stamps), stamps  # a time in full, never 1.79658e+09


def test_a_type_error_names_the_function_and_the_type_with_a_bounded_excerpt(demo_db):
    """jmespath's message holds the whole value as a Python repr: `abs(actions)` printed every
    session's every action (tens of MB over real sessions)."""
    out = cli("query", "abs(actions)", "--all", "--db", demo_db)
    assert out.code == 1
    errors = [row["error"] for row in out.jsonl()]
    assert len(errors) == 3 and all(e.startswith('abs() takes number, got array: [{"seq":1,') and e.endswith(" chars)") and len(e) < 160 for e in errors), errors
    element = cli("query", "sum(calls[].tool)", "--session", _ids(demo_db)["wrong-fix"], "--db", demo_db)
    assert element.code == 2 and 'sum() takes array of number, got string: "Read"' in element.stderr


HOSTILE_TEXT = "done \x1b]0;PWNED\x07 and \x1b[?1049h"  # retitles the window, switches to the other screen


def test_csv_escapes_the_terminal_escapes_a_transcript_holds(tmp_path):
    """`--format csv` printed an agent's ESC sequences raw, where table and JSON Lines never did."""
    from storekit import benchtape

    lines = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "parentUuid": None, "timestamp": "2026-02-10T21:11:52.438Z", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "sessionId": "s1", "uuid": "u2", "parentUuid": "u1", "timestamp": "2026-02-10T21:11:53.438Z", "message": {"id": "m1", "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": HOSTILE_TEXT}], "stop_reason": "end_turn"}},
    ]
    transcript = tmp_path / "evil.jsonl"
    transcript.write_text("".join(orjson.dumps(line).decode() + "\n" for line in lines))
    db = tmp_path / "evil.db"
    assert benchtape("import", "claude-code", transcript, "--db", db).returncode == 0
    out = benchtape("query", "{said: final_output, \"\\u001b[2J\": `1`}", "--all", "--format", "csv", "--db", db)
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout, repr(out.stdout)
    assert "done \\x1b]0;PWNED\\x07 and \\x1b[?1049h" in out.stdout and "\\x1b[2J" in out.stdout.splitlines()[0]


@pytest.mark.parametrize(
    ("expr", "said"),
    [
        ("subagents[].calls", "`subagents` is an object keyed by subagent thread, not a list"),
        ("subagents[0].agent", "`subagents` is an object keyed by subagent thread, not a list"),
        ("values(subagents)[].agnet", "field `agnet` does not exist in `values(subagents)[]`"),
        ("subagents.*.tool_cals", "field `tool_cals` does not exist in `subagents.*`"),
    ],
)
def test_a_typo_under_subagents_is_named(tmp_path, expr, said):
    out = cli("query", expr, "--all", "--db", tmp_path / "none.db")
    assert out.code == 2 and said in out.stderr, out.stderr
    assert compile_query("values(subagents)[].tool_calls") and compile_query("keys(subagents)") and compile_query("subagents.t1.agent")


def test_reachable_keys_are_conservative():
    keys = lambda e: reachable_keys(compile_query(e).parsed.parsed)  # noqa: E731
    assert keys("metrics.cost_usd") == {"metrics"}
    assert keys("{a: metrics.tokens, b: length(calls)}") == {"metrics", "calls"}
    assert keys("calls[?tool=='Read'].input | [0]") == {"calls"}
    assert keys("sort_by(calls, &seq)[0].tool") == {"calls"}
    assert keys("@") is None and keys("keys(@)") is None and keys("*.id") is None and keys("[0]") is None


def test_counted_keys_are_the_ones_only_given_to_length():
    counted = lambda e: counted_keys(compile_query(e).parsed.parsed)  # noqa: E731
    assert counted("length(calls)") == {"calls"}
    assert counted("{n: length(calls), a: length(actions), c: metrics.cost_usd}") == {"calls", "actions"}
    assert counted("length(calls) > `3` && length(actions) < `100`") == {"calls", "actions"}
    assert counted("{n: length(calls), first: calls[0]}") == frozenset()  # an element is read too
    assert counted("length(calls[?tool=='Read'])") == frozenset()  # filtered: each call is read
    assert counted("calls | length(@)") == frozenset() and counted("max([length(calls), `1`])") == {"calls"}


REAL_COUNTS = ("length(calls)", "{c: length(calls), a: length(actions), t: calls[-1].tool}", "[length(calls), length(actions)] | sum(@)", "length(calls) == length(calls[].tool)")


def test_a_counted_part_answers_as_the_whole_document_does_on_real_transcripts(tmp_path: Path) -> None:
    """Real Claude Code, Codex and Gemini CLI sessions: what a query only counts is a list of
    placeholders, and every answer is the one the whole document gives."""
    from benchtape.adapters.transcripts import open_transcripts
    from benchtape.replay.query import evaluate

    real = [p.values[0] for p in realdata_params("**/*.jsonl")]
    assert real and None not in real, "no real transcripts (shared/realdata)"
    store = Store(tmp_path / "real.db")
    run_id = store.new_run("run", bench_path="bench.yaml", harness="claude-code")
    for path in real:
        sid = store.new_session(run_id, path.stem, harness="claude-code")
        store.append(sid, [a for transcript in open_transcripts(path) for _line, got in transcript.lines() for a in got])
    counted = 0
    for row in store.session_rows():
        whole = document(row, store.load_session(row.id, row), [])
        counted += len(whole["calls"])
        for expr in REAL_COUNTS:
            query = compile_query(expr)
            assert evaluate(store, query, row) == query.search(whole), (row.scenario, expr)
    assert counted > 100  # the real sessions make calls: the counts compared are not all zero
    assert compile_query(REAL_COUNTS[0]).counted == {"calls"} and compile_query(REAL_COUNTS[1]).counted == {"actions"}
    store.close()


def test_a_narrow_document_folds_from_fewer_kinds_but_says_the_same(demo_db):
    store = Store(demo_db)
    for row in store.session_rows():
        full = document(row, store.load_session(row.id, row), [])
        for keys in ({"metrics"}, {"environment"}, {"calls"}, {"metrics", "calls"}, {"metrics", "environment", "verdicts"}):
            narrow = store.load_session(row.id, row, kinds_needed(frozenset(keys)))
            doc = document(row, narrow, [], keys=frozenset(keys))
            assert doc == {k: full[k] for k in keys}
    assert kinds_needed(frozenset({"metrics", "actions"})) is None


def test_query_streams_sessions_one_at_a_time(demo_db, monkeypatch):
    """The rows come a page at a time and each session is projected only when reached."""
    from benchtape.replay.query import run_query
    from benchtape.replay.select import Selection

    store = Store(demo_db)
    loaded: list[str] = []
    real = store.load_session
    monkeypatch.setattr(store, "load_session", lambda sid, row=None, kinds=None: loaded.append(sid) or real(sid, row, kinds))
    stream = run_query(store, compile_query("session.id"), Selection())
    first = next(stream)
    assert loaded == [first["session_id"]]


REAL = (find_realdata() or Path("/nonexistent")) / "claude-transcripts"


def test_query_over_imported_real_transcripts(tmp_path):
    files = sorted(REAL.glob("*.jsonl"))[:3] if REAL.is_dir() else sorted((ROOT / "realdata" / "claude-transcripts").glob("*.jsonl"))[:3]
    if not files:
        pytest.skip("no real transcripts here")
    db = tmp_path / "imp.db"
    out = cli("import", "claude-code", *files, "--db", db)
    if out.code != 0:
        pytest.skip(f"benchtape import is not usable here: {out.stderr.strip()[:200]}")
    rows = cli("query", "{tools: calls[].tool, tokens: metrics.tokens, kinds: length(actions)}", "--db", db, "--keep-null").jsonl()
    assert len(rows) == len(list(Store(db).session_rows())) == len(files)
    assert all(r["result"]["kinds"] > 0 for r in rows)
    assert any(r["result"]["tools"] for r in rows)


@pytest.mark.parametrize(
    ("expr", "said", "fix"),
    [
        ("call[].tool", "field `call` does not exist in the session document", "did you mean `calls`?"),
        ("metrics.cost", "field `cost` does not exist in `metrics`", "did you mean `cost_usd`?"),
        ("calls[?tol == 'Bash']", "field `tol` does not exist in `calls[]`", "did you mean `tool`?"),
        ("calls.tool", "`calls` is a list, so `calls.tool` is always null", "write `calls[].tool`"),
        ("session.id.x", "`session.id` is text, so it has no field `x`", "benchtape show SESSION --json"),
    ],
)
def test_a_field_the_document_does_not_have_is_named_before_the_store_is_touched(tmp_path, expr, said, fix):
    out = cli("query", expr, "--all", "--db", tmp_path / "none.db")
    assert out.code == 2 and said in out.stderr and fix in out.stderr, out.stderr
    assert not (tmp_path / "none.db").exists()


def test_free_form_parts_are_not_second_guessed(demo_db):
    out = cli("query", "calls[?tool == 'Bash'].input.command | [0]", "--all", "--db", demo_db)
    assert out.code == 0 and {line["result"] for line in out.jsonl()} == {"python3 -m unittest -q"}
    assert cli("query", "actions[].data.no_such_key", "--all", "--db", demo_db).code == 0
