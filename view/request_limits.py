"""The bounds on what a request may ask of the viewer: a query value out of range or a name no
file or id could have is the viewer's 400 naming the parameter and the fix, never a traceback
from deep below (a limit past SQLite's integers, a date past Python's calendar, a 5,000
character evaluation name that the file system refuses)."""

from __future__ import annotations

from collections.abc import Mapping

from benchtape.core.errors import BadInput

MAX_LIMIT = 100_000  # rows a page may ask for at once; limit=0 asks for all
MAX_NAME = 255  # a handle or an evaluation name: a file name's length at most
MAX_POSITION = 10**12  # a line number past any store's


class BadParameter(BadInput):
    """A request's parameter the viewer cannot take (HTTP 400, not 404: nothing was looked up)."""


def check_names(params: Mapping[str, str]) -> None:
    """A path's handle or name longer than any file's or id's."""
    for key in ("handle", "name"):
        value = params.get(key)
        if value is not None and len(value) > MAX_NAME:
            raise BadParameter(f"the {key} is {len(value)} characters long (at most {MAX_NAME})", fix=f"a {key} from the list pages (/, /runs, /evaluations)")
