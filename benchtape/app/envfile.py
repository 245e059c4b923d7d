"""`.env` loading, as madbench does it: `./.env` by default, `--env-file FILE` instead (a file
that is not there is an error), `--no-env` for neither.

Values go into this process's environment before anything else reads it, and never over a
variable already set (the shell's value wins, as with madbench's dotenv). From there they are
the host environment in every respect, redaction included: a value whose name says secret
(`*_API_KEY`, `*_TOKEN`, …) or that has a credential's shape is redacted from everything
benchtape stores or writes, exactly as if it had been exported in the shell.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from benchtape.core.errors import BadInput

DEFAULT = Path(".env")
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse(text: str, file: str) -> dict[str, str]:
    """`NAME=VALUE` lines (`export NAME=VALUE` too); `#` comments and blank lines ignored; a
    value in double quotes takes \\n-style escapes, in single quotes is literal, unquoted ends
    at ` #`. Anything else is refused, naming the line."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        m = _LINE.match(raw)
        if m is None:
            raise BadInput(f"not a NAME=VALUE line: {raw.strip()[:80]!r}", file=file, line=i, fix="write `NAME=value` (or `export NAME=value`); comments start with #")
        name, value = m.group(1), m.group(2)
        start = i
        if value[:1] in ('"', "'"):
            quote = value[0]
            body = value[1:]
            closed = _split_closed(body, quote)
            while closed is None:  # a quoted value may span lines (a key file)
                if i >= len(lines):
                    raise BadInput(f"{name}: the {quote} quote opened here is never closed", file=file, line=start, fix=f"close the value with {quote}")
                body += "\n" + lines[i]
                i += 1
                closed = _split_closed(body, quote)
            body, rest = closed
            if rest.strip() and not rest.strip().startswith("#"):
                raise BadInput(f"{name}: text after the closing quote: {rest.strip()[:40]!r}", file=file, line=start, fix="put a comment after ` #`, or quote the whole value")
            value = _unescape(body) if quote == '"' else body
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].rstrip()
        out[name] = value
    return out


def _find_close(body: str) -> int | None:
    escaped = False
    for j, c in enumerate(body):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            return j
    return None


def _split_closed(body: str, quote: str) -> tuple[str, str] | None:
    """(the value inside the quotes, what follows the closing one), None while it is open."""
    at = body.find("'") if quote == "'" else _find_close(body)
    if at is None or at < 0:
        return None
    return body[:at], body[at + 1 :]


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


def load(env_file: Path | None = None, no_env: bool = False) -> dict[str, str]:
    """Load the `.env` the flags name into os.environ (never over a variable already set);
    returns what was set. `env_file` must exist; the default `./.env` may be absent."""
    if no_env:
        if env_file is not None:
            raise BadInput("--env-file and --no-env contradict each other", fix="keep one: --env-file FILE to read it, --no-env to read no .env")
        return {}
    path = env_file if env_file is not None else DEFAULT
    if not path.exists():
        if env_file is not None:
            raise BadInput("--env-file: no such file", file=str(path), fix="name an existing dotenv file, or drop --env-file (./.env is read when it exists)")
        return {}
    if not path.is_file():
        raise BadInput("the env file is not a regular file", file=str(path), fix="name a dotenv file (NAME=value lines)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"the env file cannot be read: {exc}", file=str(path)) from None
    values = parse(text, str(path))
    added = {k: v for k, v in values.items() if k not in os.environ}
    os.environ.update(added)
    return added
