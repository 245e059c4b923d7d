"""regrade's summary says why cells were not measured: each distinct reason with its count, the
most common first, at most REASONS_SHOWN of them (a run of a thousand cells each failing with
its own reason must not print a thousand lines), the rest counted with where to read them."""

from __future__ import annotations

from collections import Counter

import pytest

from benchtape.render_replay import REASONS_SHOWN, regrade_summary
from benchtape.replay.regrade import RegradeSummary, ScenarioTally


def test_the_reasons_are_listed_most_common_first_and_capped(capsys: pytest.CaptureFixture[str]) -> None:
    tally = ScenarioTally(graded=12, statuses=Counter({"infrastructure_error": 12}))
    tally.unmeasured = Counter({"task 7 changed since it was validated: benchtape task validate 7": 5, **{f"reason {i}": 1 for i in range(REASONS_SHOWN + 2)}})
    regrade_summary(RegradeSummary("01G", "the task folders", {"7": tally}, tasks=True), plain=True)
    out = capsys.readouterr().out
    assert f"{5 + REASONS_SHOWN + 2} cell(s) not measured:" in out
    assert out.index("5 × task 7 changed since it was validated") < out.index("1 × reason 0")
    assert out.count(" × ") == REASONS_SHOWN and "and 3 more with 3 other reason(s)" in out
