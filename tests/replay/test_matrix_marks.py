"""The tasks × setups matrix names each outcome so it cannot be misread (issue 44: `no_changes` read
"none", which looks like "nothing recorded")."""

from __future__ import annotations

from benchtape.replay.compare import matrix_text
from benchtape.replay.conclusions import MatrixCell


def test_each_outcome_reads_as_itself_and_a_failure_to_execute_is_bracketed():
    cells = [MatrixCell(1, "passed", "s1", True), MatrixCell(2, "no_changes", "s2", True), MatrixCell(3, "timeout", "s3", False)]
    assert matrix_text(cells) == "pass no_changes [timeout]"
    assert matrix_text([]) == "—"
