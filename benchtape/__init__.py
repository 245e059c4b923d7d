"""benchtape: benchmark agentic coding tools; record once, grade many times.

The small public Python API (what a script or a notebook may rely on):

    from benchtape import load_inputs, run_benches, RunOptions, Store, grade_session
    evaluation, benches = load_inputs(["bench.yaml"])
    outcome = run_benches(benches, Store(".benchtape/benchtape.db"), RunOptions(repeat=3), reports=Reports(json=Path("out.json")))
    for row in outcome.results: ...   # read back from disk one at a time; outcome.close() when done

Names are imported on first use, so `import benchtape` costs nothing a command does not need.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from benchtape.core.version import VERSION as __version__

_PUBLIC = {
    "load_benches": "benchtape.app.api",
    "load_inputs": "benchtape.app.api",
    "run_benches": "benchtape.app.api",
    "run_eval": "benchtape.app.api",
    "RunOutcome": "benchtape.app.api",
    "Reports": "benchtape.app.api",
    "RunOptions": "benchtape.recorder.runner",
    "Store": "benchtape.store.database",
    "Session": "benchtape.core.model",
    "Action": "benchtape.core.model",
    "Result": "benchtape.core.results",
    "grade_session": "benchtape.replay.grading",
    "GradingContext": "benchtape.replay.grading",
    "StoredSnapshot": "benchtape.replay.grading",
    "preflight_all": "benchtape.app.preflight",
    "BenchtapeError": "benchtape.core.errors",
    "BadInput": "benchtape.core.errors",
    "ExitCode": "benchtape.core.errors",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'benchtape' has no attribute {name!r}")
    return getattr(import_module(module), name)
