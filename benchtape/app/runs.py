"""What a bench run asks of a front end besides `api.run_benches`: the run options, the
sandbox level a flag names, the audit of confounded setups, loading a bench, Harbor task folders,
`--param` values.
"""

from __future__ import annotations

from benchtape.recorder.runner import Interrupted, RunOptions
from benchtape.sandbox.levels import checked_level
from benchtape.spec.audit import Confounded, confounded_lines, render_lines
from benchtape.spec.bench import load_bench
from benchtape.spec.evalfile import EvalRun
from benchtape.spec.harbor_run import harbor_evaluation, is_harbor_folder
from benchtape.spec.params import parse_cli_param

__all__ = ["Confounded", "EvalRun", "Interrupted", "RunOptions", "checked_level", "confounded_lines", "harbor_evaluation", "is_harbor_folder", "load_bench", "parse_cli_param", "render_lines"]
