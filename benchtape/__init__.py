"""benchtape: benchmark agentic coding tools; record once, grade many times.

The small public Python API (what a script or a notebook may rely on; docs/api.md has a
worked example that a test runs):

    import benchtape as bt
    store = bt.open_store(Path(".benchtape/benchtape.db"))        # created when missing
    benches = bt.load_benches(["bench.yaml"])
    outcome = bt.run_benches(benches, store, bt.RunOptions(repeat=3))   # record, graded live
    again = bt.regrade(store, benches[0], bt.Selection(run=outcome.runs[0].run_id))   # grade again, no agent
    diff = bt.diff_gradings(store, outcome.runs[0].grading_id, again.grading_id)     # compare

These are the application layer's functions (benchtape.app), the same ones the CLI and the
viewer call. Names are imported on first use, so `import benchtape` costs nothing a command
does not need.
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
    "demo_bench_path": "benchtape.app.api",
    "open_store": "benchtape.app.stores",
    "Selection": "benchtape.app.sessions",
    "session_lines": "benchtape.app.sessions",
    "show": "benchtape.app.sessions",
    "regrade": "benchtape.app.gradings",
    "diff_gradings": "benchtape.app.gradings",
    "gradings_table": "benchtape.app.gradings",
    "compare": "benchtape.app.comparison",
    "reproduce_store": "benchtape.app.gradings",
    "write_atif_file": "benchtape.app.exporting",
    "write_inspect_logs": "benchtape.app.exporting",
    "write_otlp": "benchtape.app.exporting",
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
