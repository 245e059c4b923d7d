"""`benchtape run EVALUATION`, as a user runs it: the preview, consent, a matrix measured once
and re-graded after, --fresh, --task filling a matrix across invocations, Ctrl-C.

Everything runs for real: the mock agent as a process in a home sandbox, the store on disk,
the checks through the one grading function.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from cli import benchtape, popen
from evalkit import CALC, write
from evalkit import MOCK_BENCH as BENCH
from evalkit import MOCK_EVALUATION as EVALUATION


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", BENCH)
    write(root / ".benchtape" / "evaluations" / "base.yaml", EVALUATION)
    return root


def run(project: Path, *args: str, timeout: float = 300):
    return benchtape("run", "base", *args, cwd=project, env={"XDG_CONFIG_HOME": str(project / "xdg")}, timeout=timeout)


def db(project: Path) -> sqlite3.Connection:
    return sqlite3.connect(project / ".benchtape" / "benchtape.db")


def counts(project: Path) -> tuple[int, int]:
    """(sessions, outcomes) in the store."""
    with db(project) as c:
        return c.execute("SELECT count(*) FROM sessions").fetchone()[0], c.execute("SELECT count(*) FROM outcomes").fetchone()[0]


def latest_outcomes(project: Path) -> dict[tuple[str, str, int], str]:
    """(arm label, task, attempt) → the latest outcome of the latest measurement."""
    out = {}
    with db(project) as c:
        rows = c.execute(
            "SELECT s.scenario, s.attempt, o.outcome, json_extract(f.data, '$.cell.label') FROM sessions s "
            "JOIN outcomes o ON o.session_id = s.id JOIN actions f ON f.session_id = s.id AND f.seq = 1 ORDER BY s.id, o.created_at"
        ).fetchall()
    for task, attempt, outcome, label in rows:
        out[(label, task, attempt)] = outcome
    return out


def test_a_matrix_runs_then_a_second_invocation_starts_nothing_and_regrades_all_and_fresh_measures_again(project):
    first = run(project, "--yes")
    assert first.returncode == 0, first.stdout + first.stderr
    assert counts(project) == (12, 12)  # 2 setups × 3 tasks × 2 attempts, one session and one outcome each
    outcomes = latest_outcomes(project)
    assert outcomes[("mock@latest scripted", "fix-add", 1)] == "passed"
    assert outcomes[("mock@latest scripted", "fix-sub", 2)] == "failed"
    assert outcomes[("mock@latest noop", "fix-add", 1)] == "no_changes"  # the no-op agent changed nothing
    assert outcomes[("mock@latest noop", "explain", 2)] == "passed"  # it echoes the prompt, which says "calc"
    assert "control DOES NOT HOLD: mock@latest noop (the no-op) passed 2 of 6 cell(s)" in first.stdout, first.stdout  # said by the run, not only by compare

    # The checks change; the store does not: the second invocation re-grades every stored cell.
    bench = project / "madbench.yaml"
    bench.write_text(bench.read_text().replace('{type: contains, value: "calc"}', '{type: contains, value: "subtracts"}'))
    preview = run(project, "--dry-run", "--json")
    assert preview.returncode == 0, preview.stderr
    doc = orjson.loads(preview.stdout)
    assert (doc["measured"], doc["to_run"], doc["cells"]) == (12, 0, 12)
    second = run(project, "--yes")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "0 session(s) started, 0 cell(s) measured now, 12 re-graded" in second.stdout
    assert counts(project) == (12, 24)  # no session started; a new outcome on every stored measurement
    regraded = latest_outcomes(project)
    assert regraded[("mock@latest noop", "explain", 2)] == "failed"  # the echo does not say "subtracts": a question's wrong answer, whatever its (asked-for) empty diff
    assert regraded[("mock@latest scripted", "explain", 1)] == "passed"
    with db(project) as c:
        sources = dict(c.execute("SELECT source, count(*) FROM gradings GROUP BY source").fetchall())
    assert sources == {"live": 1, "regrade": 1}

    # the preview of measuring again says how long, from the stored cells' own time: the
    # regrade's outcomes (the latest) hold none, the run's do
    ahead = orjson.loads(run(project, "--fresh", "--dry-run", "--json").stdout)
    timed = ahead["estimate_time"]
    assert (timed["known_cells"], timed["unknown_cells"]) == (12, 0) and timed["cell_seconds"] > 0, timed
    said = " ".join(run(project, "--fresh", "--dry-run").stdout.split())
    assert "estimated time: ~" in said and "of cells (each setup's stored cells' mean)" in said, said
    fresh = run(project, "--fresh", "--yes")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "12 session(s) started" in fresh.stdout
    assert counts(project) == (24, 36)  # measured again; nothing deleted
    compared = benchtape("compare", "base", "--json", cwd=project)
    table = orjson.loads(compared.stdout)
    assert [r["label"] for r in table["ranked"]] == ["mock@latest scripted"] and [r["label"] for r in table["controls"]] == ["mock@latest noop"]  # the no-op is a control, never ranked
    assert table["ranked"][0]["cells"] == 6 and table["ranked"][0]["cost_per_cell"] == 0.0  # the mock spends nothing: known, not unknown


def test_the_spend_line_says_unknown_when_no_cell_has_an_estimate_and_a_floor_when_some_do():
    """`at least $0.0000` read as free when nothing was known; a partial estimate is a floor."""
    from benchtape.render_evaluation import spend

    why = {"claude-code@latest sonnet-4.6/medium": "no stored measurement of this setup to estimate from"}
    none = {"usd": 0.0, "floor": True, "known_cells": 0, "unknown_cells": 9, "why_unknown": why}
    assert spend(none) == f"unknown: none of the 9 cell(s) has an estimate (claude-code@latest sonnet-4.6/medium: {why['claude-code@latest sonnet-4.6/medium']})"
    some = {**none, "usd": 0.12, "known_cells": 3}
    assert spend(some).startswith("at least $0.1200 — a floor: 9 cell(s) have no estimate (")
    assert spend({"usd": 0.0, "floor": False, "known_cells": 12, "unknown_cells": 0, "why_unknown": {}}) == "$0.0000 over 12 cell(s)"


def test_the_preview_writes_nothing_and_without_a_terminal_consent_is_yes(project):
    store = project / ".benchtape" / "benchtape.db"
    out = run(project, "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "would run 12 cell(s); 0 measured cell(s)" in out.stdout and "estimated spend: $0.0000 over 12 cell(s)" in out.stdout
    assert "estimated time: unknown: no setup has a stored cell to time from" in " ".join(out.stdout.split())
    assert not store.exists()  # a preview creates no store
    refused = run(project)
    assert refused.returncode == 2
    assert "consent is --yes" in refused.stderr and "benchtape run base --dry-run" in refused.stderr
    assert not store.exists()  # refused: nothing was written


def test_tasks_fill_one_matrix_across_invocations(project):
    out = run(project, "--task", "fix-add", "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert counts(project) == (4, 4)
    compared = orjson.loads(benchtape("compare", "base", "--json", cwd=project).stdout)
    assert compared["ranked"] == [] and {r["fill"] for r in compared["unranked"]} == {"benchtape run base --task fix-sub --task explain"}
    preview = orjson.loads(run(project, "--dry-run", "--json").stdout)
    assert (preview["measured"], preview["to_run"]) == (4, 8) and counts(project) == (4, 4)  # a preview of a store reads it, never writes
    write(project / ".benchtape" / "evaluations" / "other.yaml", EVALUATION)
    other = orjson.loads(benchtape("run", "other", "--task", "fix-add", "--dry-run", "--json", cwd=project).stdout)
    assert (other["measured"], other["to_run"]) == (0, 4)  # reuse is per evaluation, as `compare other` reads it
    out = run(project, "--yes")
    assert "8 session(s) started, 8 cell(s) measured now, 4 re-graded" in out.stdout
    compared = orjson.loads(benchtape("compare", "base", "--json", cwd=project).stdout)
    assert len(compared["ranked"]) == 1 and len(compared["controls"]) == 1 and compared["unranked"] == []  # the no-op: a control


def test_the_commands_it_prints_run_as_printed_for_a_file_given_by_path_or_shadowed_by_a_folder(project):
    """An evaluation outside .benchtape/evaluations/ (run by its path), or one whose name a
    folder here shadows (`run NAME` reads the folder as a bench), is named by its path in the
    commands benchtape suggests: `validate`'s next step and `compare`'s fill line. Both said the
    bare name, which `run` then refused."""
    env = {"XDG_CONFIG_HOME": str(project / "xdg")}
    write(project / "ev.yaml", EVALUATION)
    hint = benchtape("evaluation", "validate", "ev.yaml", cwd=project, env=env)
    assert hint.returncode == 0 and "`benchtape run ev.yaml --dry-run` does" in hint.stdout
    out = benchtape("run", "ev.yaml", "--task", "fix-add", "--yes", cwd=project, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    compared = orjson.loads(benchtape("compare", "ev", "--json", cwd=project, env=env).stdout)
    [fill] = {r["fill"] for r in compared["unranked"]}
    assert fill == "benchtape run ev.yaml --task fix-sub --task explain"
    assert benchtape(*fill.split()[1:], "--dry-run", cwd=project, env=env).returncode == 0
    (project / "base").mkdir()  # a folder named like the evaluation in .benchtape/evaluations/
    hint = benchtape("evaluation", "validate", "base", cwd=project, env=env)
    assert "`benchtape run .benchtape/evaluations/base.yaml --dry-run` does" in hint.stdout
    out = run(project, "--dry-run")
    assert out.returncode == 2 and "base is a folder here, so `run` reads it as a bench" in out.stderr and "benchtape run .benchtape/evaluations/base.yaml --dry-run" in out.stderr


def test_an_evaluation_flag_with_a_name_no_project_file_has_says_so_and_a_bad_level_is_refused_everywhere(tmp_path):
    """`run baseline --dry-run` where there are no evaluations said "none was named"; it names
    the missing evaluation and how to create it. `--sandbox` with no such level was exit 2 for
    `run` but "ok" (exit 0) for `preflight`: both refuse it now, from one check."""
    write(tmp_path / "calc" / "calc.py", CALC)
    write(tmp_path / "madbench.yaml", BENCH)
    out = benchtape("run", "baseline", "--dry-run", cwd=tmp_path)
    assert out.returncode == 2 and "no evaluation named 'baseline'" in out.stderr and "benchtape evaluation create baseline" in out.stderr
    for command in ("run", "preflight"):
        out = benchtape(command, "madbench.yaml", "--sandbox", "bogus", cwd=tmp_path)
        assert out.returncode == 2 and "--sandbox 'bogus' is not a level" in out.stderr, (command, out.stdout, out.stderr)


def test_flags_are_refused_where_they_do_not_apply(project):
    out = run(project, "--repeat", "3")
    assert out.returncode == 2 and "--repeat does not apply to an evaluation" in out.stderr and "attempts:" in out.stderr
    out = benchtape("run", "madbench.yaml", "--fresh", cwd=project)
    assert out.returncode == 2 and "--fresh applies to an evaluation" in out.stderr
    # a folder with nothing to run says what it lacks (a Harbor task among it), not that --yes is an evaluation's
    (project / "empty").mkdir()
    for flags in (["--harness", "oracle", "--yes"], ["--harness", "oracle"]):
        out = benchtape("run", "empty", *flags, cwd=project)
        assert out.returncode == 2 and "holds no *.yaml bench file, no case directory (NAME/assert.yaml) and no Harbor task (NAME/task.toml)" in out.stderr, (flags, out.stderr)
    out = run(project, "--task", "fix-ad", "--dry-run")
    assert out.returncode == 2 and "did you mean 'fix-add'?" in out.stderr
    out = benchtape("run", "bse", "--dry-run", cwd=project)
    assert out.returncode == 2 and "no evaluation named 'bse'" in out.stderr and "did you mean 'base'?" in out.stderr


SLOW = """
description: slow cells
harness: mock
defaults: {sandbox: home, interactive: false, timeout: 60s}
scenarios:
  - name: one
    prompt: "p"
    testdata: calc
    checks: [{type: contains, value: "done"}]
    mock: {steps: [{sleep: 1}, {say: done}]}
  - name: two
    prompt: "p"
    testdata: calc
    checks: [{type: contains, value: "done"}]
    mock: {steps: [{sleep: 1}, {say: done}]}
