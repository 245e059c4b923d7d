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
