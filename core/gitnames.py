"""Path names as git writes them in a patch: C-quoted when they hold a quote, a backslash, a
control or a non-ASCII byte, `a/`/`b/`-prefixed, `/dev/null` for a side that does not exist.
One reading for everyone who reads a patch's names (the guard, the scripted solver)."""

from __future__ import annotations

_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13, ord('"'): 34, ord("\\"): 92}


def unquote(data: bytes) -> tuple[str, bytes] | None:
    """A C-quoted name at the start of `data` (git's quote_c_style) → (the name, what follows);
    None when `data` does not start with a well-formed quoted name."""
    if not data.startswith(b'"'):
        return None
    out = bytearray()
    i = 1
    while i < len(data):
        c = data[i]
        if c == ord('"'):
            return bytes(out).decode("utf-8", "replace"), data[i + 1 :]
        if c == ord("\\") and i + 1 < len(data):
            n = data[i + 1]
            if n in _ESCAPES:
                out.append(_ESCAPES[n])
                i += 2
                continue
            octal = data[i + 1 : i + 4]
            if len(octal) == 3 and all(ord("0") <= d <= ord("7") for d in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            return None
        out.append(c)
        i += 1
    return None


def one_name(data: bytes, *, tab_ends: bool) -> str | None:
    quoted = unquote(data)
    if quoted is not None:
        return quoted[0]
    if tab_ends:  # git ends a `---`/`+++` name holding a space with a tab (and a timestamp may follow one)
        data = data.split(b"\t", 1)[0]
    return data.decode("utf-8", "replace") or None


def strip_prefix(name: str | None) -> str | None:
    if name is None or name == "/dev/null":
        return name
    return name[2:] if name[:2] in ("a/", "b/") else name
