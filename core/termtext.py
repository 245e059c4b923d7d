"""Text from someone else's files, made safe to print on a terminal.

A file name, a commit title, a command inferred from test names: each comes from a
repository or a task nobody here wrote, and may hold ESC (`\x1b[2J` clears the screen,
`\x1b]0;…\x07` retitles the window, some terminals answer queries into the shell's input),
other control characters, a newline that forges a line of output, or bidirectional overrides
that show text in an order it is not. Printed, each is escaped the way Python writes it
(`\x1b`, `\n`, `\u202e`): what the user reads is what is there.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = True) -> str:
    """`text` with every control character escaped; `one_line=False` keeps its newlines and
    tabs (a message of several lines), everything else is escaped either way."""
    return (_CONTROL_ONE_LINE if one_line else _CONTROL).sub(_escape, text)


# One character for one: C0 controls (but tab and newline) as their Control Pictures (ESC reads
# ␛), DEL as ␡, C1 controls and bidirectional controls as U+FFFD. For text already laid out in
# columns (a table's cells), where a longer escape would shift what follows.
PICTURES = {
    **{c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),
    **dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A)), 0xFFFD),
}


def pictured(text: str) -> str:
    """`text` with each control character replaced by a visible one of the same width."""
    return text.translate(PICTURES)
