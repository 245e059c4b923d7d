"""How `show` prints a session's metrics: a whole number in full (a real Codex rollout's
1,135,418 tokens read `1.13542e+06`), a fraction to six figures, unknown as n/a, and the
built-in duration with its unit (milliseconds, where `sessions` says seconds)."""

from __future__ import annotations

from pathlib import Path

from e2e.cli import benchtape

from benchtape.render_replay import metric_text

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
if not REALDATA.is_dir():
    REALDATA = Path("/work/shared/realdata")


def test_a_metric_reads_as_a_person_reads_it():
    assert [metric_text(v) for v in (1135418, 1135418.0, 259943, 0, 0.004, 12.5, 0.0001234, 1234567.89, None)] == [
        "1135418", "1135418", "259943", "0", "0.004", "12.5", "0.000123", "1234568", "n/a",
    ]


def test_show_prints_a_real_rollouts_tokens_in_full(tmp_path: Path):
    rollout = REALDATA / "codex-rollout" / "codemie__rollout-2026-05-11T11-26-55-019e1625__cli-0.125.0.jsonl"
    db = tmp_path / "s.db"
    assert benchtape("import", "codex", rollout, "--db", db).returncode == 0
    shown = benchtape("show", "latest", "--db", db, "--plain")
    assert shown.returncode == 0, shown.stderr
    assert "e+0" not in shown.stdout and "  tokens  1135418" in shown.stdout, shown.stdout[-800:]
    assert " ms" in next(line for line in shown.stdout.splitlines() if line.strip().startswith("duration"))
