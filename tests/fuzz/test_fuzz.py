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
