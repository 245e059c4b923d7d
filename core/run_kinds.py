"""The kinds of run a store holds (`runs.kind`): vocabulary every floor reads, so it lives at the bottom."""

from __future__ import annotations

CONTROL = "control"  # the negative control (`benchtape check`)
EVALUATION = "evaluation"  # an evaluation's run (`benchtape run NAME`)
