"""latency, cost, levenshtein, is-refusal on real mock sessions."""

from __future__ import annotations

import random

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.numeric import levenshtein, refusal_phrase
from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog
from benchtape.core.model import Action, project

CONTROL = CheckContext(control=True)


@pytest.fixture(scope="module")
def metered(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("metered"), [{"say": "ok"}], metrics={"cost_usd": 0.02, "duration_ms": 1500})


@pytest.fixture(scope="module")
def unmetered(tmp_path_factory):
    """No metrics reported by the harness; benchtape's wall clock still measured the run."""
    s = mock_session(tmp_path_factory.mktemp("unmetered"), [{"say": "ok"}])
    assert s.metrics.cost_usd is None and s.metrics.duration_ms is None and s.metrics.wall_ms is not None
    return s


@pytest.fixture(scope="module")
def killed(unmetered):
    """The same run cut off before `session.finished`: no duration of any kind is known."""
    s = project(a for a in unmetered.actions if a.kind != "session.finished")
    assert s.metrics.latency_ms is None
    return s


# ---------------------------------------------------------------- latency / cost


def test_latency_pass_and_fail(metered):
    r = grade({"type": "latency", "threshold": 2000}, metered)
    assert r.passed and r.score == pytest.approx(0.25)
    assert r.evidence == {"raw_latency_ms": 1500, "threshold_ms": 2000.0, "source": "harness"}
    r = grade({"type": "latency", "threshold": 1000}, metered)
    assert not r.passed and r.score == 0.0 and r.evidence["raw_latency_ms"] == 1500


def test_latency_value_fallback_and_wall_clock(unmetered):
    r = grade({"type": "latency", "value": 600000}, unmetered)
    assert r.passed and r.evidence["source"] == "wall_clock"
    assert r.evidence["raw_latency_ms"] == unmetered.metrics.wall_ms


def test_cost_of_a_scripted_model_is_nothing_as_every_other_figure_says(unmetered):
    """The real Claude Code prices a scripted model's pretend tokens (0.0114 USD); `sessions` and
    `compare` say $0 for a scripted session (spec/pricing.reported_cost), and so does the check:
    it read the printed figure, and ERRORed for Codex and Gemini CLI, which print none."""
    def scripted(cost):
        started = next(a for a in unmetered.actions if a.kind == "session.started")
        actions = [Action("session.started", {**started.data, "model": "scripted"}), *[a for a in unmetered.actions if a.kind != "session.started"]]
        return project([*actions, Action("metrics", {"cost_usd": cost})] if cost is not None else actions)

    printed, silent = scripted(0.0114), scripted(None)
    assert printed.model == "scripted" and printed.metrics.cost_usd == 0.0114
    for session in (printed, silent):
        r = grade({"type": "cost", "threshold": 0.01}, session)
        assert (r.status, r.score, r.evidence["raw_cost_usd"]) == ("PASS", 1.0, 0.0), r


def test_cost_pass_and_fail(metered):
    r = grade({"type": "cost", "threshold": 0.08}, metered)
    assert r.passed and r.score == pytest.approx(0.75)
    assert r.evidence == {"raw_cost_usd": 0.02, "threshold_usd": 0.08, "source": "harness"}
    r = grade({"type": "cost", "value": "0.01"}, metered)
    assert not r.passed and r.score == 0.0


def test_unreported_metric_is_an_error_not_zero(unmetered, killed):
    r = grade({"type": "cost", "threshold": 1}, unmetered)
    assert r.status == "ERROR" and "reported no cost" in r.reason and "never zero" in r.reason
    r = grade({"type": "latency", "threshold": 1000}, killed)
    assert r.status == "ERROR" and "reported no latency" in r.reason


@pytest.mark.parametrize("raw", ["0.5", True, float("nan"), float("inf"), [1]])
def test_a_metric_that_is_not_a_number_is_an_error_naming_it(unmetered, raw):
    """An imported or hand-written log can carry a metric of the wrong type; the verdict says
    so rather than raising a TypeError (or reading `true` as 1 USD, NaN as a plain FAIL)."""
    broken = project([*unmetered.actions, Action("metrics", {"cost_usd": raw, "duration_ms": raw})])
    for t, field in (("cost", "cost_usd"), ("latency", "duration_ms")):
        r = grade({"type": t, "threshold": 1}, broken)
        assert r.status == "ERROR", (t, raw, r.reason)
        assert f"{field} is {raw!r}, not a number" in r.reason


