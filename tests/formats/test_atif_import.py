"""`benchtape import atif`: another producer's ATIF trajectory (shaped as Harbor writes them)
becomes a session like any import: its calls with their results and outcomes, its embedded
subagent on a thread of its own, its metrics in benchtape's terms; every field benchtape has
no place for is a warning holding its value, never dropped silently; raw lines kept, reparse
possible; a document that is not ATIF is refused before anything is written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from formatskit import benchtape, cli, parse_document, session_of

from benchtape.store.database import Store

SUBAGENT = {
    "schema_version": "ATIF-v1.8",
    "session_id": "trial-0001",
    "trajectory_id": "sub-1",
    "agent": {"name": "counter", "version": "0.1.0", "model_name": "gpt-x-mini"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "Count lines in /app/data.txt"},
        {
            "step_id": 2, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "sub_call", "function_name": "bash", "arguments": {"cmd": "wc -l /app/data.txt"}}],
            "observation": {"results": [{"source_call_id": "sub_call", "content": "42 /app/data.txt"}]},
            "metrics": {"prompt_tokens": 50, "completion_tokens": 8, "cost_usd": 0.0001},
        },
        {"step_id": 3, "source": "agent", "message": "The file has 42 lines."},
    ],
    "final_metrics": {"total_prompt_tokens": 50, "total_completion_tokens": 8, "total_steps": 3},
}
DOC = {
    "schema_version": "ATIF-v1.7",
    "session_id": "trial-0001",
    "agent": {
        "name": "terminus-2", "version": "1.2.3", "model_name": "gpt-x",
        "tool_definitions": [{"type": "function", "function": {"name": "bash", "description": "run a shell command", "parameters": {"type": "object"}}}],
        "extra": {"cwds": ["/app"]},
    },
    "notes": "total_steps counts the subagent's steps",
    "continued_trajectory_ref": "trajectory.cont-1.json",
    "steps": [
        {"step_id": 1, "timestamp": "2025-01-01T00:00:00Z", "source": "system", "message": "You are a helpful agent."},
        {"step_id": 2, "timestamp": "2025-01-01T00:00:01Z", "source": "user", "message": "How many lines are in /app/data.txt?"},
        {
            "step_id": 3, "timestamp": "2025-01-01T00:00:02Z", "source": "agent", "model_name": "gpt-x", "llm_call_count": 1,
            "message": "Let me check the file.", "reasoning_content": "I should run wc -l.",
            "tool_calls": [{"tool_call_id": "call_1", "function_name": "bash", "arguments": {"cmd": "wc -l /app/data.txt"}}],
            "observation": {"results": [{"source_call_id": "call_1", "content": "42 /app/data.txt", "extra": {"tool_result_is_error": False}}]},
            "metrics": {"prompt_tokens": 120, "completion_tokens": 30, "cached_tokens": 100, "cost_usd": 0.0012, "extra": {"cache_creation_input_tokens": 5}},
        },
        {
            "step_id": 4, "timestamp": "2025-01-01T00:00:03Z", "source": "agent", "llm_call_count": 1, "reasoning_effort": "high",
            "message": [{"type": "text", "text": "Delegating a double-check."}, {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}}],
            "tool_calls": [{"tool_call_id": "call_2", "function_name": "task", "arguments": {"prompt": "Count lines in /app/data.txt"}}, {"tool_call_id": "call_3", "function_name": "bash", "arguments": {"cmd": "cat /nope"}}],
            "observation": {"results": [
                {"source_call_id": "call_2", "content": "The file has 42 lines.", "subagent_trajectory_ref": [{"trajectory_id": "sub-1", "session_id": "trial-0001"}]},
                {"source_call_id": "call_3", "content": "cat: /nope: No such file", "extra": {"tool_result_is_error": True}},
                {"subagent_trajectory_ref": [{"trajectory_path": "subagent-2.json"}]},
            ]},
            "metrics": {"prompt_tokens": 180, "completion_tokens": 20, "cost_usd": 0.0015},
            "extra": {"raw_arguments": "{\"prompt\": \"Count lines\"}"},
        },
        {"step_id": 5, "timestamp": "2025-01-01T00:00:04Z", "source": "agent", "model_name": "gpt-y", "message": "/app/data.txt has 42 lines."},
    ],
    "final_metrics": {"total_prompt_tokens": 520, "total_completion_tokens": 60, "total_cached_tokens": 100, "total_cost_usd": 0.0039, "total_steps": 5, "extra": {"total_cache_creation_input_tokens": 20, "service_tiers": ["default"]}},
    "subagent_trajectories": [SUBAGENT],
}


def _session(doc: dict, indent: int | None = 2):
    return session_of(parse_document(json.dumps(doc, indent=indent)))


def test_a_harbor_style_trajectory_reads_as_a_session() -> None:
    s = _session(DOC)
    main = [(c.call_id, c.tool, c.input, c.output, c.is_error) for c in s.calls if c.thread == "main"]
    assert main == [("call_1", "bash", {"cmd": "wc -l /app/data.txt"}, "42 /app/data.txt", False), ("call_3", "bash", {"cmd": "cat /nope"}, "cat: /nope: No such file", True)]
    sub = s.subagents["sub-1"]
    assert (sub.agent, sub.parent_thread, sub.call_id, sub.prompt, sub.output) == ("counter", "main", "call_2", "Count lines in /app/data.txt", "The file has 42 lines.")
    assert [(c.tool, c.output, c.agent) for c in sub.calls] == [("bash", "42 /app/data.txt", "counter")]
    assert [a.data["text"] for a in s.actions if a.kind == "message.user"] == ["How many lines are in /app/data.txt?", "Count lines in /app/data.txt"]
    assert [a.data["text"] for a in s.actions if a.kind == "thinking"] == ["I should run wc -l."]
    assert s.final_output == "/app/data.txt has 42 lines."
    m = s.metrics  # final_metrics, in benchtape's terms: prompt tokens hold the cache reads and writes
    assert (m.tokens_in, m.tokens_out, m.cache_read_tokens, m.cache_write_tokens, m.cost_usd) == (400, 60, 100, 20, 0.0039)
    reported = s.environment["reported"]
    assert (reported["agent"], reported["version"], reported["model"], reported["tools"]) == ("terminus-2", "1.2.3", "gpt-x", ["bash"])
    spawn = next(a for a in s.actions if a.kind == "subagent.spawned")
    assert spawn.data["model"] == "gpt-x-mini" and spawn.at == pytest.approx(1735689603.0)


def test_the_step_metrics_stay_readable_as_running_totals() -> None:
    """Without final_metrics the steps' metrics are summed (the subagent's too); each step's
    figures are the difference between one `metrics` action and the one before."""
    doc = {**DOC, "final_metrics": None}
    s = _session({k: v for k, v in doc.items() if v is not None})
    totals = [a.data for a in s.actions if a.kind == "metrics"]
    assert totals[0] == {"tokens_in": 15, "tokens_out": 30, "cache_read_tokens": 100, "cache_write_tokens": 5, "cost_usd": 0.0012}
    assert (s.metrics.tokens_in, s.metrics.tokens_out, s.metrics.cost_usd) == (15 + 50 + 180, 30 + 8 + 20, pytest.approx(0.0012 + 0.0001 + 0.0015))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("system step 1", "You are a helpful agent."),
        ("the trajectory's `notes`", "total_steps counts the subagent's steps"),
        ("`continued_trajectory_ref`", "trajectory.cont-1.json"),
        ("the agent's `extra` (cwds)", '{"cwds":["/app"]}'),
        ("`steps[].reasoning_effort` on 1 step(s)", '{"4":"high"}'),
        ("`steps[].llm_call_count` on 2 step(s)", '{"3":1,"4":1}'),
        ("`steps[].model_name` on 1 step(s)", '{"5":"gpt-y"}'),
        ("`steps[].extra.raw_arguments`", "Count lines"),
        ("image/audio part(s)", "shot.png"),
        ("not embedded in this document", "subagent-2.json"),
        ("final_metrics' `extra` (service_tiers)", '["default"]'),
        ("subagent trajectory sub-1's `final_metrics`", '"total_steps":3'),
    ],
)
def test_every_field_without_a_place_is_a_warning_holding_its_value(field: str, value: str) -> None:
    warnings = _session(DOC).warnings
    hits = [w for w in warnings if field in w["what"]]
    assert len(hits) == 1 and value in hits[0]["line"], [w["what"] for w in warnings]


def test_only_what_has_no_place_is_warned_about() -> None:
    assert len(_session(DOC).warnings) == 12
    assert _session(SUBAGENT | {"final_metrics": None, "trajectory_id": None}).warnings == []


def test_the_layout_of_the_document_does_not_matter() -> None:
    pretty, compact = parse_document(json.dumps(DOC, indent=2)), parse_document(json.dumps(DOC))
    assert [(a.kind, a.thread, a.data) for a in pretty] == [(a.kind, a.thread, a.data) for a in compact]


def test_harbors_inlined_sidechain_steps_go_to_their_subagents_thread() -> None:
    steps = [
        {"step_id": 1, "source": "user", "message": "go"},
        {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "t1", "function_name": "Read", "arguments": {}}], "extra": {"is_sidechain": True, "agent_id": "a1"}},
    ]
    s = _session({"schema_version": "ATIF-v1.7", "agent": {"name": "claude-code", "version": "2.1"}, "steps": steps})
    assert [c.thread for c in s.calls] == ["a1"] and set(s.subagents) == {"a1"} and s.warnings == []


def _store_sessions(db: Path) -> int:
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM sessions").fetchone()[0]


def test_import_atif_keeps_the_file_and_reparses_it(tmp_path: Path) -> None:
    path, db = tmp_path / "trajectory.json", tmp_path / "i.db"
    path.write_text(json.dumps(DOC, indent=2) + "\n\n")
    out = benchtape("import", "atif", path, "--db", db)
    assert out.returncode == 0 and "12 adapter warning(s)" in out.stdout, out.stderr
    sid = out.stdout.split()[0]
    store = Store(db)
    row, session = store.session_row(sid), store.load_session(sid)
    assert (row.scenario, row.harness, row.model, session.prompt) == ("trial-0001", "terminus-2", "gpt-x", "How many lines are in /app/data.txt?")
    assert store.raw_lines(sid) == json.dumps(DOC, indent=2).split("\n")
    again = benchtape("reparse", sid, "--db", db)
    assert again.returncode == 0, again.stderr
    new = store.load_session(again.stdout.split()[0])
    assert [(a.kind, a.thread, a.data) for a in new.actions][1:] == [(a.kind, a.thread, a.data) for a in session.actions][1:]


def test_a_folder_imports_every_trajectory_below_it(tmp_path: Path) -> None:
    """A Harbor job folder: each trial's agent/trajectory.json, the other JSON files left alone."""
    for trial, sid in (("t1__abc", "s-1"), ("t2__def", "s-2")):
        agent = tmp_path / "job" / trial / "agent"
        agent.mkdir(parents=True)
        (agent / "trajectory.json").write_text(json.dumps({**DOC, "session_id": sid}, indent=2))
        (agent.parent / "result.json").write_text(json.dumps({"verifier_result": {"rewards": {"reward": 1}}}))
    out = benchtape("import", "atif", tmp_path / "job", "--db", tmp_path / "i.db")
    assert out.returncode == 0 and out.stdout.count("trajectory.json") == 2, out.stderr
    assert {r.scenario for r in Store(tmp_path / "i.db").session_rows()} == {"s-1", "s-2"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (json.dumps({**DOC, "steps": [dict(DOC["steps"][1], step_id=2)]}), "not an ATIF trajectory: (the document): Value error, steps[0].step_id=2 is not sequential"),
        (json.dumps({**DOC, "bogus": 1}), "bogus: Extra inputs are not permitted"),
        (json.dumps(DOC) + "\n" + json.dumps(DOC), "not an ATIF trajectory"),
        (json.dumps({**DOC, "agent": {"version": "1"}}), "agent.name: Field required"),
    ],
)
def test_a_document_that_is_not_atif_is_refused_before_anything_is_written(tmp_path: Path, text: str, says: str) -> None:
    good, bad, db = tmp_path / "a-good.json", tmp_path / "b-bad.json", tmp_path / "i.db"
    good.write_text(json.dumps(DOC))
    bad.write_text(text)
    out = cli("import", "atif", good, bad, "--db", db)
    assert out.code == 2 and says in out.stderr and str(bad) in out.stderr, out.stderr
    assert not db.exists() or _store_sessions(db) == 0


