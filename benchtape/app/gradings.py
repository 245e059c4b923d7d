"""What grading asks from a front end: re-grade stored sessions (regrade), reproduce a
grading offline (grade, verify --sample), diff two gradings, list gradings, run the negative
control of a bench or of a task set. The grading itself is one function
(benchtape.replay.grading.grade_session); these are the use cases around it.
"""

from __future__ import annotations

from benchtape.replay.control import refuse_images, tally
from benchtape.replay.diff import Change, GradingDiff, diff_gradings, gradings_table
from benchtape.replay.regrade import regrade, regrade_tasks
from benchtape.replay.reproduce import DIVERGED, NOT_REGRADABLE, OnSession, Reproduction, SessionReplay, reproduce_report, reproduce_sample, reproduce_store
from benchtape.replay.task_controls import run_controls

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
