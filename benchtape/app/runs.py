"""What a bench run asks of a front end besides `api.run_benches`: the run options, the
sandbox level a flag names, the audit of confounded setups, loading a bench, Harbor task folders,
`--param` values.
"""

from __future__ import annotations

from benchtape.recorder.runner import RunOptions
from benchtape.sandbox.levels import checked_level
from benchtape.spec.audit import Confounded
from benchtape.spec.evalfile import EvalRun

__all__ = ["Confounded", "EvalRun", "RunOptions", "checked_level"]
