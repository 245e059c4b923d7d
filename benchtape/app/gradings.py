"""What grading asks from a front end: re-grade stored sessions (regrade), reproduce a
grading offline (grade, verify --sample), diff two gradings, list gradings, run the negative
control of a bench or of a task set. The grading itself is one function
(benchtape.replay.grading.grade_session); these are the use cases around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchtape.core.lazy import names_from

if TYPE_CHECKING:
    from benchtape.replay.control import refuse_images, tally
    from benchtape.replay.diff import Change, GradingDiff, diff_gradings, gradings_table
    from benchtape.replay.regrade import regrade, regrade_tasks
    from benchtape.replay.reproduce import DIVERGED, NOT_REGRADABLE, OnSession, Reproduction, SessionReplay, reproduce_report, reproduce_sample, reproduce_store
    from benchtape.replay.task_controls import run_controls

# Where each name lives; imported on first use, so `regrade` loads the regrade loop and not
# the controls, the reproduction or the diff (each a tree of imports of its own).
_FROM = {
    "refuse_images": ("benchtape.replay.control", "refuse_images"),
    "tally": ("benchtape.replay.control", "tally"),
    "Change": ("benchtape.replay.diff", "Change"),
    "GradingDiff": ("benchtape.replay.diff", "GradingDiff"),
    "diff_gradings": ("benchtape.replay.diff", "diff_gradings"),
    "gradings_table": ("benchtape.replay.diff", "gradings_table"),
    "regrade": ("benchtape.replay.regrade", "regrade"),
    "regrade_tasks": ("benchtape.replay.regrade", "regrade_tasks"),
    "DIVERGED": ("benchtape.replay.reproduce", "DIVERGED"),
    "NOT_REGRADABLE": ("benchtape.replay.reproduce", "NOT_REGRADABLE"),
    "OnSession": ("benchtape.replay.reproduce", "OnSession"),
    "Reproduction": ("benchtape.replay.reproduce", "Reproduction"),
    "SessionReplay": ("benchtape.replay.reproduce", "SessionReplay"),
    "reproduce_report": ("benchtape.replay.reproduce", "reproduce_report"),
    "reproduce_sample": ("benchtape.replay.reproduce", "reproduce_sample"),
    "reproduce_store": ("benchtape.replay.reproduce", "reproduce_store"),
    "run_controls": ("benchtape.replay.task_controls", "run_controls"),
}

__all__ = [
    "Change",
    "DIVERGED",
    "GradingDiff",
    "NOT_REGRADABLE",
    "OnSession",
    "Reproduction",
    "SessionReplay",
    "diff_gradings",
    "gradings_table",
    "refuse_images",
    "regrade",
    "regrade_tasks",
    "reproduce_report",
    "reproduce_sample",
    "reproduce_store",
    "run_controls",
    "tally",
]


__getattr__ = names_from(globals(), _FROM)
