"""Mastra-style heuristic metrics: completeness, keyword coverage, tone, similarity,
textual difference, and tool-call accuracy (deterministic, no model).

They approximate @mastra/evals' code scorers with small pure-Python parts (a stop-word
list, a suffix stemmer, a sentiment lexicon) so a verdict reproduces byte for byte on
re-grading. Continuous scorers default to a 0.7 bar, exact ones to 1.0. The text to
compare against comes from `value`, else the type's `args.*` key, else `ctx.vars`,
else (for the prompt-based ones) the session's own prompt.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from benchtape.checks.common import args_of, as_bool, as_list, as_text, output_of, score_threshold, short, tool_calls
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.core.canonical import is_canonical, matches, spelling_problem
from benchtape.core.edit_distance import char_masks
from benchtape.core.model import Call, Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "Mastra"
CONTINUOUS = 0.7
EXACT = 1.0

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves please also make sure let lets us""".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def stem(word: str) -> str:
    """A light suffix stripper: enough that "fixing", "fixed" and "fixes" meet at "fix",
    "pass", "passes", "passed" at "pass", and "cache", "caches", "cached" at "cach"."""
    return _drop_e(_strip_suffix(word))


def _strip_suffix(word: str) -> str:
    if word.endswith("ss"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses") or (word.endswith("es") and word[:-2].endswith(("x", "z", "ch", "sh"))):
        return word[:-2]
    for suffix in ("ations", "ation", "ings", "ing", "edly", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]  # stopped -> stop
            return base
    return word


def _drop_e(word: str) -> str:
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_terms(text: str) -> dict[str, str]:
    """Distinct content words (and numbers) by stem, each with the word first seen for it."""
    seen: dict[str, str] = {}
    for w in words(text):
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            seen.setdefault(stem(w), w)
    return seen


def _source(spec: CheckSpec, ctx: CheckContext, session: Session, arg_keys: Iterable[str], var_keys: Iterable[str], use_prompt: bool) -> tuple[str | None, str]:
    """The comparison text and where it came from: value | args.* | vars | the prompt."""
    if spec.value is not None:
        return as_text(spec.value, type=spec.type), "value"
    args = args_of(spec)
    for k in arg_keys:
        if args.get(k) is not None:
            return as_text(args[k], type=spec.type, name=f"args.{k}"), f"args.{k}"
    for k in var_keys:
        if ctx.vars.get(k) is not None:
            return str(ctx.vars[k]), f"vars.{k}"
    if use_prompt and session.prompt:
        return session.prompt, "session.prompt"
    return None, ""


def _validate_source(spec: CheckSpec, arg_keys: Iterable[str], *, list_value: bool = False) -> None:
    """Refuse now what can be refused now: a value or arg of the wrong shape (a list
    `value` only where the type reads one: keyword-coverage's keywords)."""
    if spec.value is not None and not (list_value and isinstance(spec.value, list)):
        as_text(spec.value, type=spec.type)
    args = args_of(spec)
    for k in arg_keys:
        if args.get(k) is not None:
            as_text(args[k], type=spec.type, name=f"args.{k}")


def _graded(spec: CheckSpec, score: float, threshold: float, what: str, ev: dict[str, Any]) -> Result:
    ok = score >= threshold
    ev = {**ev, "threshold": threshold}
    return Result.of(ok, f"{what} {score:.3f} {'≥' if ok else '<'} {threshold:g}", ev, score=score)


# ---------------------------------------------------------------- completeness


@register(
    "completeness",
    family=FAMILY,
    summary="share of the input's content words (stemmed, stop words dropped, numbers kept) that the output also uses",
    reads="final_output, session.prompt",
    args={"value": "the input to cover (default: args.input, then vars.prompt, then the session's prompt)", "args.input": "the input, when `value` is not used", "threshold": f"score bar (default {CONTINUOUS})"},
    example="type: completeness\nvalue: Explain the cache, the eviction policy and the TTL.",
    errors=("an input that is not a string", "ERROR when there is no input, or it has no content words"),
)
def completeness(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, CONTINUOUS)
    _validate_source(spec, ["input"])

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        text, source = _source(spec, ctx, session, ["input"], ["prompt", "input"], True)
        if text is None:
            return Result.error(f"{spec.type}: no input to compare with: set 'value' or args.input, or run with a prompt")
        wanted = content_terms(text)
        if not wanted:
            return Result.error(f"{spec.type}: the input ({source}) has no content words to look for")
        have = content_terms(output_of(session))
        covered = [w for t, w in wanted.items() if t in have]
        missing = [w for t, w in wanted.items() if t not in have]
        score = len(covered) / len(wanted)
        return _graded(spec, score, threshold, "completeness", {"input_source": source, "input_terms": len(wanted), "covered": len(covered), "missing": missing[:20]})

    return evaluate


# ---------------------------------------------------------------- keyword-coverage


@register(
    "keyword-coverage",
    family=FAMILY,
    summary="share of the keywords found in the output (case-insensitive, whole words): a list in `value`, or the input's non-stop words",
    reads="final_output, session.prompt",
    args={"value": "a list of keywords, or a text whose keywords to extract (default: args.input, vars.prompt, the session's prompt)", "args.input": "the text to extract keywords from", "threshold": f"score bar (default {EXACT})"},
    example="type: keyword-coverage\nvalue: [retry, backoff, jitter]",
    errors=("an empty keyword list", "ERROR when there is no input, or it has no keywords"),
)
def keyword_coverage(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, EXACT)
    fixed = as_list(spec.value, type=spec.type) if isinstance(spec.value, list) else None
    _validate_source(spec, ["input"], list_value=True)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        if fixed is not None:
            keywords, source = [k.lower() for k in fixed], "value"
        else:
            text, source = _source(spec, ctx, session, ["input"], ["prompt", "input"], True)
            if text is None:
                return Result.error(f"{spec.type}: no keywords: set 'value' (a list or a text) or args.input, or run with a prompt")
            keywords = list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS and len(w) > 2))
            if not keywords:
                return Result.error(f"{spec.type}: the input ({source}) has no keywords")
        out = output_of(session).lower()
        found = [k for k in keywords if re.search(r"(?<!\w)" + re.escape(k) + r"(?!\w)", out)]
        missing = [k for k in keywords if k not in found]
        score = len(found) / len(keywords)
        return _graded(spec, score, threshold, "keyword coverage", {"keywords_source": source, "keywords": len(keywords), "found": found[:20], "missing": missing[:20]})

    return evaluate


