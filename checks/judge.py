"""AI judge checks (17 types): a model grades the session against a prompt we wrote.

A judge check is pure: it renders its prompt from the session, asks `ctx.judge` (which
may send the request or answer it from a stored judgment; see benchtape.replay.grading_judges), and
parses the reply. It never opens a connection itself, so grading stays a function of the
session plus the recorded judgments.

The prompts are ours, one file per family in `checks/judge_prompts/`, shown in full in
docs/checks.md. Inputs go in XML tags (`<output>…</output>`) with every closing tag of
ours stripped from the values, so an answer cannot close its tag and talk to the judge;
`{{RUBRIC}}` is the bench author's own text and goes in unwrapped. The judge ends its
reply with a JSON object; the last balanced one in the reply is read.

Scoring: with one vote the score is the judge's score (for the risk types 1 − its
rating). With `args.votes: N` (odd) the same question is asked N times and the score is
the fraction of votes that pass; the check passes when most do. A vote the reply does
not decide (no pass, no score) makes the check an ERROR, never a guess.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Mapping

from benchtape.checks.common import args_of, as_number, output_of, short, tool_calls
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register, spec_hash
from benchtape.core.command_runner import Unavailable
from benchtape.core.judgments import SCRIPTED_MARK, JudgeError, JudgeReply, JudgeRequest
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "Judge"
PROMPTS = Path(__file__).with_name("judge_prompts")
INPUTS = ("OUTPUT", "PROMPT", "CONTEXT", "REFERENCE", "TOOLS")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
NOT_GIVEN = "(none given)"
REPLY_EXCERPT = 300


@dataclass(frozen=True)
class JudgeType:
    name: str
    family: str  # the prompt file
    summary: str
    threshold: float | None  # None: the judge's own pass decides
    risk: str | None = None  # evidence key of the raw rating; the score is 1 - rating
    rubric_required: bool = False  # value/args.rubric is the criterion
    value_is: str = "rubric"  # what `value` means: rubric | reference
    needs_context: bool = False

    @property
    def reads(self) -> str:
        return {
            "rubric": "final_output, the prompt; the criterion from value/args.rubric",
            "relevance": "final_output and the prompt",
            "context": "the context (args.context or vars.context), the prompt, final_output",
            "risk": "final_output and the prompt" + (", the context" if self.needs_context else ""),
            "tools": "the session's tool calls (every thread), the prompt, final_output",
        }[self.family]


TYPES: tuple[JudgeType, ...] = (
    JudgeType("llm-rubric", "rubric", "a judge model decides whether the output meets a rubric you write", None, rubric_required=True),
    JudgeType("factuality", "rubric", "a judge model compares the output's facts with a reference answer (fails only when they disagree)", None, rubric_required=True, value_is="reference"),
    JudgeType("model-graded-closedqa", "rubric", "a judge model answers yes or no: does the output satisfy the criterion", None, rubric_required=True),
    JudgeType("g-eval", "rubric", "a judge model derives evaluation steps from your criteria and scores the output by them", None, rubric_required=True),
    JudgeType("answer-relevance", "relevance", "a judge model decides whether the output addresses the question asked", None),
    JudgeType("answer-relevancy", "relevance", "share of the output's statements relevant to the question, as a judge model counts them", 0.7),
    JudgeType("prompt-alignment", "relevance", "share of the prompt's instructions the output follows, as a judge model counts them", 0.7),
    JudgeType("context-faithfulness", "context", "a judge model decides whether every claim of the output is supported by the context", None, needs_context=True),
    JudgeType("faithfulness", "context", "share of the output's claims the context supports, as a judge model counts them", 0.7, needs_context=True),
    JudgeType("context-recall", "context", "a judge model decides whether the context holds what the reference answer says", None, value_is="reference", needs_context=True),
    JudgeType("context-relevance", "context", "share of the context relevant to the question, as a judge model counts it", 0.7, needs_context=True),
    JudgeType("context-precision", "context", "whether the context chunks useful for the reference come first (ranked precision, judged per chunk)", 0.7, value_is="reference", needs_context=True),
    JudgeType("llm-tool-call-accuracy", "tools", "a judge model scores whether the agent called the right tools with sensible arguments for the task", 0.7, value_is="reference"),
    JudgeType("toxicity", "risk", "1 − the toxicity a judge model rates in the output", 0.7, risk="raw_toxicity"),
    JudgeType("bias", "risk", "1 − the share of biased opinion statements a judge model finds in the output", 0.7, risk="raw_bias"),
    JudgeType("hallucination", "risk", "1 − the share of the output's statements a judge model finds contradicted by or absent from the context", 0.7, risk="raw_hallucination", needs_context=True),
    JudgeType("noise-sensitivity", "risk", "1 − how far a judge model finds the output misled by noisy passages of the context", 0.7, risk="raw_noise_sensitivity", value_is="reference", needs_context=True),
)
BY_NAME = {t.name: t for t in TYPES}
JUDGE_TYPES = tuple(t.name for t in TYPES)


# ---------------------------------------------------------------- prompts


@cache
def prompt_files() -> dict[str, tuple[str, dict[str, str]]]:
    """family -> (its description, type -> template), read from judge_prompts/<family>.md."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for path in sorted(PROMPTS.glob("*.md")):
        intro, templates = _split_sections(path.read_text(encoding="utf-8"))
        out[path.stem] = (intro, templates)
    return out


