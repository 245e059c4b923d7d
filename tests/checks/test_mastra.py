"""Mastra-style metrics on real mock sessions."""

from __future__ import annotations

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.mastra import dice, lcs_length, stem
from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog
from benchtape.core.model import Action, project

PROMPT = "Explain the cache eviction policy and the TTL settings."


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    steps = [
        {"tool": "Read", "input": {"file_path": "a.py"}},
        {"subagent": {"agent": "Explore", "prompt": "look", "steps": [{"tool": "Grep", "input": {"pattern": "x"}}]}},
        {"tool": "Edit", "input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}},
        {"tool": "Bash", "input": {"command": "true"}},
        {"say": "done"},
    ]
    return mock_session(tmp_path_factory.mktemp("worked"), steps, files={"a.py": "x = 1\n"})


# ---------------------------------------------------------------- completeness


def test_completeness_from_the_session_prompt(said):
    good = said("The cache evicts by an LRU eviction policy; TTL settings expire entries. Explained.", prompt=PROMPT)
    r = grade({"type": "completeness"}, good)
    assert r.passed and r.score == 1.0
    assert r.evidence == {"input_source": "session.prompt", "input_terms": 6, "covered": 6, "missing": [], "threshold": 0.7}
    bad = said("It is fast.", prompt=PROMPT)
    r = grade({"type": "completeness"}, bad)
    assert not r.passed and r.score == 0.0 and "cache" in r.evidence["missing"]


def test_completeness_input_order_value_args_vars(said):
    s = said("retries with backoff", prompt=PROMPT)
    assert grade({"type": "completeness", "value": "retry backoff"}, s).evidence["input_source"] == "value"
    assert grade({"type": "completeness", "args": {"input": "retry backoff"}}, s).passed
    r = grade({"type": "completeness"}, s, CheckContext(vars={"prompt": "backoff jitter"}))
    assert r.evidence["input_source"] == "vars.prompt" and r.score == pytest.approx(0.5) and not r.passed


def test_completeness_errors_without_content_words(said):
    r = grade({"type": "completeness", "value": "the and of"}, said("x"))
    assert r.status == "ERROR" and "no content words" in r.reason


# ---------------------------------------------------------------- keyword-coverage


def test_keyword_coverage(said):
    s = said("Retry with exponential backoff and jitter.")
    r = grade({"type": "keyword-coverage", "value": ["retry", "backoff", "jitter"]}, s)
    assert r.passed and r.evidence["found"] == ["retry", "backoff", "jitter"] and r.evidence["keywords_source"] == "value"
    r = grade({"type": "keyword-coverage", "value": ["retry", "circuit breaker"]}, s)
    assert not r.passed and r.score == pytest.approx(0.5) and r.evidence["missing"] == ["circuit breaker"]
    assert r.evidence["threshold"] == 1.0


def test_keyword_coverage_matches_whole_words(said):
    r = grade({"type": "keyword-coverage", "value": ["cat"]}, said("concatenate the strings"))
    assert not r.passed


def test_keyword_coverage_extracts_from_text(said):
    r = grade({"type": "keyword-coverage", "value": "Describe the cache policy"}, said("The cache policy is described as LRU."))
    assert r.evidence["keywords"] == 3 and r.evidence["missing"] == ["describe"] and not r.passed


# ---------------------------------------------------------------- tone


def test_tone_word(said):
    r = grade({"type": "tone", "value": "positive"}, said("Great news: the fix works and all tests pass."))
    assert r.passed and r.evidence["output_tone"] == "positive" and r.evidence["expected_tone"] == "positive"
    r = grade({"type": "tone", "args": {"referenceTone": "positive"}}, said("The build is broken and the tests fail."))
    assert not r.passed and r.evidence["output_tone"] == "negative" and r.evidence["reference_source"] == "args.referenceTone"


def test_tone_reference_text(said):
    r = grade({"type": "tone", "value": "Sorry, the deploy failed."}, said("Unfortunately the build failed."))
    assert r.passed and r.evidence["reference_sentiment"] < 0 and r.evidence["output_sentiment"] < 0


def test_tone_stability_without_reference(said):
    steady = grade({"type": "tone"}, said("The fix is in. Tests were run. The branch is pushed."))
    assert steady.passed and steady.score == 1.0 and steady.evidence["sentences"] == 3
    swing = grade({"type": "tone", "threshold": 0.95}, said("Terrible! Awful! Great."))
    assert not swing.passed and swing.evidence["variance"] > 0.05


# ---------------------------------------------------------------- content-similarity / textual-difference


def test_content_similarity(said):
    r = grade({"type": "content-similarity", "value": "The tests now pass."}, said("the   tests NOW pass."))
    assert r.passed and r.score == 1.0
    assert r.evidence == {"similarity": 1.0, "reference_source": "value", "ignore_case": True, "ignore_whitespace": True, "threshold": 0.7}
    r = grade({"type": "content-similarity", "value": "The tests now pass.", "args": {"ignoreCase": False}}, said("THE TESTS NOW PASS."))
    assert not r.passed and r.score < 0.2
    r = grade({"type": "content-similarity", "args": {"expected": "night"}}, said("nacht"))
    assert r.score == pytest.approx(0.25) and not r.passed


def test_dice_matches_string_similarity():
    assert dice("healed", "sealed") == pytest.approx(0.8)
    assert dice("", "") == 1.0 and dice("a", "b") == 0.0
    assert dice("a b c", "abc") == 1.0 and dice("a b c", "abc", drop_whitespace=False) < 1.0


def test_content_similarity_whitespace_flag(said):
    s = said("all   tests pass")
    assert grade({"type": "content-similarity", "value": "all tests pass"}, s).score == 1.0
    r = grade({"type": "content-similarity", "value": "all tests pass", "args": {"ignoreWhitespace": False}}, s)
    assert r.score < 1.0 and r.evidence["ignore_whitespace"] is False


def test_evidence_keys(said, worked):
    s = said("Great: retry with backoff works.")
    assert set(grade({"type": "keyword-coverage", "value": ["retry"]}, s).evidence) == {"keywords_source", "keywords", "found", "missing", "threshold"}
    assert set(grade({"type": "tone", "value": "positive"}, s).evidence) == {"output_sentiment", "output_tone", "reference_source", "expected_tone", "threshold"}
    assert set(grade({"type": "tone"}, s).evidence) == {"output_sentiment", "output_tone", "reference_source", "sentences", "variance", "threshold"}
    assert set(grade({"type": "code-tool-call-accuracy", "args": {"expectedTool": "Read"}}, worked).evidence) == {"tools_called", "calls", "strict", "expected_tool", "threshold"}


def test_textual_difference(said):
    r = grade({"type": "textual-difference", "value": "ok: 3 passed"}, said("ok: 3 passed"))
    assert r.passed and r.score == 1.0 and r.evidence["lcs_length"] == 12
    r = grade({"type": "textual-difference", "args": {"reference": "ok: 3 passed"}}, said("FAILED: 2 errors"))
    assert not r.passed and set(r.evidence) == {"ratio", "lcs_length", "length_difference", "reference_source", "threshold"}
    assert r.evidence["length_difference"] == 4


def test_textual_difference_on_a_long_near_copy(said):
    ref = "lorem ipsum dolor sit amet " * 20  # 540 characters: difflib's autojunk said 0.035 here
    r = grade({"type": "textual-difference", "value": ref}, said(ref.replace("sit", "sat")))
    assert r.passed and r.score == pytest.approx(1 - 40 / 1080)


def test_lcs_length_agrees_with_the_textbook_table():
    import random

    def dp(a, b):
        prev = [0] * (len(b) + 1)
        for ca in a:
            cur = [0]
            for j, cb in enumerate(b, 1):
                cur.append(prev[j - 1] + 1 if ca == cb else max(prev[j], cur[j - 1]))
            prev = cur
        return prev[-1]

    rng = random.Random(5)
    for _ in range(1500):
        a = "".join(rng.choice("abcé") for _ in range(rng.randint(0, 15)))
        b = "".join(rng.choice("abcé") for _ in range(rng.randint(0, 70)))
        assert lcs_length(a, b) == dp(a, b), (a, b)


def test_reference_from_vars(said):
    r = grade({"type": "textual-difference"}, said("abc"), CheckContext(vars={"expected": "abc"}))
    assert r.passed and r.evidence["reference_source"] == "vars.expected"
    r = grade({"type": "content-similarity"}, said("abc"))
    assert r.status == "ERROR" and "no reference" in r.reason


# ---------------------------------------------------------------- code-tool-call-accuracy


def test_tool_call_accuracy_expected_tool(worked):
    assert [c.tool for c in worked.calls] == ["Read", "Grep", "Edit", "Bash"]
    r = grade({"type": "code-tool-call-accuracy", "args": {"expectedTool": "Edit"}}, worked)
    assert r.passed and r.evidence["tools_called"] == ["Read", "Grep", "Edit", "Bash"] and r.evidence["expected_tool"] == "Edit"
    assert not grade({"type": "code-tool-call-accuracy", "args": {"expectedTool": "Write"}}, worked).passed
    r = grade({"type": "code-tool-call-accuracy", "args": {"expectedTool": "Edit", "strictMode": True}}, worked)
    assert not r.passed and "other tools" in r.reason


def test_tool_call_accuracy_reads_the_calls_that_session_checks_read():
    """Calls never hold a spawn or a skill: where an adapter recorded a Task tool.call beside
    its subagent.spawned row, tool-sequence left it out and this check counted it."""
    actions = [
        Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {}}),
        Action("tool.call", {"call_id": "t1", "tool": "Task", "input": {}}),
        Action("subagent.spawned", {"thread": "t1", "call_id": "t1", "agent": "Explore", "tool": "Task"}),
        Action("tool.call", {"call_id": "c2", "tool": "Edit", "input": {}}),
    ]
    s = project(a.stamped(seq=i + 1, at=1.0) for i, a in enumerate(actions))
    r = grade({"type": "code-tool-call-accuracy", "args": {"expectedToolOrder": ["Read", "Edit"], "strictMode": True}}, s)
    assert r.passed and r.evidence["tools_called"] == ["Read", "Edit"], r.reason
    assert grade({"type": "session:tool-sequence", "value": ["Read", "Edit"]}, s).evidence["observed"] == ["Read", "Edit"]


