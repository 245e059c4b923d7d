"""bleu, rouge-n, gleu on real mock sessions; meteor and the perplexities refused."""

from __future__ import annotations

import math

import pytest
from gradekit import grade, spec

from benchtape.checks.nlp import bleu, gleu, rouge_n, tokens
from benchtape.checks.registry import CheckConfigError, build, catalog

REF = "The function returns the sum of both numbers."


@pytest.mark.parametrize("type", ["bleu", "rouge-n", "gleu"])
def test_identical_passes_unrelated_fails(said, type):
    r = grade({"type": type, "value": REF}, said(REF))
    assert r.passed and r.score == pytest.approx(1.0)
    r = grade({"type": type, "value": REF}, said("Completely unrelated words appear here."))
    assert not r.passed and r.score < 0.5
    assert r.evidence["threshold"] == 0.5


def test_bleu_is_near_for_a_near_answer(said):
    r = grade({"type": "bleu", "value": REF}, said("The function returns the sum of the two numbers."))
    assert 0.4 < r.score < 1.0
    assert set(r.evidence) == {"bleu", "threshold", "precisions", "brevity_penalty", "candidate_len", "reference_len"}
    assert len(r.evidence["precisions"]) == 4 and r.evidence["brevity_penalty"] == 1.0


def test_bleu_brevity_penalty():
    score, detail = bleu(tokens("the function"), [tokens(REF)])
    assert detail["precisions"] == [1.0, 1.0]
    assert score == pytest.approx(math.exp(1 - 9 / 2))  # the reference has 9 tokens, "." included


def test_bleu_best_of_several_references(said):
    r = grade({"type": "bleu", "value": ["something else entirely", "all tests pass now"]}, said("all tests pass now"))
    assert r.score == pytest.approx(1.0)


def test_rouge_n_recall_and_n(said):
    s = said("it returns the sum")
    r = grade({"type": "rouge-n", "value": REF}, s)
    # the reference's 9 tokens ("." included); the output reproduces returns, the, sum
    assert r.score == pytest.approx(3 / 9)
    assert r.evidence["n"] == 1 and r.evidence["precision"] == pytest.approx(3 / 4)
    r2 = grade({"type": "rouge-n", "value": REF, "args": {"n": 2}}, s)
    assert r2.evidence["n"] == 2 and r2.score == pytest.approx(2 / 8)  # "returns the", "the sum"
    assert set(r2.evidence) == {"rouge_n", "threshold", "recall", "precision", "f1", "n"}


def test_gleu_evidence(said):
    r = grade({"type": "gleu", "value": REF}, said("The function returns the sum."))
    assert set(r.evidence) == {"gleu", "threshold", "precision", "recall"}
    assert r.score == pytest.approx(min(r.evidence["precision"], r.evidence["recall"]), abs=1e-6)


def test_gleu_is_min_of_precision_and_recall():
    score, detail = gleu(tokens("a b c"), [tokens("a b c d e f")])
    # cand 1..4-grams: 3+2+1 = 6, all matched; ref has 6+5+4+3 = 18
    assert detail == {"precision": 1.0, "recall": round(6 / 18, 6)} and score == pytest.approx(6 / 18)


def test_threshold_is_the_bar(said):
    s = said("The function returns the sum.")
    low = grade({"type": "rouge-n", "value": REF, "threshold": 0.1}, s)
    high = grade({"type": "rouge-n", "value": REF, "threshold": 0.9}, s)
    assert low.passed and not high.passed and low.score == high.score


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "bleu"}, "bleu: 'value' (the reference text, or a list of them) is required"),
        ({"type": "gleu", "value": "   "}, "gleu: the reference has no words"),
        ({"type": "rouge-n", "value": "a b", "args": {"n": 0}}, "rouge-n: args.n must be a positive whole number, got 0"),
        ({"type": "rouge-n", "value": "a b", "args": {"n": "2"}}, "rouge-n: args.n must be a positive whole number"),
        ({"type": "rouge-n", "value": "a b", "args": {"n": 3}}, "rouge-n: the reference has fewer than n=3 words"),
        ({"type": "bleu", "value": REF, "threshold": 2}, "bleu: 'threshold' is a score bar in [0, 1]"),
        ({"type": "meteor", "value": REF}, "meteor is not built in: use custom:exec with a promptfoo shim"),
        ({"type": "perplexity"}, "perplexity is not built in: use custom:exec with a promptfoo shim"),
        ({"type": "perplexity-score"}, "perplexity-score is not built in: use custom:exec with a promptfoo shim"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


def test_the_refused_three_are_registered():
    nlp = {t for t, i in catalog().items() if i.family == "NLP"}
    assert nlp == {"bleu", "rouge-n", "gleu", "meteor", "perplexity", "perplexity-score"}


def test_rouge_n_function_directly():
    score, detail = rouge_n(tokens("a b"), [tokens("a b a b")], 1)
    assert score == pytest.approx(0.5) and detail["precision"] == 1.0
