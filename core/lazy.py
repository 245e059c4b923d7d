"""A module whose names are imported on first use (PEP 562's module `__getattr__`).

For the doors that only re-export (benchtape.app.sessions, benchtape.app.gradings): a command
that asks one name loads that name's module, not every room the door leads to. The type
checker reads the same names from the door's `if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def names_from(namespace: dict[str, Any], table: dict[str, tuple[str, str]]) -> Callable[[str], Any]:
    """The `__getattr__` of the module whose globals are `namespace`: `table` maps each name
    to (module, attribute); a name is imported once, then kept in the module's globals."""
    module_name = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        found = table.get(name)
        if found is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(import_module(found[0]), found[1])
        namespace[name] = value
        return value

    return __getattr__
