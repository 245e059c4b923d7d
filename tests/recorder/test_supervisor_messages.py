"""The supervisor's messages are read by the thread waiting for them (supervisor.Lines): whole
lines, in order, a partial line held until its end arrives, None when none came in time, EOF
after the last."""

from __future__ import annotations

import os

from benchtape.sandbox.supervisor import EOF, Lines


def test_lines_in_order_a_partial_one_held_then_eof():
    r, w = os.pipe()
    lines = Lines(r)
    try:
        os.write(w, b"started 7\nexi")
        assert lines.next(5) == "started 7"
        assert lines.next(0.05) is None  # `exi` is not a line yet
        os.write(w, b"ted {}\n")
        os.close(w)
        assert lines.next(5) == "exited {}"
        assert lines.next(5) == EOF
        assert lines.next(0) == EOF  # and stays so
    finally:
        os.close(r)


def test_nothing_written_is_none_in_time():
    r, w = os.pipe()
    lines = Lines(r)
    try:
        assert lines.next(0.05) is None and lines.next(0) is None
    finally:
        os.close(r)
        os.close(w)