# ---------------------------------------------------------------- tone

# A small AFINN-style lexicon (-3..3). Tone is the mean over all words ("comparative").
_SENTIMENT = {
    **dict.fromkeys("good great nice glad happy pleased success successful successfully works working fixed solved resolved clean correct helpful thanks thank welcome easy improved improve better best love excellent perfect awesome wonderful fantastic".split(), 2),
    **dict.fromkeys("ok okay fine sure yes done ready passes passing pass stable safe clear hope hopefully like appreciate".split(), 1),
    **dict.fromkeys("bad wrong error errors fail fails failed failing failure broken bug bugs crash crashes problem problems issue issues hard difficult worse unfortunately sorry".split(), -2),
    **dict.fromkeys("no not cannot can't won't never missing unable slow confusing unclear warning warnings risk".split(), -1),
    **dict.fromkeys("terrible awful horrible hate disaster catastrophic stupid useless worst".split(), -3),
}
_TONES = {"positive": 1, "negative": -1, "neutral": 0}
_NEUTRAL_BAND = 0.05


def sentiment(text: str) -> float:
    ws = words(text)
    return sum(_SENTIMENT.get(w, 0) for w in ws) / len(ws) if ws else 0.0


def _tone_class(c: float) -> str:
    return "positive" if c > _NEUTRAL_BAND else "negative" if c < -_NEUTRAL_BAND else "neutral"


