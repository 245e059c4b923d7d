"""`task scan --limit N` ranks by score, so newer candidates can sit below the cut: the line that
says how many are hidden names both ways to reach them (issue 44: it said "… 395 more" only)."""

from __future__ import annotations

from e2e.cli import benchtape
from harvestkit import clone_toolz


def test_the_hidden_candidates_line_names_limit_and_since(tmp_path):
    repo = clone_toolz(tmp_path / "toolz")
    done = benchtape("task", "scan", "--limit", "3", cwd=repo)
    assert done.returncode == 0, done.stderr
    [hidden] = [line for line in done.stdout.splitlines() if line.startswith("… ")]
    assert "more not shown" in hidden and "--limit " in hidden and "--since DATE (or 90d)" in hidden
