"""Evaluation files and the project they belong to: find, load, name and list them;
the tool registry an evaluation is checked against.
"""

from __future__ import annotations

from benchtape.spec.evaluation import EVALUATIONS_DIR, evaluation_ref, load_evaluation
from benchtape.spec.overlays import load_registry, project_config_dir
from benchtape.spec.project import load_project

__all__ = ["EVALUATIONS_DIR", "evaluation_ref", "load_evaluation", "load_project", "load_registry", "project_config_dir"]