def _split_sections(text: str) -> tuple[str, dict[str, str]]:
    parts = re.split(r"^## (\S+)[ \t]*\n", text, flags=re.M)
    intro = re.sub(r"^# .*\n", "", parts[0], count=1).strip()
    templates = {parts[i]: parts[i + 1].strip() + "\n" for i in range(1, len(parts), 2)}
    return intro, templates


def template_of(type: str) -> str:
    jt = BY_NAME[type]
    return prompt_files()[jt.family][1][type]


_CLOSING = re.compile(r"</\s*(?:" + "|".join(i.lower() for i in INPUTS) + r")\s*>", re.I)
_PLACEHOLDER = re.compile(r"\{\{\s*(" + "|".join(INPUTS + ("RUBRIC",)) + r")\s*\}\}")


def wrap(name: str, value: str | None) -> str:
    """An input in its tag, with our closing tags stripped from the value (the answer
    cannot close `<output>` and speak to the judge from outside it)."""
    tag = name.lower()
    body = NOT_GIVEN if value is None or value == "" else _CLOSING.sub("", value)
    return f"<{tag}>\n{body}\n</{tag}>"


def render(template: str, inputs: Mapping[str, str | None], rubric: str | None, rubric_is_main: bool) -> str:
    """The exact prompt text: one pass over the template, so a value that contains
    `{{PROMPT}}` is never substituted again."""

    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        if name == "RUBRIC":
            if rubric_is_main:
                return rubric or ""
            return f"\nAdditional criteria from the bench author:\n{rubric}" if rubric else ""
        return wrap(name, inputs.get(name))

    return _PLACEHOLDER.sub(fill, template)


