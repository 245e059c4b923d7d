"""Every real transcript parses, with no warning, and the projection agrees with counts taken from the file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import rawcounts
from adapterkit import REALDATA, feed_lines, realdata_params, session_of

from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.transcripts import claude_session_files, parser_for, read_transcript, transcripts_below


def _calls_by_thread(session) -> Counter:
    return Counter(c.thread for c in session.calls)


def _errors(session) -> int:
    return sum(1 for c in session.calls if c.is_error is True)


def _tokens(session) -> dict[str, int]:
    m = session.metrics
    fields = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens")
    return {f: getattr(m, f) for f in fields if getattr(m, f) is not None}


@pytest.mark.parametrize("path", realdata_params("**/*.json*"))
def test_every_file_imports_without_a_warning(path: Path) -> None:
    imported = read_transcript(path)
    session = session_of(imported.actions)
    assert session.warnings == [], session.warnings
    assert imported.raw and imported.sha256 and str(path) in imported.source_files or path.name.startswith("agent-")


@pytest.mark.parametrize("path", realdata_params("claude-stream-json/*.jsonl"))
def test_claude_stream_matches_the_file(path: Path) -> None:
    raw = rawcounts.claude_stream(path)
    imported = read_transcript(path)
    session = session_of(imported.actions)
    assert _calls_by_thread(session) == raw.calls
    assert _errors(session) == raw.errors
    assert set(session.subagents) == raw.subagents
    assert session.metrics.cost_usd == pytest.approx(raw.cost)
    assert session.metrics.turns == raw.turns
    assert _tokens(session) == raw.tokens
    assert session.final_output == raw.final


@pytest.mark.parametrize("path", realdata_params("claude-stream-json/*.jsonl"))
def test_claude_stream_killed_before_its_result_counts_tokens_once_per_message(path: Path) -> None:
    lines = [line for line in path.read_text().splitlines() if '"type":"result"' not in line]
    session = session_of(feed_lines(ClaudeStreamParser(), lines))
    assert _tokens(session) == rawcounts.claude_stream(path, with_result=False).tokens
    assert session.metrics.cost_usd is None  # unknown, never 0


@pytest.mark.parametrize("path", realdata_params("claude-transcripts/**/*.jsonl"))
def test_claude_transcript_matches_the_files(path: Path) -> None:
    imported = read_transcript(path)
    files = [Path(f) for f in imported.source_files]
    raw = rawcounts.claude_transcript(files)
    session = session_of(imported.actions)
    assert _calls_by_thread(session) == raw.calls
    assert _errors(session) == raw.errors
    assert set(session.subagents) == raw.subagents
    assert len(session.skills) == raw.skills
    assert _tokens(session) == raw.tokens
    assert session.metrics.cost_usd is None  # the files carry no cost


@pytest.mark.parametrize("path", realdata_params("codex-exec-json/*.jsonl"))
def test_codex_exec_matches_the_file(path: Path) -> None:
    raw = rawcounts.codex_exec(path)
    imported = read_transcript(path)
    session = session_of(imported.actions)
    assert _calls_by_thread(session) == raw.calls
    assert _errors(session) == raw.errors
    assert _tokens(session) == raw.tokens
    assert session.metrics.turns == raw.turns
    assert session.metrics.cost_usd is None
    assert session.final_output == raw.final


@pytest.mark.parametrize("path", realdata_params("codex-rollout/*.jsonl"))
def test_codex_rollout_matches_the_file(path: Path) -> None:
    raw = rawcounts.codex_rollout(path)
    actions = read_transcript(path).actions
    session = session_of(actions)
    assert _calls_by_thread(session) == raw.calls
    assert _errors(session) == raw.errors
    assert set(session.subagents) == raw.subagents
    assert _tokens(session) == raw.tokens
    assert session.metrics.turns == raw.turns
    assert session.metrics.cost_usd is None
    # one result per call, however many events describe it (the synthetic file ends mid-wait)
    results = Counter(a.data["call_id"] for a in actions if a.kind == "tool.result")
    assert max(results.values()) == 1
    if "SYNTHETIC" not in path.name:
        assert all(c.has_result for c in session.calls)


@pytest.mark.parametrize("path", realdata_params("**/*.jsonl"))
def test_fed_line_by_line_equals_fed_the_whole_file_and_reparse_equals_import(path: Path) -> None:
    imported = read_transcript(path)
    fmt = imported.meta["format"]
    by_line = feed_lines(parser_for(fmt), imported.raw)
    whole = parser_for(fmt)
    at_once = whole.feed("\n".join(imported.raw)) + whole.finish()
    assert by_line == at_once
    assert by_line == imported.actions


def test_both_sidechain_layouts_are_found(realdata: Path) -> None:
    old = realdata / "claude-transcripts/codemie_-tmp-private_v2.0.64/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    assert [f.name for f in claude_session_files(old)][1:] == ["agent-36541525.jsonl", "agent-50243ee8.jsonl"]
    new = realdata / "claude-transcripts/codemie_e9fb405b/e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    assert [f.name for f in claude_session_files(new)][1:] == ["agent-a485154.jsonl"]
    # a folder import takes the session once: its sidechain stands for it only when given alone
    assert transcripts_below(new.parent) == [new]
    assert transcripts_below(new.parent / "subagents") == [new.parent / "subagents" / "agent-a485154.jsonl"]


def test_warmup_agents_spend_tokens_but_are_not_subagents(realdata: Path) -> None:
    folder = realdata / "claude-transcripts/codemie_-tmp-private_v2.0.64"
    with_warmups = session_of(read_transcript(folder / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl").actions)
    assert with_warmups.subagents == {}
    alone = rawcounts.claude_transcript([folder / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"])
    assert with_warmups.metrics.tokens_in > alone.tokens["tokens_in"]


def test_a_sidechain_links_to_the_task_that_spawned_it(realdata: Path) -> None:
    sidechain = realdata / "claude-transcripts/codemie_e9fb405b/subagents/agent-a485154.jsonl"
    session = session_of(read_transcript(sidechain).actions)  # a subagent file imports as its session
    sub = session.subagents["toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"]
    assert sub.agent == "solution-architect" and sub.finished and len(sub.calls) == 20
    assert all(c.agent == "solution-architect" for c in sub.calls)


def test_a_sidechains_calls_take_their_place_in_time(realdata: Path) -> None:
    """The subagent ran 19:20:17-19:20:56, while its Task call ran; the main thread's calls came
    at 19:26 and after. Its file is stored after the session file, so by seq its calls came last
    and `tool-sequence [Grep, Write]` failed though Grep came first. The calls and invocations
    are in time order across threads; each thread keeps its own order."""
    from benchtape.checks import CheckContext, build
    from benchtape.core.results import CheckSpec

    path = realdata / "claude-transcripts/codemie_e9fb405b/e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    imported = read_transcript(path)
    session = session_of(imported.actions)
    threads = [c.thread == "main" for c in session.calls]
    assert threads == [False] * 20 + [True] * 13, threads  # the subagent's 20, then the main thread's 13
    assert [i.tool for i in session.invocations][:2] == ["Task", "Glob"]  # the spawn, then what it spawned
    sub = session.subagents["toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"]
    assert [c.seq for c in sub.calls] == sorted(c.seq for c in sub.calls)  # a thread's own order is kept
    ctx = CheckContext(work_dir=None)
    in_order = build(CheckSpec(type="session:tool-sequence", value=["Grep", "Write"])).evaluate(session, ctx)
    backwards = build(CheckSpec(type="session:tool-sequence", value=["Write", "Grep"])).evaluate(session, ctx)
    assert in_order.passed and not backwards.passed, (in_order.reason, backwards.reason)


def test_agent_progress_entries_are_the_subagents_thread(realdata: Path) -> None:
    path = realdata / "claude-transcripts/spotter__subagent-task-agent_progress__v2.1.38.jsonl"
    imported = read_transcript(path)
    session = session_of(imported.actions)
    (thread, sub), = session.subagents.items()
    assert thread == "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX" and sub.agent == "Plan"
    assert sub.prompt and sub.prompt.startswith("Draft bead content")
    assert {c.tool for c in sub.calls} == {"Read", "Bash"}


def test_stream_json_api_error_and_subagent(realdata: Path) -> None:
    path = realdata / "claude-stream-json/obers_ui__agent-subagent__api-error-result__v2.1.72.jsonl"
    imported = read_transcript(path)
    session = session_of(imported.actions)
    assert session.errors == ["API Error: Unable to connect to API (EAI_AGAIN)"]  # said twice (message, result): one error
    sub = session.subagents["toolu_01NF8S7uG6uYWuzuVNq3mU5S"]
    assert sub.agent == "Explore" and sub.finished and sub.output
    inv = [i for i in session.invocations if i.kind == "subagent"]
    assert [i.tool for i in inv] == ["Agent"]
    reported = session.environment["reported"]
    assert reported["source"] == "system:init" and reported["version"] == "2.1.72"
    assert reported["commands"] and reported["mcp_servers"] == [] and "Agent" not in reported["tools"]


def test_read_successes_are_unknown_and_edits_are_ok(realdata: Path) -> None:
    path = realdata / "claude-transcripts/codemie_-tmp-private_v2.0.64/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    imported = read_transcript(path)
    session = session_of(imported.actions)
    outcomes = {c.tool: c.outcome for c in session.calls}
    assert outcomes == {"Write": "ok", "Read": None, "Edit": "ok", "Bash": "ok"}


@pytest.mark.skipif(REALDATA is None, reason="realdata missing")
def test_meta_names_the_session() -> None:
    assert REALDATA is not None
    meta = read_transcript(REALDATA / "codex-rollout/codemie__rollout-2026-05-11T11-26-55-019e1625__cli-0.125.0.jsonl").meta
    assert meta["session_id"] == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert (meta["model"], meta["version"], meta["first_prompt"]) == ("gpt-5.5", "0.125.0", "show tools")
    meta = read_transcript(REALDATA / "claude-transcripts/spotter__short__tool-errors__v2.1.38.jsonl").meta
    assert meta["model"] == "claude-opus-4-6" and meta["version"] == "2.1.38"
    assert meta["first_prompt"] == "mix phx.server doesnt seem to start"


@pytest.mark.parametrize("path", realdata_params("gemini-cli/*.json"))
def test_a_gemini_cli_session_matches_the_file(path: Path) -> None:
    """Gemini CLI's own session record (it was refused: "not supported yet"): every call with its
    result and outcome, every prompt but the CLI's own context, the tokens as the file sums
    them (input less the cached part; thinking billed as output), the model, the last answer."""
    doc = json.loads(path.read_text())
    said = [m for m in doc["messages"] if m["type"] == "gemini"]
    calls = [c for m in said for c in m.get("toolCalls") or []]
    prompts = [m["content"] for m in doc["messages"] if m["type"] == "user" and isinstance(m["content"], str)]
    tokens = {k: sum(m.get("tokens", {}).get(k, 0) for m in said) for k in ("input", "output", "cached", "thoughts")}
    imported = read_transcript(path)
    session = session_of(imported.actions)
    assert [(c.call_id, c.tool, c.outcome) for c in session.calls] == [(c["id"], c["name"], "ok" if c["status"] == "success" else "error") for c in calls]
    assert [a.data["text"] for a in session.actions if a.kind == "message.user"] == prompts and len(prompts) == 5
    assert _tokens(session) == {"tokens_in": tokens["input"] - tokens["cached"], "tokens_out": tokens["output"] + tokens["thoughts"], "cache_read_tokens": tokens["cached"]}
    assert imported.meta["model"] == said[-1]["model"] and imported.meta["harness"] == "gemini-cli" and session.final_output == said[-1]["content"]
    assert {c.tool: c.canonical.action for c in session.calls} == {"write_todos": "plan", "delegate_to_agent": "subagent", "read_file": "read", "search_file_content": "search", "write_file": "write"}  # every tool of the record, none `other`
