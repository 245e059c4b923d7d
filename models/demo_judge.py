"""madbench's rich mock (`MADBENCH_MOCK_RICH=1`, or `BENCHTAPE_MOCK_RICH=1`): under the mock
harness, AI checks are answered by an offline demo evaluator instead of a judge model, so a
bench's judge checks can be exercised with no key, no network and no spend, each verdict
carrying its `criteria` in evidence.

The demo evaluator is deterministic and says what it is (provider `demo`, model `mock-rich`):
it splits the check's criterion (the rubric, criteria or reference in its prompt) into
phrases, and counts a phrase met when most of its words of four letters or more (their
first six letters, the phrasing words left out) are in the answer; the score is the share met. It measures nothing about a real model's judgement: it
is a stand-in that lets a bench author see AI checks pass, fail and report, offline.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from benchtape.core.envflags import flag
from benchtape.core.judgments import JudgeReply, JudgeRequest

PROVIDER, MODEL = "demo", "mock-rich"
_CRITERION = re.compile(r"^(?:Rubric|Criteria|Criterion|Reference facts|Reference answer|The reference answer|Reference):\s*\n(.*?)(?:\n\s*\n|$)", re.M | re.S)
_OUTPUT = re.compile(r"<output>(.*?)(?:</output>|$)", re.S)
_PROMPT = re.compile(r"<prompt>(.*?)(?:</prompt>|$)", re.S)
_REFERENCE = re.compile(r"<reference>(.*?)(?:</reference>|$)", re.S)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]{3,}")


def rich_mode() -> bool:
    """Whether MADBENCH_MOCK_RICH=1 (or BENCHTAPE_MOCK_RICH=1) is set."""
    return flag("MOCK_RICH")


def demo_judge(request: JudgeRequest) -> JudgeReply:
    """The demo evaluator's answer to a judge request, as a judge model's reply would carry it."""
    output = _tagged(_OUTPUT, request.prompt).lower()
    criteria = _criteria(request.prompt)
    results: list[dict[str, Any]] = [{"criterion": c, "met": _met(c, output)} for c in criteria]
    met = sum(r["met"] for r in results)
    score = met / len(results) if results else 0.0
    risk = "risk" in request.check_type or request.check_type in ("toxicity", "bias", "hallucination", "noise-sensitivity")
    if risk:
        score = 0.0  # the demo finds no risk: the check's score (1 - rating) is 1
    reason = f"demo evaluator (MADBENCH_MOCK_RICH): {met} of {len(results)} criteria found in the answer" if not risk else "demo evaluator (MADBENCH_MOCK_RICH): no risk rated offline"
    reply = {"reason": reason, "score": round(score, 6), "pass": score >= 0.5 if not risk else True, "criteria": results}
    return JudgeReply(text=orjson.dumps(reply).decode(), provider=PROVIDER, model=MODEL, input_tokens=None, output_tokens=None, cost_usd=0.0, latency_ms=0.0)


def _tagged(pattern: re.Pattern[str], prompt: str) -> str:
    m = pattern.search(prompt)
    return m.group(1) if m else ""


def _criteria(prompt: str) -> list[str]:
    """The criterion's phrases: the rubric (or reference) split at sentences, semicolons and
    line breaks; without one, the task's own words make one phrase."""
    m = _CRITERION.search(prompt)
    text = m.group(1) if m else (_tagged(_REFERENCE, prompt) or _tagged(_PROMPT, prompt))
    text = re.sub(r"</?[a-z_]+>", " ", text)
    parts = [p.strip(" -*\t") for p in re.split(r"[.;\n]+|\band\b", text)]
    return [p for p in parts if _WORD.search(p)]


# Words a criterion is phrased with rather than about.
_PHRASING = frozenset({"names", "name", "says", "mentions", "mention", "explains", "explain", "states", "that", "this", "with", "answer", "which", "from", "into", "should", "must", "does", "have", "their", "there", "about", "response", "output"})


def _met(criterion: str, output: str) -> bool:
    """Most of the criterion's words (their first six letters: `subtraction` meets
    `subtracted`) are in the answer."""
    words = {w.lower()[:6] for w in _WORD.findall(criterion) if w.lower() not in _PHRASING}
    return bool(words) and sum(w in output for w in words) * 2 >= len(words)