def test_the_wrong_kind_of_file_says_which_import_it_needs(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(DOC, indent=2))
    wrong = cli("import", "claude-code", path, "--db", tmp_path / "i.db")
    assert wrong.code == 2 and "this is an ATIF trajectory, not a claude-code transcript" in wrong.stderr and "benchtape import atif" in wrong.stderr
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    none = cli("import", "atif", tmp_path / "empty", "--db", tmp_path / "i.db")
    assert none.code == 2 and "no ATIF trajectory (.json) in the folder" in none.stderr


def test_a_trajectory_without_a_final_newline_is_not_a_cut_transcript(tmp_path):
    """An ATIF trajectory is one JSON document, often written without a final newline: its
    last line (`}`) is no JSON line, and that is no sign of a writer killed mid-line."""
    import json

    from benchtape.recorder.importer import import_files
    from benchtape.store.database import Store

    doc = {"schema_version": "ATIF-v1.4", "session_id": "s1", "agent": {"name": "claude-code", "version": "2.1.0", "model_name": "m"}, "steps": [{"step_id": 1, "source": "user", "message": "hi"}, {"step_id": 2, "source": "agent", "message": "done"}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc, indent=2))
    assert not path.read_text().endswith("\n")
    store = Store(tmp_path / "s.db")
    [result] = import_files(store, "atif", [path])
    finished = [a for a in store.actions(result.session_id) if a.kind == "session.finished"][-1]
    assert finished.data["status"] == "ok" and "truncated" not in finished.data