# ---------------------------------------------------------------- the reply


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last balanced JSON object in a reply (the judge reasons first, then answers),
    the outermost one where objects nest; None when there is none."""
    decoder = json.JSONDecoder()
    best: tuple[int, int, dict[str, Any]] | None = None
    for m in re.finditer(r"\{", text):
        start = m.start()
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(obj, dict) and (best is None or end > best[1]):  # starts ascend: the first to reach an end is the outermost
            best = (start, end, obj)
    return None if best is None else best[2]


@dataclass(frozen=True)
class Vote:
    passed: bool
    score: float  # the check's score for this vote (risk types: 1 - rating)
    rating: float | None  # the judge's own number
    reason: str
    reply: JudgeReply

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass": self.passed,
            "score": self.score,
            "judge_score": self.rating,
            "reason": self.reason,
            "reused": self.reply.reused,
            "judgment": self.reply.judgment_id,
            "request_sha256": self.reply.request_sha256,
        }


class Undecided(Exception):
    """A reply that decides nothing: no JSON object, or one with neither pass nor score."""


_TRUE = {"true", "yes", "pass", "passed"}
_FALSE = {"false", "no", "fail", "failed"}


def _pass_field(obj: Mapping[str, Any]) -> bool | None:
    value = obj.get("pass")
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _score_field(obj: Mapping[str, Any]) -> float | None:
    value = obj.get("score")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Undecided(f"its score {value!r} is not a number")
    if not 0 <= value <= 1:
        raise Undecided(f"its score {value!r} is outside [0, 1]")
    return float(value)


def decide(jt: JudgeType, threshold: float | None, reply: JudgeReply) -> Vote:
    """One reply as a vote. The judge's own pass decides when the type has no bar and none
    was declared; otherwise the score against the bar (risk types: 1 - rating)."""
    if reply.stop_reason == "refusal":
        raise Undecided(f"the judge refused to answer: {short(reply.text.strip(), REPLY_EXCERPT)!r}")
    obj = last_json_object(reply.text)
    if obj is None and reply.stop_reason in ("max_tokens", "length"):
        raise Undecided(f"the judge's reply was cut off at its token limit before its JSON verdict (raise args.max_tokens): {short(reply.text.strip()[-REPLY_EXCERPT:], REPLY_EXCERPT)!r}")
    if obj is None and reply.text.lstrip().startswith(SCRIPTED_MARK):  # the scripted model's own word: shown whole
        raise Undecided(reply.text.strip()[len(SCRIPTED_MARK):].strip())
    if obj is None:
        raise Undecided(f"the judge's reply is not JSON (no JSON object in it): {short(reply.text.strip(), REPLY_EXCERPT)!r}")
    reason = obj.get("reason")
    reason = reason if isinstance(reason, str) else ("" if reason is None else json.dumps(reason))
    judge_pass = _pass_field(obj)
    rating = _score_field(obj)
    if jt.risk is not None:
        if rating is None:
            raise Undecided("the judge's reply has no score (its risk rating from 0 to 1)")
        score = 1.0 - rating
        return Vote(score >= (threshold if threshold is not None else 0.7), score, rating, reason, reply)
    if rating is None and judge_pass is None:
        raise Undecided("the judge's reply has neither pass nor score")
    score = rating if rating is not None else (1.0 if judge_pass else 0.0)
    if threshold is not None:
        passed = score >= threshold
    else:
        passed = judge_pass if judge_pass is not None else score >= 0.5
    return Vote(passed, score, rating, reason, reply)


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True)
class JudgeConfig:
    provider: str | None
    model: str | None
    temperature: float | None
    max_tokens: int | None
    effort: str | None
    votes: int
    threshold: float | None  # the effective bar (None: the judge's own pass)
    rubric: str | None
    reference_value: Any


def configure(spec: CheckSpec, jt: JudgeType) -> JudgeConfig:
    args = args_of(spec)
    t = spec.type
    provider = _opt_text(args.get("judge"), t, "args.judge", "a provider id from the bench's judges: block")
    model = _opt_text(args.get("model"), t, "args.model", "a model id, or a key of the bench's models: block")
    temperature = None
    if args.get("temperature") is not None:
        temperature = as_number(args["temperature"], type=t, name="args.temperature")
        if not 0 <= temperature <= 2:
            raise CheckConfigError(f"{t}: args.temperature must be between 0 and 2, got {args['temperature']!r}")
    max_tokens = None
    if args.get("max_tokens") is not None:
        max_tokens = args["max_tokens"]
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise CheckConfigError(f"{t}: args.max_tokens must be a positive whole number, got {max_tokens!r}")
    effort = args.get("effort")
    if effort is not None and effort not in EFFORTS:
        raise CheckConfigError(f'{t}: effort "{effort}" is not a level the judge accepts (want one of {", ".join(EFFORTS)})')
    votes = args.get("votes", 1)
    if isinstance(votes, bool) or not isinstance(votes, int) or votes <= 0 or votes % 2 == 0:
        raise CheckConfigError(f"{t}: args.votes must be a positive odd integer, got {votes!r}")
    threshold = jt.threshold
    if spec.threshold is not None:
        declared = as_number(spec.threshold, type=t, name="threshold")
        if not 0 <= declared <= 1:
            raise CheckConfigError(f"{t}: threshold must be in [0, 1], got {spec.threshold!r}")
        if declared != 0:  # 0 means the type's default
            threshold = declared
    rubric_arg = _opt_text(args.get("rubric"), t, "args.rubric", "the criterion text")
    value = spec.value
    if jt.value_is == "reference":
        rubric, reference_value = rubric_arg, value
        if jt.rubric_required:  # factuality: the reference facts are its criterion
            rubric, reference_value = None, value if value is not None else rubric_arg
            if not isinstance(reference_value, str) or not reference_value.strip():
                raise CheckConfigError(f"{t}: the reference answer is required: write it in value or args.rubric")
    else:
        rubric, reference_value = rubric_arg, None
        if value is not None:
            if rubric_arg is not None:
                raise CheckConfigError(f"{t}: both value and args.rubric give the criterion; keep one")
            if not isinstance(value, str):
                raise CheckConfigError(f"{t}: value (the criterion) must be text, got {type(value).__name__}")
            rubric = value
        if jt.rubric_required and (rubric is None or not rubric.strip()):
            raise CheckConfigError(f"{t}: the rubric is required: write it in value or args.rubric")
    return JudgeConfig(provider, model, temperature, max_tokens, effort, votes, threshold, rubric, reference_value)


def _opt_text(value: Any, type: str, name: str, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise CheckConfigError(f"{type}: {name} must be {what}, got {value!r}")
    return value


# ---------------------------------------------------------------- inputs


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _first(*values: Any) -> Any:
    for v in values:
        if v is not None and v != "" and v != []:
            return v
    return None


def _context(value: Any) -> str | None:
    """A context string; a list becomes numbered chunks (context-precision ranks them)."""
    if isinstance(value, (list, tuple)):
        return "\n\n".join(f"[{i}] {_text(chunk)}" for i, chunk in enumerate(value, 1)) if value else None
    return _text(value)


def _tools(session: Session) -> str:
    lines = []
    for i, call in enumerate(tool_calls(session), 1):
        outcome = {"ok": "ok", "error": "error"}.get(call.outcome or "", "outcome unknown")
        where = "" if call.thread == "main" or not call.thread else f" [thread {call.thread}]"
        lines.append(f"{i}. {call.tool} {json.dumps(call.input, ensure_ascii=False, default=str)} → {outcome}{where}")
    return "\n".join(lines) if lines else "(the agent made no tool calls)"


GATHERED = ("prompt", "input", "context", "reference", "expected", "tools", "rubric")  # the args `gather` reads, for every judge type


def gather(jt: JudgeType, cfg: JudgeConfig, spec: CheckSpec, session: Session, ctx: CheckContext) -> dict[str, str | None]:
    """The five inputs, from args, then the scenario's vars, then the session."""
    args = args_of(spec)
    v = ctx.vars
    prompt = _first(args.get("prompt"), args.get("input"), v.get("prompt"), v.get("query"), v.get("question"), session.prompt)
    context = _first(args.get("context"), v.get("context"))
    if jt.value_is == "reference":
        reference = _first(cfg.reference_value, args.get("reference"), args.get("expected"), v.get("reference"), v.get("expected"))
    else:
        reference = _first(args.get("reference"), v.get("reference"))
    tools_doc = _tools(session) if jt.family == "tools" else None
    if jt.family == "tools" and args.get("tools") is not None:
        tools_doc = f"{tools_doc}\n\nTools available to the agent: {_text(args.get('tools'))}"
    return {"OUTPUT": output_of(session), "PROMPT": _text(prompt), "CONTEXT": _context(context), "REFERENCE": _text(reference), "TOOLS": tools_doc}