"""


def test_ctrl_c_once_stops_scheduling_and_keeps_what_finished(project):
    write(project / "madbench.yaml", SLOW)  # 2 tasks × 2 setups × 2 attempts = 8 cells of 1 s, one at a time
    proc = popen("run", "base", "--yes", "--concurrency", "1", cwd=project)
    deadline = time.monotonic() + 60
    while counts_or_zero(project)[1] < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "stopping: nothing more is scheduled" in err
    sessions, outcomes = counts(project)
    assert 1 <= sessions < 8 and outcomes == sessions  # the cell in flight finished and was graded; the rest never started
    assert set(latest_outcomes(project).values()) <= {"passed", "failed"}
    assert "were not started; what finished is kept" in out
    again = run(project, "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{8 - sessions} session(s) started, {8 - sessions} cell(s) measured now, {sessions} re-graded" in again.stdout


def counts_or_zero(project: Path) -> tuple[int, int]:
    try:
        return counts(project)
    except sqlite3.Error:
        return 0, 0


def test_ctrl_c_twice_stops_the_cells_in_flight_too(project):
    write(project / "madbench.yaml", SLOW.replace("sleep: 1", "sleep: 60"))
    proc = popen("run", "base", "--yes", "--concurrency", "1", cwd=project)
    deadline = time.monotonic() + 60
    while counts_or_zero(project)[0] < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the agent is running
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "stopping the 1 cell(s) in flight" in err
    assert counts(project) == (1, 1)
    with db(project) as c:
        (data,) = c.execute("SELECT json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM outcomes o").fetchone()
    outcome = orjson.loads(data)
    assert outcome["outcome"] == "infrastructure_error" and "interrupted" in outcome["reason"]  # an attempt, not the agent's failure


@pytest.mark.parametrize("answer", ["n", "y"])
def test_a_terminal_is_asked_before_anything_runs(project, answer):
    """A real pseudo-terminal: the preview, then the question; only `y` runs."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", "base", "--task", "explain"], cwd=project, stdin=secondary, stdout=secondary, stderr=secondary, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    os.close(secondary)
    seen = b""
    try:
        while b"[y/N]" not in seen:
            ready, _, _ = select.select([main], [], [], 20)
            assert ready, seen.decode(errors="replace")
            seen += os.read(main, 4096)
        os.write(main, answer.encode() + b"\r")
        while proc.poll() is None:
            if select.select([main], [], [], 0.5)[0]:
                try:
                    seen += os.read(main, 4096)
                except OSError:
                    break
    finally:
        proc.wait(timeout=60)
        os.close(main)
    text = seen.decode(errors="replace")
    assert "would run 4 cell(s)" in text and "run 4 cell(s)? [y/N]" in text
    if answer == "n":
        assert proc.returncode == 0 and "nothing was run" in text
        assert not (project / ".benchtape" / "benchtape.db").exists()
    else:
        assert proc.returncode == 0 and "4 session(s) started" in text, text
        assert counts(project) == (4, 4)