@register(
    "tone",
    family=FAMILY,
    summary="tone consistency: with a reference text, 1 − |sentiment difference|; with a tone word (positive/negative/neutral), 1 when the output's tone is that; with neither, 1 − the variance of sentiment across the output's sentences",
    reads="final_output",
    args={"value": "a reference text or a tone word (default: args.referenceTone; none = internal consistency)", "args.referenceTone": "same as `value`", "threshold": f"score bar (default {CONTINUOUS})"},
    example="type: tone\nvalue: positive",
    errors=("a reference that is not a string",),
)
def tone(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, CONTINUOUS)
    _validate_source(spec, ["referenceTone"])

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        out = output_of(session)
        c_out = sentiment(out)
        ref, source = _source(spec, ctx, session, ["referenceTone"], [], False)
        ev: dict[str, Any] = {"output_sentiment": round(c_out, 6), "output_tone": _tone_class(c_out), "reference_source": source or None}
        if ref is not None and ref.strip().lower() in _TONES:
            want = ref.strip().lower()
            ev["expected_tone"] = want
            return _graded(spec, 1.0 if _tone_class(c_out) == want else 0.0, threshold, f"tone {_tone_class(c_out)} (want {want})", ev)
        if ref is not None:
            c_ref = sentiment(ref)
            ev["reference_sentiment"] = round(c_ref, 6)
            return _graded(spec, max(0.0, 1 - abs(c_ref - c_out)), threshold, "tone match", ev)
        parts = [sentiment(s) for s in re.split(r"(?<=[.!?])\s+|\n+", out) if s.strip()]
        if not parts:
            return Result.error(f"{spec.type}: the output is empty: no tone to measure")
        mean = sum(parts) / len(parts)
        variance = sum((p - mean) ** 2 for p in parts) / len(parts)
        ev.update(sentences=len(parts), variance=round(variance, 6))
        return _graded(spec, max(0.0, 1 - variance), threshold, "tone stability", ev)

    return evaluate


# ---------------------------------------------------------------- content-similarity


def dice(a: str, b: str, *, drop_whitespace: bool = True) -> float:
    """Sørensen–Dice coefficient over character bigrams. With `drop_whitespace` all
    whitespace is removed first, as the `string-similarity` package Mastra uses does;
    without it, spacing differences count."""
    if drop_whitespace:
        a, b = re.sub(r"\s+", "", a), re.sub(r"\s+", "", b)
    if a == b:
        return 1.0
    if len(a) < 2 or len(b) < 2:
        return 0.0
    grams: dict[str, int] = {}
    for i in range(len(a) - 1):
        grams[a[i : i + 2]] = grams.get(a[i : i + 2], 0) + 1
    hits = 0
    for i in range(len(b) - 1):
        g = b[i : i + 2]
        if grams.get(g, 0) > 0:
            grams[g] -= 1
            hits += 1
    return 2 * hits / (len(a) + len(b) - 2)


_REFERENCE_KEYS = ["expected", "reference"]


@register(
    "content-similarity",
    family=FAMILY,
    summary="Dice similarity of character bigrams between the output and the reference",
    reads="final_output",
    args={
        "value": "the reference (default: args.expected, args.reference, then vars.expected / vars.reference)",
        "args.ignoreCase": "compare case-insensitively (default true)",
        "args.ignoreWhitespace": "whitespace does not count (default true); false compares spacing too",
        "threshold": f"score bar (default {CONTINUOUS})",
    },
    example="type: content-similarity\nvalue: The tests now pass.\nthreshold: 0.8",
    errors=("ignoreCase / ignoreWhitespace that are not booleans", "ERROR when no reference is found"),
    accepts=tuple(_REFERENCE_KEYS),
)
def content_similarity(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, CONTINUOUS)
    args = args_of(spec)
    fold = as_bool(args.get("ignoreCase"), type=spec.type, name="ignoreCase", default=True)
    squash = as_bool(args.get("ignoreWhitespace"), type=spec.type, name="ignoreWhitespace", default=True)
    _validate_source(spec, _REFERENCE_KEYS)

    def norm(t: str) -> str:
        return t.lower() if fold else t

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        ref, source = _source(spec, ctx, session, _REFERENCE_KEYS, _REFERENCE_KEYS, False)
        if ref is None:
            return Result.error(f"{spec.type}: no reference: set 'value', args.expected or args.reference")
        score = dice(norm(output_of(session)), norm(ref), drop_whitespace=squash)
        return _graded(spec, score, threshold, "similarity", {"similarity": round(score, 6), "reference_source": source, "ignore_case": fold, "ignore_whitespace": squash})

    return evaluate