# ---------------------------------------------------------------- the check


def _at(spec: CheckSpec) -> str:
    w = spec.where
    if getattr(w, "file", None):
        return f" ({w.file}:{w.line})" if getattr(w, "line", None) else f" ({w.file})"
    return ""


def build_judge(spec: CheckSpec) -> Evaluator:
    jt = BY_NAME[spec.type]
    cfg = configure(spec, jt)
    template = template_of(jt.name)
    identity = spec_hash(spec)
    rubric_is_main = jt.rubric_required

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        label = f"{spec.type}{_at(spec)}"
        if ctx.judge is None:  # what it reads is missing where it is graded (a report alone has no store to record in)
            raise Unavailable("judge", f"{label}: no judge configured: declare a judges: block in the bench (or set ANTHROPIC_API_KEY), then grade again")
        inputs = gather(jt, cfg, spec, session, ctx)
        if jt.needs_context and not inputs["CONTEXT"]:
            return Result.error(f"{label}: no context to judge against: give args.context, or a scenario var `context`")
        if jt.value_is == "reference" and jt.family == "context" and jt.name != "context-precision" and not inputs["REFERENCE"]:
            return Result.error(f"{label}: no reference answer: give value, args.reference, or a scenario var `reference`")
        prompt = render(template, inputs, cfg.rubric, rubric_is_main)
        votes: list[Vote] = []
        for i in range(cfg.votes):
            request = JudgeRequest(
                prompt=prompt,
                provider=cfg.provider,
                model=cfg.model,
                temperature=cfg.temperature,
                max_tokens=cfg.max_tokens,
                effort=cfg.effort,
                session_id=session.id,
                check_type=spec.type,
                check_sha256=identity,
                vote=i,
            )
            try:
                reply = ctx.judge(request)
            except JudgeError as exc:
                return Result.error(f"{label}: the judge could not answer: {exc}", _partial(votes, cfg))
            try:
                votes.append(decide(jt, cfg.threshold, reply))
            except Undecided as exc:
                which = f"vote {i + 1} of {cfg.votes}: " if cfg.votes > 1 else ""
                return Result.error(f"{label}: {which}{exc}", {**_partial(votes, cfg), **_reply_evidence([reply]), "judge_reply": short(reply.text, 2000)})
        return _result(jt, cfg, votes)

    return evaluate


