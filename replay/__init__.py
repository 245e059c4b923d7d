"""The read side: grading, re-grading, the two controls, verdict diffs, query, reports."""
