"""Properties every deterministic check holds on any session: the score is in [0, 1], the
status is one of the four, and grading twice (or with a freshly built check) agrees.

Sessions here are folds (`project`) of mock-agent-shaped actions with random final
outputs, tool calls, outcomes and metrics: the shapes the mock agent emits, drawn far
more widely than a handful of scripted runs could.
"""

from __future__ import annotations

import pytest
from gradekit import spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchtape.checks.registry import CheckContext, build, catalog
from benchtape.core.model import Action, project
from benchtape.core.results import STATUSES, CheckSpec

# Outputs that exercise the structured parsers, mixed with arbitrary text.
SHAPED = [
    "",
    "   ",
    '{"status": "ok", "n": [1, 2]}',
    '[{"type": "function", "function": {"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}}]',
    '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
    "<div><ul><li>a</li></ul></div>",
    '<?xml version="1.0"?><root a="1"/>',
    "SELECT a, COUNT(*) FROM t WHERE x IN (1, 2) GROUP BY a;",
    "I'm sorry, but I can't help with that.",
    "All tests pass. PASS fizz buzz 42",
    "```sql\nselect 1\n```",
    "((((((((((",
    "{[{[{[{[",
]
TOOLS = ["Read", "Edit", "Write", "Bash", "Grep", "Glob", "mcp__srv__q", "Task"]

outputs = st.one_of(st.sampled_from(SHAPED), st.text(max_size=300), st.builds(lambda a, b: a + b, st.sampled_from(SHAPED), st.text(max_size=60)))
metrics = st.fixed_dictionaries(
    {},
    optional={
        "cost_usd": st.floats(0, 50, allow_nan=False),
        "duration_ms": st.floats(0, 1e7, allow_nan=False),
        "tokens_in": st.integers(0, 10**6),
        "tokens_out": st.integers(0, 10**6),
    },
)


@st.composite
def sessions(draw):
    prompt = draw(st.one_of(st.just("fix it"), st.text(max_size=80)))
    actions = [Action("session.started", {"scenario": "prop", "harness": "mock", "prompt": prompt, "work_dir": "/nonexistent/ws"}), Action("message.user", {"text": prompt})]
    for i, tool in enumerate(draw(st.lists(st.sampled_from(TOOLS), max_size=8))):
        cid = f"call_{i:04d}"
        actions.append(Action("tool.call", {"call_id": cid, "tool": tool, "input": {"file_path": draw(st.sampled_from(["a.txt", "src/b.py", "/etc/x"]))}}))
        if draw(st.booleans()):
            actions.append(Action("tool.result", {"call_id": cid, "output": draw(st.text(max_size=20)), "is_error": draw(st.one_of(st.none(), st.booleans()))}))
    if draw(st.booleans()):
        actions.append(Action("skill.invoked", {"name": "demo", "call_id": "skill_1", "tool": "Skill"}))
    text = draw(st.one_of(st.none(), outputs))
    if text is not None:
        actions.append(Action("message.assistant", {"text": text}))
        if draw(st.booleans()):
            actions.append(Action("final_output", {"text": text}))
    m = draw(metrics)
    if m:
        actions.append(Action("metrics", m))
    if draw(st.booleans()):
        actions.append(Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": draw(st.floats(0, 1e6, allow_nan=False))}))
    return project(a.stamped(seq=i + 1, at=1.0) for i, a in enumerate(actions))


def _deterministic_specs() -> list[tuple[str, CheckSpec]]:
    """Every registered type's documented example, except graders that run programs
    (their determinism is the grader's, not ours) and types whose example is another type."""
    out = []
    for t, info in sorted(catalog().items()):
        if info.kind in ("Code", "Service", "AI"):
            continue
        s = spec(info.example)
        if s.type == t:
            out.append((t, s))
    return out


EXTRA = [
    {"type": "any-of", "checks": [{"type": "not-any-of", "checks": [{"type": "is-refusal"}, {"type": "latency", "threshold": 5000}]}, {"type": "cost", "threshold": 1}]},
    {"type": "assert-set", "threshold": 0.5, "checks": [{"type": "is-json", "value": {"type": "object"}}, {"type": "levenshtein", "value": "PASS", "threshold": 3, "weight": 2}]},
    {"type": "select-best", "args": {"weights": {"bleu": 2}}, "checks": [{"type": "bleu", "value": "all tests pass"}, {"type": "tone"}]},
    {"type": "contains-any", "value": "PASS, fizz, ("},
    {"type": "regex", "value": r"(\d+)\s+tests?"},
    {"type": "contains-html", "value": {"rootTag": "div", "attrHas": "a"}},
    {"type": "rouge-n", "value": ["a b c", "all tests pass"], "args": {"n": 2}},
    {"type": "completeness"},
    {"type": "keyword-coverage"},
]
SPECS = _deterministic_specs() + [(f"extra-{i}-{d['type']}", spec(d)) for i, d in enumerate(EXTRA)]


def test_the_property_covers_every_deterministic_family():
    families = {catalog()[s.type].family for _, s in SPECS}
    assert {"String", "Structured", "Numeric", "NLP", "Mastra", "Composite"} <= families
    assert len(SPECS) >= 60


@pytest.mark.parametrize("name,check_spec", SPECS, ids=[n for n, _ in SPECS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(session=sessions(), control=st.booleans())
def test_score_in_range_and_grading_reproduces(name, check_spec, session, control):
    ctx = CheckContext(control=control)
    check = build(check_spec)
    first = check.evaluate(session, ctx)
    assert 0.0 <= first.score <= 1.0
    assert first.status in STATUSES
    assert first.status != "PASS" or first.passed
    assert check.evaluate(session, ctx).to_dict() == first.to_dict()
    assert build(check_spec).evaluate(session, ctx).to_dict() == first.to_dict()
    if first.status == "NA":
        assert control  # not applicable only ever under the negative control