def test_not_applicable_under_the_negative_control(metered, unmetered):
    for s in (metered, unmetered):
        for t in ("latency", "cost"):
            r = grade({"type": t, "threshold": 1}, s, CONTROL)
            assert r.status == "NA" and "negative control" in r.reason
    assert catalog()["latency"].control_na and catalog()["cost"].control_na
    assert not catalog()["levenshtein"].control_na


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "latency"}, "latency: 'threshold' (ms) is required"),
        ({"type": "cost", "threshold": 0}, "cost: 'threshold' must be more than 0 USD"),
        ({"type": "latency", "threshold": -5}, "latency: 'threshold' must be more than 0 ms"),
        ({"type": "cost", "value": "cheap"}, "cost: 'threshold' must be a number of USD, got 'cheap'"),
        ({"type": "latency", "threshold": True}, "latency: 'threshold' must be a number"),
        ({"type": "levenshtein"}, "levenshtein: 'value' is required"),
        ({"type": "levenshtein", "value": "x", "threshold": -1}, "levenshtein: 'threshold' is a number of edits"),
        ({"type": "levenshtein", "value": ["x"]}, "levenshtein: 'value' must be a string"),
        ({"type": "is-refusal", "value": "I can't"}, "is-refusal: takes no 'value'"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


# ---------------------------------------------------------------- levenshtein


def test_levenshtein_pass_and_fail(said):
    r = grade({"type": "levenshtein", "value": "Hello, world!", "threshold": 4}, said("Hello world"))
    assert r.passed and r.score == pytest.approx(0.5)
    assert r.evidence == {"raw_distance": 2, "threshold": 4.0, "output_chars": 11, "reference_chars": 13}
    r = grade({"type": "levenshtein", "value": "kitten"}, said("a completely different answer"))
    assert not r.passed and r.score == 0.0 and r.evidence["threshold"] == 10.0 and r.evidence["raw_distance"] > 10


def test_levenshtein_zero_threshold_means_exact(said):
    assert grade({"type": "levenshtein", "value": "abc", "threshold": 0}, said("abc")).score == 1.0
    r = grade({"type": "levenshtein", "value": "abc", "threshold": 0}, said("abd"))
    assert not r.passed and r.score == 0.0


def _dp(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def test_bit_parallel_distance_agrees_with_the_textbook_table():
    rng = random.Random(7)
    for _ in range(2000):
        a = "".join(rng.choice("abcé") for _ in range(rng.randint(0, 15)))
        b = "".join(rng.choice("abcé") for _ in range(rng.randint(0, 80)))
        assert levenshtein(a, b) == _dp(a, b), (a, b)


# ---------------------------------------------------------------- is-refusal


@pytest.mark.parametrize(
    "text,refuses",
    [
        ("I'm sorry, but I can't help with that.", True),
        ("I can\u2019t do that.", True),
        ("As an AI language model, I cannot browse.", True),
        ("Well — I must decline this request.", True),
        ("", True),
        ("   \n\t ", True),
        ("Fixed the bug; all 12 tests pass.", False),
        ("The API cannot return null here, so I added a guard.", False),
    ],
)
def test_is_refusal(said, text, refuses):
    r = grade({"type": "is-refusal"}, said(text))
    assert r.passed is refuses, r.reason
    assert set(r.evidence) == {"refusal", "empty", "matched", "output_chars"}
    assert r.evidence["empty"] is (text.strip() == "")


def test_refusal_phrase_reports_what_matched():
    assert refusal_phrase("I am unable to comply") == "i am unable"
    assert refusal_phrase("") == ""
    assert refusal_phrase("Sure! Here it is.") is None


@pytest.mark.parametrize(("threshold", "ms"), [("2s", 2000.0), ("1500ms", 1500.0), ("0.5m", 30000.0), ("1m30s", 90000.0), ("2000", 2000.0), (2000, 2000.0)])
def test_latency_threshold_takes_a_duration_with_a_unit(metered, threshold, ms):
    r = grade({"type": "latency", "threshold": threshold}, metered)
    assert r.evidence["threshold_ms"] == ms and r.passed == (1500 <= ms)


@pytest.mark.parametrize("threshold", ["fast", "2 parsecs", "-1s"])
def test_a_latency_threshold_that_is_no_duration_is_refused(threshold):
    with pytest.raises(CheckConfigError, match="latency"):
        build(spec({"type": "latency", "threshold": threshold}))


def test_a_latency_threshold_with_a_unit_loads_from_a_bench_and_grades(tmp_path, metered):
    """`threshold: 30s`, as the README, `checks latency` and docs/checks.md write it, was refused
    by the bench loader ("must be a finite number"); another check's string threshold is still
    refused, by the check."""
    from benchtape.spec.bench import load_bench

    bench = tmp_path / "bench.yaml"
    bench.write_text("harness: mock\nscenarios:\n  - name: a\n    prompt: p\n    checks:\n      - {type: latency, threshold: 30s}\n      - {type: levenshtein, value: x, threshold: 30s}\n")
    latency, lev = load_bench(bench).scenarios[0].checks
    assert latency.threshold == "30s"
    r = grade({"type": "latency", "threshold": "30s"}, metered)
    assert r.passed and r.evidence["threshold_ms"] == 30000.0
    with pytest.raises(CheckConfigError, match="'threshold' must be a number, got '30s'"):
        build(lev)
    with pytest.raises(CheckConfigError, match="is not a duration"):
        build(spec({"type": "latency", "threshold": "lots"}))