def _partial(votes: list[Vote], cfg: JudgeConfig) -> dict[str, Any]:
    return {"votes": [v.to_dict() for v in votes], "threshold": cfg.threshold} if votes else {"threshold": cfg.threshold}


def _sum(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return None if len(known) != len(values) else sum(known)


def _reply_evidence(replies: list[JudgeReply]) -> dict[str, Any]:
    last = replies[-1]
    return {
        "judge_provider": last.provider,
        "judge_model": last.model,
        "judge_input_tokens": _sum([r.input_tokens for r in replies]),
        "judge_output_tokens": _sum([r.output_tokens for r in replies]),
        "judge_cost_usd": _sum([r.cost_usd for r in replies]),
        "judge_latency_ms": _sum([r.latency_ms for r in replies]),
        "judge_reused": all(r.reused for r in replies),
        "judgments": [r.judgment_id for r in replies if r.judgment_id],
    }


def _result(jt: JudgeType, cfg: JudgeConfig, votes: list[Vote]) -> Result:
    replies = [v.reply for v in votes]
    evidence = {**_reply_evidence(replies), "threshold": cfg.threshold if cfg.threshold is not None else "judge's own pass"}
    evidence["judge_reasoning"] = votes[0].reason if len(votes) == 1 else [v.reason for v in votes]
    if len(votes) == 1:
        vote = votes[0]
        if jt.risk is not None:
            evidence[jt.risk] = vote.rating
        evidence["judge_score"] = vote.rating
        said = last_json_object(vote.reply.text) or {}
        if isinstance(said.get("criteria"), list):  # per-criterion findings, when the judge gives them (madbench's Evidence.criteria)
            evidence["criteria"] = said["criteria"]
        return Result.of(vote.passed, f"judge {vote.reply.model}: {vote.reason}".strip(), evidence, score=vote.score)
    passing = sum(v.passed for v in votes)
    score = passing / len(votes)
    evidence["votes"] = [v.to_dict() for v in votes]
    if jt.risk is not None:
        evidence[jt.risk] = [v.rating for v in votes]
    majority = [v for v in votes if v.passed == (passing * 2 > len(votes))]
    why = majority[0].reason if majority else ""
    return Result.of(passing * 2 > len(votes), f"judge {votes[-1].reply.model}: {passing}/{len(votes)} votes passed: {why}".strip(), evidence, score=score)


# ---------------------------------------------------------------- registration

_COMMON_ARGS = {
    "args.judge": "provider id from the bench's judges: block (default: judges.default)",
    "args.model": "model id, or a key of the bench's models: block (default: the provider's model)",
    "args.temperature": "0–2 (default: the provider's params, else the API's)",
    "args.max_tokens": "positive whole number (default: the provider's params, else 2048 for Anthropic, the server's own for OpenAI-compatible)",
    "args.effort": f"{' | '.join(EFFORTS)} (claude-code judges)",
    "args.votes": "positive odd number of times to ask (default 1); score = the fraction of passing votes",
}


def _args_for(jt: JudgeType) -> dict[str, str]:
    out: dict[str, str] = {}
    if jt.rubric_required and jt.value_is == "reference":
        out["value"] = "the reference answer, known to be correct (or args.rubric) (required)"
    elif jt.rubric_required:
        out["value"] = "the rubric / criterion (or args.rubric) (required)"
    elif jt.value_is == "reference":
        out["value"] = "the reference answer (or args.reference, or vars.reference)" if jt.family != "tools" else "the expected tool name(s) (optional)"
        out["args.rubric"] = "extra criteria appended to the prompt (optional)"
    else:
        out["value"] = "extra criteria appended to the prompt (or args.rubric) (optional)"
    if jt.family != "rubric" or jt.name == "factuality":
        out["args.prompt"] = "the question (default: vars.prompt, vars.query, vars.question, else the session's prompt)"
    if jt.needs_context:
        out["args.context"] = "the context: text, or a list of chunks (default: vars.context) (required)"
    if jt.family == "tools":
        out["args.tools"] = "the tools that were available to the agent (optional)"
    default = "the judge's own pass" if jt.threshold is None else f"{jt.threshold:g}"
    out["threshold"] = f"score bar in [0, 1]; 0 means the default ({default})"
    out.update(_COMMON_ARGS)
    return out


def _example(jt: JudgeType) -> str:
    if jt.name == "llm-rubric":
        return "type: llm-rubric\nvalue: The answer names the failing test and explains the fix.\nargs: {judge: local, votes: 3}"
    if jt.name == "factuality":
        return "type: factuality\nvalue: Paris is the capital of France.\nargs: {prompt: 'What is the capital of France?'}"
    if jt.rubric_required:
        return f"type: {jt.name}\nvalue: The answer says which file changed."
    if jt.needs_context:
        extra = "\nvalue: The fix is in calc.py." if jt.value_is == "reference" else ""
        return f"type: {jt.name}{extra}\nargs: {{context: [calc.py adds two numbers, tests live in test_calc.py]}}"
    if jt.family == "tools":
        return f"type: {jt.name}\nvalue: [Read, Edit]"
    return f"type: {jt.name}" + ("\nthreshold: 0.8" if jt.threshold is not None else "")


_ERRORS = (
    "args.judge / args.model that are not text; an unknown provider (refused when the bench loads)",
    "args.votes that is not a positive odd integer",
    "a threshold outside [0, 1]; args.temperature outside [0, 2]; args.max_tokens that is not a positive whole number",
    "ERROR: no judge configured; the judge could not answer (after retries and timeout); a reply with no JSON object, or one with neither pass nor score (an undecided vote)",
)


def _register_all() -> None:
    for jt in TYPES:
        errors = list(_ERRORS)
        if jt.rubric_required:
            errors.insert(0, "no value and no args.rubric")
        if jt.needs_context:
            errors.append("ERROR: no context (args.context or vars.context)")
        register(
            jt.name,
            family=FAMILY,
            summary=jt.summary,
            reads=jt.reads,
            args=_args_for(jt),
            example=_example(jt),
            errors=tuple(errors),
            kind="AI",
            accepts=GATHERED,
        )(build_judge)


_register_all()
