"""What grading asks from a front end: re-grade stored sessions (regrade), reproduce a
grading offline (grade, verify --sample), diff two gradings, list gradings, run the negative
control of a bench or of a task set. The grading itself is one function
(benchtape.replay.grading.grade_session); these are the use cases around it.
"""

from __future__ import annotations

from benchtape.replay.diff import Change, GradingDiff, diff_gradings, gradings_table
from benchtape.replay.reproduce import DIVERGED, NOT_REGRADABLE, reproduce_sample

__all__ = ["Change", "DIVERGED", "GradingDiff", "NOT_REGRADABLE", "diff_gradings", "gradings_table", "reproduce_sample"]