def test_a_cost_harbor_estimated_is_not_recorded_as_reported() -> None:
    """Harbor's own Claude Code converter prices a transcript that says no cost
    (`final_metrics.extra.cost_source: litellm_estimate`, each step's cost_usd too): imported, a
    session whose direct import says `cost n/a` cost $1.32. The estimate is kept as a warning,
    never as the tool's reported cost; a reported one (no cost_source) is read as before."""
    estimated = {**DOC, "final_metrics": {**DOC["final_metrics"], "extra": {**DOC["final_metrics"]["extra"], "cost_source": "litellm_estimate"}}}
    s = _session(estimated)
    assert s.metrics.cost_usd is None and s.metrics.tokens_out == 60
    assert any("an estimate (litellm_estimate)" in str(a.data) for a in s.actions if a.kind == "adapter.warning")
    assert _session(DOC).metrics.cost_usd == 0.0039


def test_a_result_for_a_call_its_step_never_made_is_said() -> None:
    """Harbor's validator refuses an observation result naming a call that is none of its step's
    tool_calls; benchtape imported it silently, an orphan result. It is kept, and said."""
    doc = json.loads(json.dumps(DOC))
    doc["steps"][4]["observation"] = {"results": [{"source_call_id": "nope", "content": "from nowhere"}]}  # a step with no tool_calls
    s = _session(doc)
    said = [str(a.data) for a in s.actions if a.kind == "adapter.warning" and "'nope'" in str(a.data)]
    assert len(said) == 1 and "none of that step's tool_calls" in said[0], said
    assert not any("none of that step's tool_calls" in str(a.data) for a in _session(DOC).actions if a.kind == "adapter.warning")
