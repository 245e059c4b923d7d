"""The terminal console every renderer prints through (rich), in a module of its own so that
`benchtape.render` (and `plain_wanted`, which every command asks) loads rich only when
something is drawn for a person."""

from __future__ import annotations

from typing import Iterable

from rich.console import Console
from rich.segment import Segment

from benchtape.core.termtext import pictured


class SafeConsole(Console):
    """A Console whose text cannot drive the terminal: rich passes ESC and most control
    characters through, and what is printed here (file names, scenario names, an agent's tool
    inputs and output) comes from repositories and sessions nobody here wrote. Each text segment
    has its control characters pictured (core/termtext.py) just before it is written; rich's own
    control segments (cursor moves of a live display) and styles are untouched."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(Segment(pictured(text), style, control) if text and not control else Segment(text, style, control) for text, style, control in buffer)
