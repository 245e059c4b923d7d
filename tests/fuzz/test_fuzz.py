"""The short fuzz `make test` runs (issue 15): a hypothesis-generated corpus of mutated bench and
Eval files, transcript lines and crafted snapshot tars, each input run in a worker process with
a time and an address-space limit. None may give a traceback, hang, run out of memory, crash the
worker or escape a restore. `make fuzz` runs the long one and prints the same figures."""

from __future__ import annotations

import pytest
from corpus import corpus
from fuzzkit import run

SEED = 15  # fixed: the short run is the same corpus every time; `make fuzz` draws a new seed


@pytest.mark.xdist_group("fuzz")
def test_short_fuzz_finds_no_traceback_hang_or_escape():
    figures = run(corpus(60, 80, 80, SEED), time_limit=20.0, mem_bytes=2 << 30)
    print(figures.report(f"short fuzz (seed {SEED})"))
    assert sum(figures.inputs.values()) >= 200
    assert figures.bad == 0 and figures.count("unclear") == 0, figures.report("short fuzz")
    assert figures.count("ok", "bench") > 0 and figures.count("refused", "bench") > 0  # the corpus reaches both sides
    assert figures.count("refused", "tar") > 0 and figures.count("ok", "lines") > 0


@pytest.mark.xdist_group("fuzz")
def test_short_fuzz_of_hostile_task_folders_and_repositories():
    """Issue 44's generators: Harbor task folders (wrong task.toml values, links out of the
    folder, hostile reward files) and repositories with hostile file names. Before the fixes
    this corpus found non-finite rewards, rewards read through links, tracebacks on deep or
    non-UTF-8 task.toml, and changed paths the guard missed."""
    figures = run(corpus(0, 0, 0, SEED, n_harbor=60, n_repo=15), time_limit=20.0, mem_bytes=2 << 30)
    print(figures.report(f"short fuzz of task folders and repositories (seed {SEED})"))
    assert figures.bad == 0 and figures.count("unclear") == 0, figures.report("short fuzz")
    assert figures.count("refused", "harbor") > 0 and figures.count("ok", "harbor") > 0 and figures.count("ok", "repo") > 0


def test_make_fuzz_starts_from_a_clean_environment():
    """`make fuzz` runs run_fuzz.py as a script, without pytest's sys.path: its imports (the
    corpus, and realdatakit beside the suite) must resolve on their own (they once did not)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent / "run_fuzz.py"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=env, cwd=script.parents[2], timeout=60)
    assert out.returncode == 0 and "--inputs" in out.stdout, out.stderr


@pytest.mark.xdist_group("fuzz")
def test_short_viewer_fuzz_finds_no_5xx_bypass_traversal_or_markup():
    """A real `benchtape view` over a store with a script in every field, asked hostile paths,
    query values and Host headers (issue 44: out-of-range limits and dates, and a 5,000
    character name, were 500s with tracebacks)."""
    from viewer_fuzz import run_viewer_fuzz

    figures = run_viewer_fuzz(40, SEED, time_limit=20.0, budget_s=240.0)
    print(figures.report(f"short viewer fuzz (seed {SEED})"))
    assert sum(figures.inputs.values()) >= 140
    assert figures.bad == 0, figures.report("short viewer fuzz")
    assert figures.count("ok", "v-xss") > 0 and figures.count("refused", "v-host") > 0 and figures.count("refused", "v-query") > 0
