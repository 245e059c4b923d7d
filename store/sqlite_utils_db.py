"""sqlite-utils' Database as the store uses it: only what runs migrations (and callers that
want its table helpers) imports it, so opening a current store for a read or a write never
loads sqlite-utils.

sqlite-utils imports numpy and pandas when they are installed, only to store their values
(~100 ms of CPU, and numpy's threads, in every process that makes or migrates a store). The
command line's own process hands it none (benchtape/cli.py says so through
`core/process_role.py`), so there they are hidden from its import: a later import
of either elsewhere is untouched. Any other process (the Python API beside a user's own use of
sqlite-utils) imports it as it is.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

from benchtape.core.process_role import is_command_line_process
from benchtape.store.sqlite_io import run_script

ARRAY_LIBRARIES = ("numpy", "pandas")


def _import_sqlite_utils() -> ModuleType:
    hidden = [name for name in ARRAY_LIBRARIES if name not in sys.modules] if is_command_line_process() and "sqlite_utils" not in sys.modules else []
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it raises ImportError, which sqlite-utils expects
    try:
        import sqlite_utils
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return sqlite_utils


if TYPE_CHECKING:
    import sqlite_utils
else:
    sqlite_utils = _import_sqlite_utils()


class Database(sqlite_utils.Database):
    """sqlite-utils' Database whose executescript runs inside the caller's transaction (the
    sqlite3 module's own COMMITs first), so a migration is all or nothing."""

    def executescript(self, sql: str) -> None:  # type: ignore[override]
        run_script(self.conn, sql)
