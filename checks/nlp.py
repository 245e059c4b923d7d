"""NLP overlap metrics against a reference (`value`): BLEU, ROUGE-N, GLEU, in pure Python.

They measure surface n-gram overlap, not meaning: good for "did the answer keep the
expected wording", useless for "is it right". Text is lower-cased and split into words
and punctuation marks. `value` may be one reference or a list; the best reference wins.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Callable, Sequence

from benchtape.checks.common import args_of, as_text, output_of, score_threshold
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "NLP"
DEFAULT_THRESHOLD = 0.5
_WORD = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(toks: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


def _references(spec: CheckSpec) -> list[list[str]]:
    raw = spec.value if isinstance(spec.value, list) else [spec.value]
    if not raw or spec.value is None:
        raise CheckConfigError(f"{spec.type}: 'value' (the reference text, or a list of them) is required")
    refs = [tokens(as_text(r, type=spec.type)) for r in raw]
    if not any(refs):
        raise CheckConfigError(f"{spec.type}: the reference has no words")
    return refs


# ---------------------------------------------------------------- metrics


def bleu(cand: list[str], refs: list[list[str]], max_n: int = 4) -> tuple[float, dict[str, Any]]:
    """Sentence BLEU: clipped n-gram precisions up to min(4, candidate length), geometric
    mean, brevity penalty against the closest reference length. Orders above 1 with no
    match are smoothed (Chen & Cherry method 1, ε = 0.1) so one missing 4-gram does not
    zero an otherwise close answer; no unigram match at all scores 0."""
    if not cand:
        return 0.0, {"precisions": [], "brevity_penalty": 0.0, "candidate_len": 0, "reference_len": min(len(r) for r in refs)}
    top = min(max_n, len(cand))
    precisions: list[float] = []
    for n in range(1, top + 1):
        counts = ngrams(cand, n)
        ceiling: Counter[tuple[str, ...]] = Counter()
        for r in refs:
            ceiling |= ngrams(r, n)
        clipped = sum(min(c, ceiling[g]) for g, c in counts.items())
        total = sum(counts.values())
        precisions.append(clipped / total if clipped else (0.0 if n == 1 else 0.1 / total))
    ref_len = min((len(r) for r in refs), key=lambda k: (abs(k - len(cand)), k))
    bp = 1.0 if len(cand) > ref_len else math.exp(1 - ref_len / len(cand))
    score = 0.0 if precisions[0] == 0 else bp * math.exp(sum(math.log(p) for p in precisions) / top)
    return score, {"precisions": [round(p, 6) for p in precisions], "brevity_penalty": round(bp, 6), "candidate_len": len(cand), "reference_len": ref_len}


def rouge_n(cand: list[str], refs: list[list[str]], n: int) -> tuple[float, dict[str, Any]]:
    """ROUGE-N recall: the share of the reference's n-grams the output reproduces (the
    best reference). Precision and F1 are reported too, since recall alone rewards a
    long answer that says everything."""
    best: tuple[float, float, float] = (0.0, 0.0, 0.0)
    c = ngrams(cand, n)
    for r in refs:
        rc = ngrams(r, n)
        if not rc:
            continue
        overlap = sum(min(k, rc[g]) for g, k in c.items())
        recall = overlap / sum(rc.values())
        precision = overlap / sum(c.values()) if c else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        best = max(best, (recall, precision, f1))
    return best[0], {"recall": round(best[0], 6), "precision": round(best[1], 6), "f1": round(best[2], 6), "n": n}


def gleu(cand: list[str], refs: list[list[str]], max_n: int = 4) -> tuple[float, dict[str, Any]]:
    """Google-BLEU (Wu et al. 2016): over all 1..4-grams, min(precision, recall)."""
    best = (0.0, 0.0, 0.0)

    def grams(toks: list[str]) -> Counter[tuple[str, ...]]:
        out: Counter[tuple[str, ...]] = Counter()
        for n in range(1, max_n + 1):
            out.update(ngrams(toks, n))
        return out

    c = grams(cand)
    for r in refs:
        rc = grams(r)
        if not c or not rc:
            continue
        matches = sum(min(k, rc[g]) for g, k in c.items())
        p, rec = matches / sum(c.values()), matches / sum(rc.values())
        best = max(best, (min(p, rec), p, rec))
    return best[0], {"precision": round(best[1], 6), "recall": round(best[2], 6)}


# ---------------------------------------------------------------- checks


def _overlap_check(name: str, metric: Callable[[list[str], list[list[str]], CheckSpec], tuple[float, dict[str, Any]]], prepare: Callable[[CheckSpec, list[list[str]]], None] | None = None) -> Callable[[CheckSpec], Evaluator]:
    def build(spec: CheckSpec) -> Evaluator:
        refs = _references(spec)
        threshold = score_threshold(spec, DEFAULT_THRESHOLD)
        if prepare is not None:
            prepare(spec, refs)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            cand = tokens(output_of(session))
            score, detail = metric(cand, refs, spec)
            ok = score >= threshold
            ev = {name: round(score, 6), "threshold": threshold, **detail}
            return Result.of(ok, f"{name} {score:.3f} {'≥' if ok else '<'} {threshold:g}", ev, score=score)

        return evaluate

    return build


def _n_of(spec: CheckSpec) -> int:
    n = args_of(spec).get("n", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise CheckConfigError(f"{spec.type}: args.n must be a positive whole number, got {n!r}")
    return n


def _rouge_prepare(spec: CheckSpec, refs: list[list[str]]) -> None:
    n = _n_of(spec)
    if not any(len(r) >= n for r in refs):
        raise CheckConfigError(f"{spec.type}: the reference has fewer than n={n} words, so it has no {n}-grams")


_REF = {"value": "the reference text, or a list of references (required)", "threshold": f"score bar (default {DEFAULT_THRESHOLD})"}
_REF_ERRORS = ("'value' is required", "a reference with no words", "a threshold outside [0, 1]")

register("bleu", family=FAMILY, summary="BLEU (n-grams up to 4, brevity penalty) of the output against the reference", reads="final_output", args=_REF, example="type: bleu\nvalue: The function returns the sum of both numbers.\nthreshold: 0.4", errors=_REF_ERRORS)(
    _overlap_check("bleu", lambda c, r, s: bleu(c, r))
)
register(
    "rouge-n",
    family=FAMILY,
    summary="ROUGE-N recall: the share of the reference's n-grams found in the output",
    reads="final_output",
    args={**_REF, "args.n": "n-gram size, a positive whole number (default 1)"},
    example="type: rouge-n\nvalue: fixed the off-by-one error in the loop\nargs: {n: 2}",
    errors=_REF_ERRORS + ("args.n that is not a positive whole number", "a reference shorter than n words"),
)(_overlap_check("rouge_n", lambda c, r, s: rouge_n(c, r, _n_of(s)), _rouge_prepare))
register("gleu", family=FAMILY, summary="GLEU: min(precision, recall) over all 1- to 4-grams of output and reference", reads="final_output", args=_REF, example="type: gleu\nvalue: The build passes and all tests are green.", errors=_REF_ERRORS)(
    _overlap_check("gleu", lambda c, r, s: gleu(c, r))
)


def _shim_only(spec: CheckSpec) -> Evaluator:
    raise CheckConfigError(f"{spec.type} is not built in: use custom:exec with a promptfoo shim")


for _type, _what in (("meteor", "METEOR (needs WordNet synonyms)"), ("perplexity", "perplexity (needs the model's token log-probabilities)"), ("perplexity-score", "normalized perplexity (needs token log-probabilities)")):
    register(
        _type,
        family=FAMILY,
        summary=f"{_what}: refused at construction; use custom:exec with a promptfoo shim",
        reads="final_output",
        example=f"type: custom:exec\nargs: {{command: [node, promptfoo-shim.js, {_type}]}}",
        errors=("always: use custom:exec with a promptfoo shim",),
    )(_shim_only)
