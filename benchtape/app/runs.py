"""What a bench run asks of a front end besides `api.run_benches`: the run options, the
sandbox level a flag names, the audit of confounded setups, loading a bench, Harbor task folders,
`--param` values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchtape.core.lazy import names_from

if TYPE_CHECKING:
    from benchtape.recorder.runner import Interrupted, RunOptions
    from benchtape.sandbox.levels import checked_level
    from benchtape.spec.audit import Confounded, confounded_lines, render_lines
    from benchtape.spec.bench import load_bench
    from benchtape.spec.evalfile import EvalRun
    from benchtape.spec.harbor_run import harbor_evaluation, is_harbor_folder
    from benchtape.spec.params import parse_cli_param

# Where each name lives; imported on first use, so `regrade --bench` loads the bench loader
# and not the runner, the audit or the Harbor folders.
_FROM = {
    "Interrupted": ("benchtape.recorder.runner", "Interrupted"),
    "RunOptions": ("benchtape.recorder.runner", "RunOptions"),
    "checked_level": ("benchtape.sandbox.levels", "checked_level"),
    "Confounded": ("benchtape.spec.audit", "Confounded"),
    "confounded_lines": ("benchtape.spec.audit", "confounded_lines"),
    "render_lines": ("benchtape.spec.audit", "render_lines"),
    "load_bench": ("benchtape.spec.bench", "load_bench"),
    "EvalRun": ("benchtape.spec.evalfile", "EvalRun"),
    "harbor_evaluation": ("benchtape.spec.harbor_run", "harbor_evaluation"),
    "is_harbor_folder": ("benchtape.spec.harbor_run", "is_harbor_folder"),
    "parse_cli_param": ("benchtape.spec.params", "parse_cli_param"),
}

__all__ = ["Confounded", "EvalRun", "Interrupted", "RunOptions", "checked_level", "confounded_lines", "harbor_evaluation", "is_harbor_folder", "load_bench", "parse_cli_param", "render_lines"]


__getattr__ = names_from(globals(), _FROM)