def test_tool_call_accuracy_order(worked):
    assert grade({"type": "code-tool-call-accuracy", "args": {"expectedToolOrder": ["Read", "Edit"]}}, worked).passed
    assert not grade({"type": "code-tool-call-accuracy", "args": {"expectedToolOrder": ["Edit", "Read"]}}, worked).passed
    assert not grade({"type": "code-tool-call-accuracy", "args": {"expectedToolOrder": ["Read", "Edit"], "strictMode": True}}, worked).passed
    r = grade({"type": "code-tool-call-accuracy", "args": {"expectedToolOrder": "Read, Grep, Edit, Bash", "strictMode": True}}, worked)
    assert r.passed and r.evidence["expected_order"] == ["Read", "Grep", "Edit", "Bash"] and r.evidence["strict"] is True


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "completeness", "threshold": 1.5}, "completeness: 'threshold' is a score bar in [0, 1]"),
        ({"type": "completeness", "value": {"a": 1}}, "completeness: 'value' must be a string"),
        ({"type": "keyword-coverage", "value": []}, "keyword-coverage: 'value' names nothing to look for"),
        ({"type": "tone", "args": {"referenceTone": ["x"]}}, "tone: 'args.referenceTone' must be a string"),
        ({"type": "content-similarity", "value": "x", "args": {"ignoreCase": "yes"}}, "content-similarity: 'args.ignoreCase' must be true or false"),
        ({"type": "textual-difference", "args": {"expected": {"a": 1}}}, "textual-difference: 'args.expected' must be a string"),
        # a list `value` is keyword-coverage's alone; elsewhere it was an ERROR on every session
        ({"type": "completeness", "value": ["cache", "ttl"]}, "completeness: 'value' must be a string, got a list"),
        ({"type": "tone", "value": ["positive"]}, "tone: 'value' must be a string, got a list"),
        ({"type": "content-similarity", "value": ["a", "b"]}, "content-similarity: 'value' must be a string, got a list"),
        ({"type": "textual-difference", "value": ["a"]}, "textual-difference: 'value' must be a string, got a list"),
        ({"type": "code-tool-call-accuracy"}, "code-tool-call-accuracy: give exactly one of args.expectedTool or args.expectedToolOrder"),
        ({"type": "code-tool-call-accuracy", "args": {"expectedTool": "A", "expectedToolOrder": ["A"]}}, "give exactly one of"),
        ({"type": "code-tool-call-accuracy", "args": {"expectedTool": "A", "strictMode": 1}}, "'args.strictMode' must be true or false"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


def test_defaults_and_family():
    assert {t for t, i in catalog().items() if i.family == "Mastra"} == {
        "completeness", "keyword-coverage", "tone", "content-similarity", "textual-difference", "code-tool-call-accuracy"
    }
    assert stem("fixing") == stem("fixed") == stem("fixes") == "fix"
