"""Staging the seed tree each scenario's sandbox is copied from.

Order (madbench §1.6): `repo:` checkout → `testdata:` copied over it → `setup:` or
`generate:` run once per bench run → the result seeds every scenario's sandbox.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorder.bench import BenchSpec, ScenarioSpec
from recorder.errors import BadInput


@dataclass
class Seeds:
    """Scenario name → the staged tree to copy (None: an empty workspace), plus generated vars."""

    trees: dict[str, Path | None] = field(default_factory=dict)
    generated: dict[str, dict[str, Any]] = field(default_factory=dict)
    temps: list[Path] = field(default_factory=list)

    def get(self, name: str) -> Path | None:
        return self.trees.get(name)

    def vars(self, name: str) -> dict[str, Any]:
        return dict(self.generated.get(name) or {})

    def cleanup(self) -> None:
        for t in self.temps:
            shutil.rmtree(t, ignore_errors=True)


def stage_seeds(bench: BenchSpec, scenarios: list[ScenarioSpec]) -> Seeds:
    seeds = Seeds()
    for sc in scenarios:
        if sc.repo is not None or sc.setup is not None or sc.generate is not None:
            raise BadInput(f"scenario {sc.name!r}: repo:/setup:/generate: staging is not built in this version", file=sc.where.file, line=sc.where.line)
        seeds.trees[sc.name] = sc.testdata
    return seeds
