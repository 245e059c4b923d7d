"""Types the spec names that this version does not build, each refused with what is missing.

Refusing by name (rather than "unknown check type") tells a bench author the spelling is
right and what the check needs, so they can replace it (usually with `custom:exec`)
instead of hunting for a typo.
"""

from __future__ import annotations

from checks.registry import refuse

OTHERS = {
    "model:current": "needs the claudish live model catalog, which this version does not query",
    "ts": "needs the bun runtime, which this version does not manage (use python, or custom:exec with bun)",
    "js": "needs the bun runtime, which this version does not manage (use python, or custom:exec with bun or node)",
    "custom:gosrc": "needs the go toolchain, which this version does not drive (build the grader yourself and run it with custom:exec)",
    "custom:wasm": "needs a WASI runtime, which this version does not embed (run the module with custom:exec and a runtime such as wasmtime)",
}

for _t, _why in OTHERS.items():
    refuse(_t, _why)
