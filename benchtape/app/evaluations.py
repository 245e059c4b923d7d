"""Evaluation files and the project they belong to: find, load, name and list them;
the tool registry an evaluation is checked against.
"""

from __future__ import annotations

from benchtape.spec.evaluation import EVALUATIONS_DIR, evaluation_names, evaluation_ref, find_evaluation, load_evaluation, project_evaluation
from benchtape.spec.overlays import load_registry, project_config_dir
from benchtape.spec.project import Project, load_project
from benchtape.spec.yamlsrc import load_yaml_file

__all__ = [
    "EVALUATIONS_DIR",
    "Project",
    "evaluation_names",
    "evaluation_ref",
    "find_evaluation",
    "load_evaluation",
    "load_project",
    "load_registry",
    "load_yaml_file",
    "project_config_dir",
    "project_evaluation",
]
