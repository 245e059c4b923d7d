"""Types the spec names that this version does not build, each refused with what is missing.

Refusing by name (rather than "unknown check type") tells a bench author the spelling is
right and what the check needs, so they can replace it (usually with `custom:exec`)
instead of hunting for a typo.
"""

from __future__ import annotations

from checks.registry import refuse

JUDGE_TYPES = (
    "llm-rubric",
    "factuality",
    "model-graded-closedqa",
    "g-eval",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "answer-relevancy",
    "faithfulness",
    "context-relevance",
    "context-precision",
    "prompt-alignment",
    "llm-tool-call-accuracy",
    "toxicity",
    "bias",
    "hallucination",
    "noise-sensitivity",
)
JUDGE_WHY = "needs an LLM judge, which this version does not have (grade with a deterministic check, or call a judge yourself from custom:exec)"

OTHERS = {
    "model:current": "needs the claudish live model catalog, which this version does not query",
    "ts": "needs the bun runtime, which this version does not manage (use python, or custom:exec with bun)",
    "js": "needs the bun runtime, which this version does not manage (use python, or custom:exec with bun or node)",
    "custom:gosrc": "needs the go toolchain, which this version does not drive (build the grader yourself and run it with custom:exec)",
    "custom:wasm": "needs a WASI runtime, which this version does not embed (run the module with custom:exec and a runtime such as wasmtime)",
}

for _t in JUDGE_TYPES:
    refuse(_t, JUDGE_WHY)
for _t, _why in OTHERS.items():
    refuse(_t, _why)
