"""session:* checks, graded on sessions the real mock agent recorded.

Hand-folded sessions (`project`) appear only where the mock cannot produce the shape:
follow-up turns, a skill the tool answered with an error, and image attachments.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mocksession import mock_session

from benchtape.checks.registry import REGISTRY, CheckConfigError, CheckContext, build, catalog
from benchtape.checks.session import VERBS
from benchtape.core.model import Action, Session, project
from benchtape.core.results import CheckSpec, Result

CTX = CheckContext()

# The main thread makes 7 tool calls; the Explore subagent makes 2 more.
WORK_STEPS = [
    {"tool": "Read", "input": {"file_path": "a.txt"}},  # outcome unknown, as Claude Code records it
    {"tool": "Grep", "input": {"pattern": "hi"}},
    {"tool": "Bash", "input": {"command": "true", "timeout": 5000}},  # ok
    {"tool": "Bash", "input": {"command": "false"}},  # error
    {"tool": "Edit", "input": {"file_path": "a.txt", "old_string": "hi", "new_string": "hello"}},
    {"tool": "mcp__srv__query", "input": {"q": "x"}, "result": "rows", "is_error": False},
    {"tool": "Read", "input": {"file_path": "missing.txt"}},  # a nonexistent path: the Read errors
    {"skill": "Demo"},
    {"subagent": {"agent": "Explore", "prompt": "look around", "steps": [
        {"tool": "Grep", "input": {"pattern": "hello"}},
        {"tool": "Glob", "input": {"pattern": "*.txt"}},
        {"say": "found a.txt"},
    ]}},
    {"say": "done"},
]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Session:
    return mock_session(tmp_path_factory.mktemp("work"), WORK_STEPS, files={"a.txt": "hi\n", "b.txt": "b\n"})


@pytest.fixture(scope="module")
def noop(tmp_path_factory) -> Session:
    return mock_session(tmp_path_factory.mktemp("noop"), noop=True)


@pytest.fixture(scope="module")
def delegating(tmp_path_factory) -> Session:
    """The main thread only delegates; the first subagent runs without a single tool call."""
    steps = [
        {"subagent": {"agent": "general-purpose", "prompt": "think", "steps": [{"say": "thought"}]}},
        {"subagent": {"agent": "general-purpose", "prompt": "read", "steps": [{"tool": "Read", "input": {"file_path": "a.txt"}}]}},
        {"subagent": {"agent": "Explore", "prompt": "grep", "steps": [{"tool": "Grep", "input": {"pattern": "a"}}]}},
        {"say": "delegated"},
    ]
    return mock_session(tmp_path_factory.mktemp("delegating"), steps, files={"a.txt": "a\n"})


@pytest.fixture(scope="module")
def linked(tmp_path_factory) -> Session:
    """The agent reads through a symlinked spelling of its work dir (macOS's /var vs /private/var)."""
    base = tmp_path_factory.mktemp("linked")
    real = base / "real"
    real.mkdir()
    (base / "alias").symlink_to(real)
    return mock_session(real, [{"tool": "Read", "input": {"file_path": str(base / "alias" / "a.txt")}}], files={"a.txt": "x\n"})


def folded(*actions: Action) -> Session:
    started = Action("session.started", {"scenario": "t", "harness": "mock", "prompt": "p", "work_dir": "/w"})
    finished = Action("session.finished", {"status": "ok", "exit_code": 0, "wall_ms": 1.0})
    return project(a.stamped(seq=i + 1, at=1.0) for i, a in enumerate([started, *actions, finished]))


def call(cid: str, tool: str, is_error: bool | None = False) -> list[Action]:
    return [Action("tool.call", {"call_id": cid, "tool": tool, "input": {}}), Action("tool.result", {"call_id": cid, "output": "", "is_error": is_error})]


def test_tool_args_match_keeps_a_huge_argument_out_of_the_verdict():
    """A Write's whole content was quoted into the reason and, ten calls over, the evidence."""
    content = "x" * 100_000
    s = folded(*[a for i in range(12) for a in [Action("tool.call", {"call_id": f"w{i}", "tool": "Write", "input": {"file_path": "a.py", "content": content, "opts": [content]}})]])
    r = grade(s, "session:tool-args-match", "Write", args={"content": "contains:needle"})
    assert r.status == "FAIL" and r.evidence["calls_of_tool"] == 12
    assert len(r.reason) < 400 and r.reason.startswith("none of the 12 Write call(s) matched; the first: content was 'xxx")
    r = grade(s, "session:tool-args-match", "Write", args={"file_path": "b.py", "opts": ["y"]})
    assert len(r.reason) < 400 and len(str(r.evidence)) < 10_000


@pytest.fixture(scope="module")
def two_turns() -> Session:
    return folded(
        Action("message.user", {"text": "first"}),
        *call("c1", "Read"), *call("c2", "Edit"), *call("c3", "Bash"),
        Action("message.user", {"text": "follow up"}),
        *call("c4", "Bash"),
    )


def grade(session: Session, type: str, value=None, **args) -> Result:
    return build(CheckSpec(type=type, value=value, args=args)).evaluate(session, CTX)


def refused(type: str, value=None, **args) -> str:
    with pytest.raises(CheckConfigError) as exc:
        build(CheckSpec(type=type, value=value, args=args))
    return str(exc.value)


# ---------------------------------------------------------------- registration and aliases


def test_all_13_types_registered_in_the_session_family():
    cat = catalog()
    assert {t for t in cat if t.startswith("session:")} >= {f"session:{v}" for v in VERBS}
    assert len(VERBS) == 13
    assert all(cat[f"session:{v}"].family == "session" for v in VERBS)


ALIAS_SPECS = {
    "tool-used": dict(value="Read"),
    "tool-args-match": dict(value="Read", args={"args": {"file_path": "a.txt"}}),
    "tool-sequence": dict(value=["Read"]),
    "tools-only": dict(value=["Read"]),
    "file-read": dict(value="a.txt"),
    "step-count": dict(args={"lte": 3}),
    "turn-count": dict(args={"lte": 3}),
    "turn-step-count": dict(args={"lte": 3}),
    "subagent-used": dict(),
    "subagent-count": dict(value=2),
    "skill-used": dict(value="Demo"),
    "image-sent": dict(),
}


@pytest.mark.parametrize("verb", sorted(ALIAS_SPECS))
def test_trajectory_alias_loads_as_canonical(verb):
    check = build(CheckSpec(type=f"trajectory:{verb}", **ALIAS_SPECS[verb]))
    assert check.type == f"session:{verb}"
    assert check.spec.to_dict()["type"] == f"session:{verb}"  # the identity is the canonical spelling's


def test_bare_skill_used_loads_as_canonical():
    assert build(CheckSpec(type="skill-used", value="Demo")).type == "session:skill-used"


def test_goal_success_is_refused_under_both_spellings():
    for spelling in ("session:goal-success", "trajectory:goal-success"):
        assert "use llm-rubric" in refused(spelling)
    assert "session:goal-success" in REGISTRY  # registered (listed), yet never constructible


# ---------------------------------------------------------------- tool-used


def test_tool_used_passes_on_each_named_tool(work):
    r = grade(work, "session:tool-used", ["Read", "Bash", "Edit"])
    assert r.status == "PASS"
    assert set(r.evidence) == {"counts", "counts_attempted", "calls_in_scope", "outcome_census"}  # nothing declared
    assert r.evidence["counts"] == {"Read": 2, "Bash": 2, "Edit": 1}


def test_tool_used_fails_on_a_tool_never_invoked(work, noop):
    r = grade(work, "session:tool-used", ["Read", "Write"])
    assert r.status == "FAIL" and r.reason.startswith("Write: invoked 0 times")
    assert grade(noop, "session:tool-used", "Read").status == "FAIL"


def test_tool_used_counts_per_tool_never_in_total(work):
    # Read 2 + Edit 1 = 3 in total, yet Edit alone is below 2.
    r = grade(work, "session:tool-used", ["Read", "Edit"], gte=2)
    assert r.status == "FAIL"
    assert r.reason.startswith("Edit: invoked once")
    assert r.evidence["gte"] == 2


def test_tool_used_reads_skills_spawns_and_mcp_calls(work):
    r = grade(work, "session:tool-used", ["Skill", "Task", "mcp__srv__query"])
    assert r.status == "PASS", r.reason
    assert grade(work, "session:tool-used", "Task", eq=1).status == "PASS"


def test_tool_used_ceiling(work):
    assert grade(work, "session:tool-used", "Write", lte=0).status == "PASS"
    r = grade(work, "session:tool-used", "Bash", max=1)
    assert r.status == "FAIL" and "above the ceiling of 1" in r.reason
    assert r.evidence["lte"] == 1 and "max" not in r.evidence


def test_unknown_outcome_is_neither_ok_nor_error(work):
    ok = grade(work, "session:tool-used", "Read", outcome="ok")
    assert ok.status == "FAIL"
    # One Read succeeded without a recorded outcome, the other (missing.txt) errored.
    assert ok.evidence["counts"] == {"Read": 0}
    assert ok.evidence["counts_attempted"] == {"Read": 2}
    assert ok.evidence["outcome_census"] == {"ok": 0, "error": 1, "unknown": 1}
    assert ok.evidence["outcome"] == "ok"
    assert "(2 attempted, 1 with no recorded outcome (Read ×1): unknown satisfies neither ok nor error)" in ok.reason  # never a silent 0
    assert grade(work, "session:tool-used", "Read", outcome="error", eq=1).status == "PASS"
    assert grade(work, "session:tool-used", "Bash", outcome="ok", eq=1).status == "PASS"
    assert grade(work, "session:tool-used", "Bash", outcome="error", eq=1).status == "PASS"
    assert grade(work, "session:tool-used", "Bash", outcome="any", eq=2).status == "PASS"


def test_tool_used_thread_scope_and_the_spawn_row_rule(work):
    r = grade(work, "session:tool-used", "Task", thread="main")
    assert r.status == "FAIL"  # the spawn row carries the subagent's thread, never main
    assert r.evidence["thread"] == "main"
    assert grade(work, "session:tool-used", "Task", thread="Explore").status == "PASS"
    assert grade(work, "session:tool-used", "Glob", thread="main").status == "FAIL"
    assert grade(work, "session:tool-used", "Glob", thread="Explore").status == "PASS"  # by type
    assert grade(work, "session:tool-used", "Glob", thread="agent-01").status == "PASS"  # by thread id
    assert grade(work, "session:tool-used", "Grep", thread="main", eq=1).status == "PASS"
    assert grade(work, "session:tool-used", "Grep", eq=2).status == "PASS"  # no thread: every thread


def test_tool_used_refusals():
    assert "value must name a tool or list tools" in refused("session:tool-used")
    assert "value must name a tool" in refused("session:tool-used", [])
    assert "every entry of value must be a tool name" in refused("session:tool-used", ["Read", 3])
    assert "args.outcome must be one of any, ok, error; got 'success'" in refused("session:tool-used", "Read", outcome="success")
    assert "args.thread must be main" in refused("session:tool-used", "Read", thread="")
    assert "no count fits" in refused("session:tool-used", "Read", gte=3, lte=1)


# ---------------------------------------------------------------- tool-args-match


def test_tool_args_match_passes_on_exact_and_matchers(work):
    assert grade(work, "session:tool-args-match", "Read", args={"file_path": "a.txt"}).status == "PASS"
    assert grade(work, "session:tool-args-match", "Read", args={"file_path": "glob:*.txt"}).status == "PASS"
    r = grade(work, "session:tool-args-match", "Bash", args={"command": "contains:fal"})
    assert r.status == "PASS"
    assert set(r.evidence) >= {"tool", "expected", "calls_of_tool", "candidates", "matched_call"}
    assert r.evidence["matched_call"]["index"] == 2


def test_tool_args_match_fails_when_no_call_matches(work):
    r = grade(work, "session:tool-args-match", "Read", args={"file_path": "b.txt"})
    assert r.status == "FAIL"
    assert r.reason == "none of the 2 Read call(s) matched; the first: file_path was 'a.txt', wanted b.txt"
    assert r.evidence["calls_of_tool"] == 2 and "matched_call" not in r.evidence


def test_tool_args_match_non_strings_are_exact(work):
    assert grade(work, "session:tool-args-match", "Bash", args={"timeout": 5000}).status == "PASS"
    assert grade(work, "session:tool-args-match", "Bash", args={"timeout": "5000"}).status == "FAIL"
    assert grade(work, "session:tool-args-match", "Bash", args={"timeout": 5000, "command": "false"}).status == "FAIL"  # all keys, one call


def test_tool_args_match_reads_calls_only(work):
    r = grade(work, "session:tool-args-match", "Task", args={"prompt": "look around"})
    assert r.status == "FAIL" and r.reason == "no Task call"


def test_tool_args_match_outcome_and_thread(work):
    assert grade(work, "session:tool-args-match", "Bash", args={"command": "false"}, outcome="ok").status == "FAIL"
    assert grade(work, "session:tool-args-match", "Bash", args={"command": "false"}, outcome="error").status == "PASS"
    assert grade(work, "session:tool-args-match", "Grep", args={"pattern": "hello"}, thread="main").status == "FAIL"
    assert grade(work, "session:tool-args-match", "Grep", args={"pattern": "hello"}, thread="Explore").status == "PASS"


def test_tool_args_match_refusals():
    assert "args.args is required" in refused("session:tool-args-match", "Read")
    assert "args.args is required" in refused("session:tool-args-match", "Read", args={})
    assert "args.args is required" in refused("session:tool-args-match", "Read", args=["file_path"])
    assert "value must be the tool's name" in refused("session:tool-args-match", ["Read"], args={"file_path": "x"})
    assert "args.args.file_path: glob:[x: '[' at position 0 is never closed" in refused(
        "session:tool-args-match", "Read", args={"file_path": "glob:[x"}
    )


# ---------------------------------------------------------------- tool-sequence


def test_tool_sequence_is_an_ordered_subsequence(work):
    r = grade(work, "session:tool-sequence", ["Read", "Bash", "Edit"])
    assert r.status == "PASS"
    assert r.evidence["positions"] == [1, 3, 5]
    assert grade(work, "session:tool-sequence", ["Edit", "Read"]).status == "PASS"  # missing.txt is read after the edit


def test_tool_sequence_fails_out_of_order(work):
    r = grade(work, "session:tool-sequence", ["Edit", "Bash"])
    assert r.status == "FAIL"
    assert r.reason == "Bash (step 2 of 2) was never called after Edit (call 5 of 9)"
    assert set(r.evidence) == {"expected", "observed", "matched", "positions"}


def test_tool_sequence_reads_calls_only_and_honours_thread(work):
    assert grade(work, "session:tool-sequence", ["Bash", "Skill"]).status == "FAIL"  # a skill is no call
    assert grade(work, "session:tool-sequence", ["Edit", "Glob"]).status == "PASS"  # Glob ran in the subagent
    assert grade(work, "session:tool-sequence", ["Edit", "Glob"], thread="main").status == "FAIL"
    assert grade(work, "session:tool-sequence", ["Grep", "Glob"], thread="Explore").evidence["observed"] == ["Grep", "Glob"]


def test_tool_sequence_refusals():
    assert "value must name a tool or list tools" in refused("session:tool-sequence")
    assert "value must name a tool or list tools" in refused("session:tool-sequence", [])


# ---------------------------------------------------------------- tools-only

EVERY_TOOL = ["Read", "Grep", "Glob", "Bash", "Edit", "mcp__srv__query"]


def test_tools_only_passes_inside_the_fence(work):
    r = grade(work, "session:tools-only", EVERY_TOOL)
    assert r.status == "PASS" and r.evidence["calls_seen"] == 9


def test_tools_only_names_the_first_call_outside_the_set(work):
    r = grade(work, "session:tools-only", ["Read", "Grep"])
    assert r.status == "FAIL"
    assert r.reason.startswith("Bash is not allowed (call 3 of 9)")
    assert [v["tool"] for v in r.evidence["violations"]] == ["Bash", "Bash", "Edit", "mcp__srv__query", "Glob"]  # every one named


def test_tools_only_thread_and_outcome(work):
    assert grade(work, "session:tools-only", ["Grep", "Glob"], thread="Explore").status == "PASS"
    r = grade(work, "session:tools-only", ["Read", "Grep", "Glob", "Edit", "mcp__srv__query"], outcome="error")
    # Scoped to recorded errors: the failed Bash is outside the set, the errored Read is inside it.
    assert r.status == "FAIL" and r.reason.startswith("Bash is not allowed (call 1 of 2)")
    assert r.evidence["outcome"] == "error"


def test_tools_only_passes_vacuously_on_an_empty_scope(noop, delegating):
    r = grade(noop, "session:tools-only", ["Read"])
    assert r.status == "PASS" and r.evidence["calls_seen"] == 0
    assert "nothing to check" in r.reason
    assert grade(delegating, "session:tools-only", ["Read"], thread="main").evidence["calls_seen"] == 0


def test_tools_only_fails_on_a_subagent_whose_calls_were_not_captured(delegating):
    r = grade(delegating, "session:tools-only", ["Read", "Grep"])
    assert r.status == "FAIL"
    assert "subagent general-purpose (agent-01) ran but this capture recorded none of its tool calls" in r.reason
    assert r.evidence["subagents_without_calls"] == [{"thread": "agent-01", "agent": "general-purpose"}]
    assert grade(delegating, "session:tools-only", ["Read"], thread="agent-02").status == "PASS"


def test_tools_only_refuses_an_empty_allowlist():
    msg = refused("session:tools-only", [])
    assert "value is an empty list" in msg and "session:step-count with args: {eq: 0}" in msg


# ---------------------------------------------------------------- file-read


def test_file_read_relative_absolute_and_matchers(work):
    r = grade(work, "session:file-read", "a.txt")
    assert r.status == "PASS"
    assert set(r.evidence) >= {"work_dir", "expected_resolved", "paths_read"}
    assert r.evidence["expected_resolved"] == os.path.realpath(os.path.join(work.work_dir, "a.txt"))
    assert r.evidence["paths_read"] == ["a.txt", "missing.txt"]
    assert grade(work, "session:file-read", "./sub/../a.txt").status == "PASS"  # normalised
    assert grade(work, "session:file-read", str(Path(work.work_dir) / "a.txt")).status == "PASS"
    assert grade(work, "session:file-read", "glob:**/a.txt").status == "PASS"
    assert grade(work, "session:file-read", "glob:*.txt").status == "PASS"  # against the path relative to the work dir
    assert grade(work, "session:file-read", "suffix:/a.txt").status == "PASS"


def test_file_read_fails_on_a_file_not_read(work, noop):
    r = grade(work, "session:file-read", "b.txt")
    assert r.status == "FAIL" and "was not read" in r.reason
    assert grade(noop, "session:file-read", "a.txt").status == "FAIL"


def test_file_read_counts_a_read_of_a_nonexistent_path(work):
    assert grade(work, "session:file-read", "missing.txt").status == "PASS"
    assert grade(work, "session:file-read", "missing.txt", outcome="ok").status == "FAIL"


def test_file_read_compares_real_paths(linked):
    r = grade(linked, "session:file-read", "a.txt")
    assert r.status == "PASS", r.reason
    assert "alias" in r.evidence["paths_read"][0] and "alias" not in r.evidence["expected_resolved"]


def test_file_read_tools_and_thread(work, delegating):
    assert grade(work, "session:file-read", "a.txt", tools=["NotebookRead"]).status == "FAIL"
    assert grade(work, "session:file-read", "a.txt", tools=["Edit"]).status == "PASS"  # Edit's file_path, when asked
    assert grade(delegating, "session:file-read", "a.txt", thread="main").status == "FAIL"
    assert grade(delegating, "session:file-read", "a.txt", thread="agent-02").status == "PASS"


def test_file_read_refusals():
    assert "value must be the path read" in refused("session:file-read")
    assert "args.tools must be a non-empty list" in refused("session:file-read", "a.txt", tools=[])
    assert "glob" in refused("session:file-read", "glob:[a")


# ---------------------------------------------------------------- step-count


def test_step_count_counts_the_main_thread_only(work):
    assert len(work.calls) == 9
    r = grade(work, "session:step-count", lte=7)
    assert r.status == "PASS" and r.evidence == {"step_count": 7, "lte": 7}
    r = grade(work, "session:step-count", lte=6)
    assert r.status == "FAIL" and "7 is above the ceiling of 6" in r.reason
    assert grade(work, "session:step-count", eq=7).status == "PASS"
    assert grade(work, "session:step-count", min=1, max=10).status == "PASS"


def test_step_count_on_the_noop_is_a_real_zero(noop):
    assert grade(noop, "session:step-count", gte=1).status == "FAIL"
    assert grade(noop, "session:step-count", eq=0).status == "PASS"


def test_step_count_refuses_a_missing_bound():
    assert "session:step-count: a bound is required" in refused("session:step-count")
    assert "session:step-count: a bound is required" in refused("trajectory:step-count")


@pytest.mark.parametrize("type", ["session:step-count", "session:turn-count", "session:turn-step-count", "session:subagent-used"])
def test_a_value_is_refused_where_none_is_read(type):
    """These read a bound or args.agent; a `value` was silently ignored, so
    `subagent-used` with `value: Explore` passed on any subagent at all."""
    msg = refused(type, "Explore") if type == "session:subagent-used" else refused(type, 5, lte=9)
    assert f"{type}: takes no 'value'" in msg
    if type == "session:subagent-used":
        assert "write args: {agent: 'Explore'}" in msg


# ---------------------------------------------------------------- turn-count, turn-step-count


def test_turn_count(work, two_turns):
    assert grade(work, "session:turn-count", eq=1).status == "PASS"
    r = grade(work, "session:turn-count", gte=2)
    assert r.status == "FAIL" and r.evidence == {"turn_count": 1, "gte": 2}
    assert grade(two_turns, "session:turn-count", eq=2).status == "PASS"
    assert grade(two_turns, "session:turn-count", lte=1).status == "FAIL"
    assert grade(two_turns, "session:turn-count").status == "PASS"  # no bound: at least one turn


def test_turn_step_count_ceiling_on_the_busiest_floor_on_the_quietest(two_turns):
    r = grade(two_turns, "session:turn-step-count", lte=2)
    assert r.status == "FAIL"
    assert r.reason == "the ceiling broke on turn 1 (the busiest): 3 is above the ceiling of 2"
    assert r.evidence["steps_per_turn"] == [3, 1]
    r = grade(two_turns, "session:turn-step-count", gte=2)
    assert r.status == "FAIL"
    assert r.reason == "the floor broke on turn 2 (the quietest): 1 is below the floor of 2"
    r = grade(two_turns, "session:turn-step-count", eq=2)
    assert "turn 1 (the busiest)" in r.reason and "turn 2 (the quietest)" in r.reason
    assert grade(two_turns, "session:turn-step-count", gte=1, lte=3).status == "PASS"


def test_turn_step_count_on_a_mock_session(work, noop):
    assert grade(work, "session:turn-step-count", eq=7).status == "PASS"
    assert grade(noop, "session:turn-step-count", gte=1).status == "FAIL"


# ---------------------------------------------------------------- subagents


def test_subagent_used(work, noop):
    assert grade(work, "session:subagent-used").status == "PASS"
    r = grade(work, "session:subagent-used", agent="Explore")
    assert r.status == "PASS" and r.evidence["agent"] == "Explore"
    assert grade(work, "session:subagent-used", agent="agent-01").status == "PASS"
    r = grade(work, "session:subagent-used", agent="Plan")
    assert r.status == "FAIL" and r.reason == "no Plan subagent was spawned; spawned: Explore"
    assert grade(noop, "session:subagent-used").status == "FAIL"


def test_subagent_count(delegating, work):
    assert grade(delegating, "session:subagent-count", 3).status == "PASS"
    r = grade(delegating, "session:subagent-count", 2, agent="general-purpose")
    assert r.status == "PASS" and r.evidence["spawns"] == 2
    assert grade(delegating, "session:subagent-count", 3, agent="general-purpose").status == "FAIL"
    assert grade(work, "session:subagent-count", 2).status == "FAIL"


@pytest.mark.parametrize("value", [0, -1, True, "2", 1.5])
def test_subagent_count_refuses_a_non_positive_whole_number(value):
    assert "value must be a positive whole number" in refused("session:subagent-count", value)


# ---------------------------------------------------------------- skill-used


def skill(cid: str, name: str, is_error: bool | None) -> list[Action]:
    row = [Action("skill.invoked", {"name": name, "call_id": cid, "tool": "Skill"})]
    if is_error is not None:
        row.append(Action("tool.result", {"call_id": cid, "output": "", "is_error": is_error}))
    return row


def test_skill_used_is_case_insensitive(work, noop):
    r = grade(work, "session:skill-used", "demo")
    assert r.status == "PASS" and r.evidence["skills_seen"] == ["Demo"]
    assert grade(work, "session:skill-used", "other").status == "FAIL"
    assert grade(noop, "session:skill-used", "Demo").status == "FAIL"


def test_skill_used_fails_only_when_every_attempt_errored():
    failed = folded(Action("message.user", {"text": "p"}), *skill("s1", "review", True), *skill("s2", "review", True))
    r = grade(failed, "session:skill-used", "review")
    assert r.status == "FAIL" and "every attempt ended in an error" in r.reason
    assert r.evidence["attempts_failed"] == 2
    mixed = folded(Action("message.user", {"text": "p"}), *skill("s1", "review", True), *skill("s2", "review", None))
    assert grade(mixed, "session:skill-used", "review").status == "PASS"  # no result counts as invoked


def test_skill_used_refuses_a_missing_name():
    assert "value must be the skill's name" in refused("session:skill-used")


# ---------------------------------------------------------------- image-sent


def test_image_sent_counts_image_attachments():
    s = folded(
        Action("message.user", {"text": "look", "attachments": [{"media_type": "image/png"}, {"media_type": "text/plain"}]}),
        Action("message.user", {"text": "again", "attachments": [{"media_type": "image/jpeg"}]}),
    )
    r = grade(s, "session:image-sent")
    assert r.status == "PASS" and r.evidence == {"images_sent": 2, "minimum": 1, "media_types": ["image/jpeg", "image/png"]}
    assert grade(s, "session:image-sent", 2).status == "PASS"
    assert grade(s, "session:image-sent", 3).status == "FAIL"


def test_image_sent_fails_on_the_mock(work):
    r = grade(work, "session:image-sent")
    assert r.status == "FAIL" and r.evidence["images_sent"] == 0


@pytest.mark.parametrize("value", [0, 1.5, True, "1"])
def test_image_sent_refuses_a_bad_count(value):
    assert "value must be a whole number of images, at least 1" in refused("session:image-sent", value)


# ---------------------------------------------------------------- purity


def test_grading_twice_gives_the_same_result(work):
    for type, value, args in [("session:tool-used", ["Read"], {}), ("session:file-read", "a.txt", {}), ("session:tools-only", ["Read"], {})]:
        check = build(CheckSpec(type=type, value=value, args=args))
        assert check.evaluate(work, CTX) == check.evaluate(work, CTX)


def test_a_spawn_recorded_twice_is_one_invocation_and_no_call():
    """An adapter that writes both the Task tool.call and the spawn row: one spawn, on the subagent's thread."""
    s = folded(
        Action("message.user", {"text": "p"}),
        Action("tool.call", {"call_id": "t1", "tool": "Task", "input": {"prompt": "go"}}),
        Action("subagent.spawned", {"thread": "sub-1", "call_id": "t1", "agent": "Explore", "prompt": "go", "tool": "Task"}),
        Action("tool.call", {"call_id": "g1", "tool": "Grep", "input": {}}, thread="sub-1"),
        Action("tool.result", {"call_id": "g1", "output": "", "is_error": None}, thread="sub-1"),
        Action("tool.result", {"call_id": "t1", "output": "ok", "is_error": False}),
    )
    assert grade(s, "session:tool-used", "Task", eq=1).status == "PASS"
    assert grade(s, "session:tool-used", "Task", thread="main").status == "FAIL"
    assert grade(s, "session:tool-sequence", ["Task"]).status == "FAIL"  # Calls never hold a spawn
    r = grade(s, "session:tools-only", ["Grep"])
    assert r.status == "PASS" and r.evidence["calls_seen"] == 1


# ---------------------------------------------------------------- canonical actions (issue 34)


def _codex_session(tmp: str = "/w") -> Session:
    """A codex session as its adapter records it: a `cat`, an apply_patch, a test run."""
    from benchtape.core.canonical import annotate

    def tc(cid: str, tool: str, input: dict) -> list[Action]:
        return [Action("tool.call", annotate({"call_id": cid, "tool": tool, "input": input}, "codex")), Action("tool.result", {"call_id": cid, "output": "", "is_error": False})]

    return folded(
        Action("session.started", {"scenario": "s", "harness": "codex", "prompt": "p", "work_dir": tmp}),
        *tc("c1", "command_execution", {"command": "/bin/bash -lc 'cat -- calc.py'"}),
        *tc("c2", "file_change", {"changes": [{"path": f"{tmp}/calc.py", "kind": "update"}]}),
        *tc("c3", "command_execution", {"command": "/bin/bash -lc 'python3 -m unittest -q'"}),
    )


def test_a_canonical_name_matches_codex_calls_a_native_one_keeps_its_meaning():
    s = _codex_session()
    assert grade(s, "session:tool-sequence", ["action:read", "action:edit", "action:shell"]).passed
    assert not grade(s, "session:tool-sequence", ["Read", "Edit", "Bash"]).passed  # a native name is that tool, exactly
    assert grade(s, "session:tool-sequence", ["command_execution", "file_change", "command_execution"]).passed
    assert grade(s, "session:tools-only", ["action:read", "action:edit", "action:shell"]).passed
    failed = grade(s, "session:tools-only", ["action:read", "action:edit"])
    assert not failed.passed and "command_execution is not allowed (call 3 of 3)" in failed.reason
    used = grade(s, "session:tool-used", ["action:edit", "action:shell"])
    assert used.passed and used.evidence["counts"] == {"action:edit": 1, "action:shell": 2}  # the `cat` ran in a shell too
    assert grade(s, "session:file-read", "calc.py").passed  # the default counts a canonical read
    assert not grade(s, "session:file-read", "calc.py", tools=["Read"]).passed
    assert grade(s, "session:tool-args-match", "action:read", args={"command": "contains:cat --"}).passed  # the args are the harness's own
    assert grade(s, "code-tool-call-accuracy", None, expectedToolOrder=["action:read", "action:edit", "action:shell"]).passed


def test_a_misspelt_action_is_refused_when_the_check_is_built():
    for type, value in (("session:tool-sequence", ["action:edits"]), ("session:tools-only", ["action:mcp:"]), ("session:tool-used", "action:Read")):
        with pytest.raises(CheckConfigError, match="names no action"):
            build(CheckSpec(type=type, value=value))


# ---------------------------------------------------------------- one verdict on every harness: outcomes, polls, no work dir


def _harness_session(harness: str, *calls: tuple[str, dict, bool | None], work_dir: str | None = "/w") -> Session:
    """A session of `harness` whose calls are annotated by the one mapping, each with its result's is_error."""
    from benchtape.core.canonical import annotate

    started: dict = {"scenario": "s", "harness": harness, "prompt": "p"}
    if work_dir is not None:
        started["work_dir"] = work_dir
    rows = [Action("session.started", started)]
    for i, (tool, input, is_error) in enumerate(calls):
        rows += [Action("tool.call", annotate({"call_id": f"c{i}", "tool": tool, "input": input}, harness)), Action("tool.result", {"call_id": f"c{i}", "output": "", "is_error": is_error})]
    finished = Action("session.finished", {"status": "ok", "exit_code": 0, "wall_ms": 1.0})
    return project(a.stamped(seq=i + 1, at=1.0) for i, a in enumerate([*rows, finished]))


# The same behaviour, two good reads, as each harness records it: Claude Code says nothing of a
# good Read's success, codex reports each command's exit.
CLAUDE_READS = _harness_session("claude-code", ("Read", {"file_path": "/w/a.js"}, None), ("Read", {"file_path": "/w/b.js"}, None))
CODEX_READS = _harness_session("codex", ("exec_command", {"cmd": "cat a.js"}, False), ("exec_command", {"cmd": "cat b.js"}, False))


def test_a_canonical_outcome_the_harness_did_not_record_is_an_error_never_a_silent_zero():
    assert grade(CODEX_READS, "session:tool-used", "action:read", outcome="ok").status == "PASS"
    r = grade(CLAUDE_READS, "session:tool-used", "action:read", outcome="ok")
    assert r.status == "ERROR", r.reason
    assert "cannot be graded with outcome ok on claude-code" in r.reason and "Read ×2" in r.reason and "from 0 to 2" in r.reason
    assert r.evidence["outcome_census"] == {"ok": 0, "error": 0, "unknown": 2}
    # a ceiling the unrecorded calls could break either way: no PASS resting on them either
    assert grade(CLAUDE_READS, "session:tool-used", "action:read", outcome="ok", lte=1).status == "ERROR"
    assert grade(CODEX_READS, "session:tool-used", "action:read", outcome="ok", lte=1).status == "FAIL"
    # under outcome: any nothing is unknown: the same verdict on both
    for s in (CLAUDE_READS, CODEX_READS):
        assert grade(s, "session:tool-used", "action:read", eq=2).status == "PASS"


def test_a_canonical_outcome_is_graded_when_the_unrecorded_calls_cannot_change_the_verdict():
    mixed = _harness_session("claude-code", ("Bash", {"command": "cat a.js"}, False), ("Read", {"file_path": "/w/b.js"}, None))
    assert grade(mixed, "session:tool-used", "action:read", outcome="ok").status == "PASS"  # 1 known ok: at least 1 whatever the Read did
    assert grade(mixed, "session:tool-used", "action:read", outcome="ok", gte=5).status == "FAIL"  # 2 at most: below 5 whatever it did
    assert grade(mixed, "session:tool-used", "action:read", outcome="ok", eq=2).status == "ERROR"


def test_a_native_name_keeps_madbenchs_rule_and_says_why_it_counted_none():
    r = grade(CLAUDE_READS, "session:tool-used", "Read", outcome="ok")
    assert r.status == "FAIL"  # madbench: `outcome: ok` fails on a good Read
    assert "invoked 0 times with outcome ok (2 attempted, 2 with no recorded outcome (Read ×2)" in r.reason


def test_tool_args_match_and_file_read_say_so_too():
    r = grade(CLAUDE_READS, "session:tool-args-match", "action:read", outcome="ok", args={"file_path": "suffix:a.js"})
    assert r.status == "ERROR" and "Read ×1" in r.reason
    native = grade(CLAUDE_READS, "session:tool-args-match", "Read", outcome="ok", args={"file_path": "suffix:a.js"})
    assert native.status == "FAIL" and "1 matching call(s) with no recorded outcome" in native.reason
    assert grade(CLAUDE_READS, "session:file-read", "a.js", outcome="ok", tools=["action:read"]).status == "ERROR"
    r = grade(CLAUDE_READS, "session:file-read", "a.js", outcome="ok")  # the default names Read natively: madbench's rule
    assert r.status == "FAIL" and "read once with no recorded outcome (Read ×1)" in r.reason
    assert grade(CODEX_READS, "session:file-read", "a.js", outcome="ok").status == "PASS"


def test_an_is_error_false_on_any_claude_result_is_a_known_ok():
    """madbench counts a result carrying is_error as known, whichever tool it answers."""
    from benchtape.adapters.claude_messages import outcome

    assert outcome({"is_error": False}, "Read", None) is False
    assert outcome({}, "Read", {"type": "text", "file": {}}) is None  # a good Read's payload says nothing: unknown
    assert outcome({"is_error": True}, "Read", "Error") is True


# codex 0.125: a long command, polled twice for its output, then sent a Ctrl-C
POLLED = _harness_session(
    "codex",
    ("exec_command", {"cmd": "npm test"}, False),
    ("write_stdin", {"session_id": 7, "chars": ""}, None),
    ("write_stdin", {"session_id": 7, "chars": ""}, None),
    ("write_stdin", {"session_id": 7, "chars": "\u0003"}, None),
    ("exec_command", {"cmd": "git status"}, False),
)


def test_a_poll_of_a_running_command_is_no_shell_action():
    used = grade(POLLED, "session:tool-used", ["action:shell", "action:poll"])
    assert used.evidence["counts"] == {"action:shell": 3, "action:poll": 2}  # two commands and the Ctrl-C sent to one
    assert grade(POLLED, "session:tool-used", "action:shell", eq=3).status == "PASS"
    # the same on Claude Code: a background Bash, its output polled, then killed
    claude = _harness_session("claude-code", ("Bash", {"command": "npm test", "run_in_background": True}, False), ("BashOutput", {"bash_id": "b"}, None), ("BashOutput", {"bash_id": "b"}, None), ("KillShell", {"shell_id": "b"}, None), ("Bash", {"command": "git status"}, False))
    assert grade(claude, "session:tool-used", ["action:shell", "action:poll"]).evidence["counts"] == {"action:shell": 3, "action:poll": 2}


def test_a_fence_that_allows_commands_allows_waiting_on_them():
    assert grade(POLLED, "session:tools-only", ["action:shell"]).status == "PASS"
    r = grade(POLLED, "session:tools-only", ["action:read"])
    assert r.status == "FAIL" and "exec_command is not allowed (call 1 of 5)" in r.reason


def test_file_read_with_no_work_dir_compares_a_relative_path_as_written():
    s = _harness_session(
        "codex",
        ("command_execution", {"command": "bash -lc 'cat ./test.js'"}, False),
        ("command_execution", {"command": "bash -lc 'cat a.js'"}, False),
        ("command_execution", {"command": "bash -lc 'cat a.js'"}, False),
        ("command_execution", {"command": "bash -lc 'cat /elsewhere/test2.js'"}, False),
        work_dir=None,
    )
    r = grade(s, "session:file-read", "test.js")
    assert r.status == "PASS" and r.evidence["expected_resolved"] == "test.js"
    assert grade(s, "session:file-read", "./test.js").status == "PASS"
    r = grade(s, "session:file-read", "test2.js")
    assert r.status == "FAIL"  # an absolute path is never guessed to be in the work dir
    assert "(3 other path(s) read; the session recorded no work dir, so 1 absolute path(s) were not compared" in r.reason  # distinct paths
    assert grade(s, "session:file-read", "suffix:/test2.js").status == "PASS"
    assert grade(s, "session:file-read", "b.js").reason.endswith("(3 other path(s) read; the session recorded no work dir, so 1 absolute path(s) were not compared with a relative one; write suffix:/<path> to match them)")


def test_real_codex_exec_capture_with_no_work_dir_grades_file_read():
    from realdatakit import REALDATA

    from benchtape.adapters.transcripts import read_transcript

    path = REALDATA / "codex-exec-json" / "agentcmd__stream-output-4__cli-0.46.0.jsonl" if REALDATA else None
    if path is None or not path.exists():
        pytest.skip("no real transcripts")
    session = project(read_transcript(path).actions)
    assert session.work_dir is None
    r = grade(session, "session:file-read", "test.js")
    assert r.status == "PASS" and r.evidence["matched"]["path"] == "test.js"


def test_real_codex_rollout_counts_commands_not_polls():
    """43 exec_command calls, 53 empty write_stdin polls and one Ctrl-C sent to a running command."""
    from realdatakit import REALDATA

    from benchtape.adapters.transcripts import read_transcript

    path = REALDATA / "codex-rollout" / "codemie__rollout-2026-05-11T11-26-55-019e1625__cli-0.125.0.jsonl" if REALDATA else None
    if path is None or not path.exists():
        pytest.skip("no real transcripts")
    used = grade(project(read_transcript(path).actions), "session:tool-used", ["action:shell", "action:poll"])
    assert used.evidence["counts"] == {"action:shell": 44, "action:poll": 53}
