"""An import that fails part-way through a file, for the tests of what such a failure leaves."""

from __future__ import annotations

from typing import Any, Callable, Iterator


def lines_failing_at(n: int) -> Callable[[Any], Iterator[Any]]:
    """`Transcript.lines` as it is, but the disk goes away at its n-th line (set it with monkeypatch)."""
    from benchtape.adapters import transcripts

    real = transcripts.Transcript.lines

    def failing(self: Any) -> Iterator[Any]:
        for i, item in enumerate(real(self)):
            if i == n:
                raise OSError("the disk went away")
            yield item

    return failing
