"""Export → import gives the same session: the same calls (per thread, in order, with their
outputs and outcomes), the same subagents (agent, parent, spawning call, prompt, answer), the
same errors, metrics and final output. Over the real transcripts, whole and cut short at any
line (a killed run), and over generated action streams with the shapes harnesses write
(delayed and missing results, unknown outcomes, nested and unspawned subagents, structured
outputs, orphan results)."""

from __future__ import annotations

from pathlib import Path

import pytest
from formatskit import REALDATA, atif_roundtrip, real_session, session_of, session_params, views
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchtape.core.model import MAIN, Action

TRANSCRIPTS = sorted(p for p in REALDATA.glob("**/*.jsonl") if not p.name.startswith("agent-")) if REALDATA else []


@pytest.mark.parametrize("path", session_params())
def test_every_real_transcript_comes_back_as_itself(path: Path) -> None:
    session = real_session(path)
    back = atif_roundtrip(session)
    assert views(back) == views(session)
    assert back.warnings == session.warnings  # an exported session says nothing it has no place for


@pytest.mark.skipif(not TRANSCRIPTS, reason="no real transcripts")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TRANSCRIPTS or [Path(".")]), st.integers(min_value=0, max_value=400))
def test_a_real_transcript_cut_at_any_line_comes_back_as_itself(path: Path, keep: int) -> None:
    session = real_session(path, keep)
    assert views(atif_roundtrip(session)) == views(session)


# ---------------------------------------------------------------- generated streams

OUTPUTS = st.one_of(st.none(), st.text(max_size=12), st.just([{"type": "text", "text": "block"}, {"type": "image", "source": {"type": "base64", "data": "AAA"}}]), st.just({"stdout": "x", "code": 1}))
INPUTS = st.one_of(st.fixed_dictionaries({"file_path": st.sampled_from(["a.py", "b.md"])}), st.just({}), st.just("raw input"))
EVENTS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.sampled_from(["Read", "Bash", "mcp__x__y"]), INPUTS),
        st.tuples(st.just("result"), st.integers(0, 8), OUTPUTS, st.one_of(st.none(), st.booleans())),
        st.tuples(st.just("spawn"), st.sampled_from(["Explore", "Plan", None]), st.booleans()),
        st.tuples(st.just("end"), st.text(max_size=8)),
        st.tuples(st.sampled_from(["say", "think", "user", "error", "final", "hook"]), st.text(max_size=10)),
        st.tuples(st.just("stray"), st.sampled_from(["t-stray", "t-other"])),
        st.tuples(st.just("metrics"), st.dictionaries(st.sampled_from(["tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens", "turns"]), st.integers(0, 5000), max_size=5), st.one_of(st.none(), st.floats(0, 5, allow_nan=False))),
    ),
    max_size=40,
)


def _stream(events: list[tuple]) -> list[Action]:
    """Actions as a harness writes them: a stack of threads (a spawn opens one, `end` closes it
    with the subagent's answer and, unless detached, the spawn's result in the parent)."""
    out: list[Action] = [Action("session.started", {"scenario": "gen", "harness": "mock", "prompt": "go"})]
    stack: list[tuple[str, str | None, bool]] = [(MAIN, None, False)]
    calls: list[tuple[str, str]] = []  # (thread, call id) made so far
    n = 0
    for event in events:
        thread = stack[-1][0]
        kind = event[0]
        n += 1
        if kind == "call":
            cid = f"c{n}"
            calls.append((thread, cid))
            out.append(Action("tool.call", {"call_id": cid, "tool": event[1], "input": event[2]}, thread=thread))
        elif kind == "result" and calls:
            owner, cid = calls[event[1] % len(calls)]
            out.append(Action("tool.result", {"call_id": cid, "output": event[2], "is_error": event[3]}, thread=owner))
        elif kind == "spawn":
            child = f"agent-{n}"
            out.append(Action("subagent.spawned", {"thread": child, "call_id": f"s{n}", "agent": event[1], "prompt": f"do {n}", "tool": "Task"}, thread=thread))
            out.append(Action("message.user", {"text": f"do {n}"}, thread=child))
            stack.append((child, f"s{n}", event[2]))
        elif kind == "end" and len(stack) > 1:
            child, cid, detached = stack.pop()
            out.append(Action("subagent.finished", {"thread": child, "output": event[1]}, thread=child))
            if not detached:
                out.append(Action("tool.result", {"call_id": cid, "output": event[1], "is_error": False}, thread=stack[-1][0]))
        elif kind == "say":
            out.append(Action("message.assistant", {"text": event[1]}, thread=thread))
        elif kind == "think":
            out.append(Action("thinking", {"text": event[1]}, thread=thread))
        elif kind == "user":
            out.append(Action("message.user", {"text": event[1]}, thread=thread))
        elif kind == "error":
            out.append(Action("error", {"message": event[1], "source": "api"}, thread=thread))
        elif kind == "final":
            out.append(Action("final_output", {"text": event[1]}))
        elif kind == "hook":
            out.append(Action("hook", {"event": "PostToolUse", "name": event[1]}, thread=thread))
        elif kind == "stray":
            out.append(Action("tool.call", {"call_id": f"x{n}", "tool": "Grep", "input": {}, "agent": "sidecar"}, thread=event[1]))
        elif kind == "metrics":
            data = dict(event[1]) | ({"cost_usd": event[2]} if event[2] is not None else {})
            out.append(Action("metrics", data))
    return out + [Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 3.0})]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EVENTS)
def test_a_generated_stream_comes_back_as_itself(events: list[tuple]) -> None:
    session = session_of(_stream(events))
    session.id = "01GENERATED"
    back = atif_roundtrip(session)
    assert views(back) == views(session)
    assert back.warnings == session.warnings