# ---------------------------------------------------------------- textual-difference


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence, by the bit-parallel algorithm of Allison
    and Dix: O(len(a) · len(b) / word) with Python's big ints, so a long output costs
    milliseconds (difflib took seconds, and its autojunk shortcut misjudges texts over 200
    characters)."""
    if len(a) < len(b):
        a, b = b, a
    m = len(b)
    if m == 0:
        return 0
    peq = char_masks(b)
    mask = (1 << m) - 1
    v = mask
    for ch in a:
        u = v & peq.get(ch, 0)
        v = ((v + u) | (v - u)) & mask
    return m - v.bit_count()


@register(
    "textual-difference",
    family=FAMILY,
    summary="how little the output differs from the reference: the LCS ratio 2·LCS / (len(output) + len(reference)), by characters",
    reads="final_output",
    args={"value": "the reference (default: args.expected, args.reference, then vars)", "threshold": f"score bar (default {CONTINUOUS})"},
    example="type: textual-difference\nvalue: \"ok: 3 passed\"",
    errors=("a reference that is not a string", "ERROR when no reference is found"),
    accepts=tuple(_REFERENCE_KEYS),
)
def textual_difference(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, CONTINUOUS)
    _validate_source(spec, _REFERENCE_KEYS)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        ref, source = _source(spec, ctx, session, _REFERENCE_KEYS, _REFERENCE_KEYS, False)
        if ref is None:
            return Result.error(f"{spec.type}: no reference: set 'value', args.expected or args.reference")
        out = output_of(session)
        common = lcs_length(out, ref)
        ratio = 2 * common / (len(out) + len(ref)) if out or ref else 1.0
        ev = {"ratio": round(ratio, 6), "lcs_length": common, "length_difference": abs(len(out) - len(ref)), "reference_source": source}
        return _graded(spec, ratio, threshold, "LCS ratio", ev)

    return evaluate


# ---------------------------------------------------------------- code-tool-call-accuracy


@register(
    "code-tool-call-accuracy",
    family=FAMILY,
    summary="the expected tool was called (strict: it was the only tool called), or the tools were called in the expected order (strict: exactly that sequence); reads every thread's calls in order",
    reads="calls",
    args={
        "args.expectedTool": "the tool that must be called",
        "args.expectedToolOrder": "a list of tools that must be called in this order (gaps allowed unless strict)",
        "args.strictMode": "no other tools / no gaps (default false)",
        "threshold": f"score bar (default {EXACT})",
    },
    example="type: code-tool-call-accuracy\nargs: {expectedToolOrder: [Read, Edit, Bash]}",
    errors=("neither or both of expectedTool and expectedToolOrder", "strictMode that is not a boolean"),
)
def code_tool_call_accuracy(spec: CheckSpec) -> Evaluator:
    threshold = score_threshold(spec, EXACT)
    args = args_of(spec)
    strict = as_bool(args.get("strictMode"), type=spec.type, name="strictMode", default=False)
    one, order = args.get("expectedTool"), args.get("expectedToolOrder")
    if (one is None) == (order is None):
        raise CheckConfigError(f"{spec.type}: give exactly one of args.expectedTool or args.expectedToolOrder")
    tool = as_text(one, type=spec.type, name="args.expectedTool") if one is not None else None
    sequence = as_list(order, type=spec.type, name="args.expectedToolOrder") if order is not None else None
    for name in [tool] if tool is not None else sequence or []:
        problem = spelling_problem(name) if is_canonical(name) else None
        if problem:
            raise CheckConfigError(f"{spec.type}: {problem}")

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        calls = tool_calls(session)
        called = [c.tool for c in calls]
        ev: dict[str, Any] = {"tools_called": called[:50], "calls": len(called), "strict": strict}
        if tool is not None:
            ev["expected_tool"] = tool
            hit = [matches(tool, c.tool, c.canonical) for c in calls]
            ok = any(hit) and (not strict or all(hit))
            why = (f"{tool} was called" + (" and nothing else" if strict else "")) if ok else (f"{tool} was never called" if not any(hit) else f"other tools were called too: {sorted({c.tool for c, h in zip(calls, hit) if not h})}")
        else:
            assert sequence is not None
            ev["expected_order"] = sequence
            ok = (len(calls) == len(sequence) and all(matches(w, c.tool, c.canonical) for w, c in zip(sequence, calls))) if strict else _is_subsequence(sequence, calls)
            why = f"tools called in the order {sequence}" if ok else f"calls {short(str(called), 120)} are not {'exactly' if strict else 'in the order'} {sequence}"
        return _graded(spec, 1.0 if ok else 0.0, threshold, why + ": score", ev)

    return evaluate


def _is_subsequence(needle: list[str], hay: list[Call]) -> bool:
    it = iter(hay)
    return all(any(matches(x, h.tool, h.canonical) for h in it) for x in needle)

