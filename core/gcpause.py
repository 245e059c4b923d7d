"""Pausing Python's cyclic garbage collector while a computation builds a large structure that
stays alive until it is done (compare's 10,000 measurements, their rows, pairs and matrix).

Reference counting frees everything short-lived as before; what the pause saves is the cycle
collector's passes, each of which walks every young container and, every so often, the whole
heap, only to find nothing to free: ~0.1 s of a 10,000-cell `compare` (benchmarks/compare.py).
Cycles made meanwhile are collected after, once the collector runs again.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    """The collector off inside, back to how it was after (so pauses nest, and a caller that
    had it off keeps it off); thread-safe in effect: whoever found it on turns it back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


_start_up_pause = False  # True while the pause of `pause_start_up` is in force


def pause_start_up() -> None:
    """The collector off while a command starts: importing typer and the command's modules
    makes tens of thousands of objects that all stay alive, and the collector's passes over them
    find nothing (~4% of `benchtape sessions`). `start_up_done` turns it back on; nothing
    when the collector was off already (whoever turned it off turns it on)."""
    global _start_up_pause
    if gc.isenabled():
        gc.disable()
        _start_up_pause = True


def start_up_done() -> None:
    """The collector back on once a command's body starts, the start-up's objects frozen (moved
    out of the collector's reach: modules, classes and functions live as long as the process,
    and a long command's full passes need not walk them). Idempotent: the CLI calls it again
    as it returns, for a command that ended before its body ran (`--help`, a usage error)."""
    global _start_up_pause
    if _start_up_pause:
        _start_up_pause = False
        gc.freeze()
        gc.enable()
