"""Where Ray's own messages go while benchtape drives a cluster: a file the run names, never
benchtape's output.

A Ray driver prints what the cluster reports (a node's raylet dying, its `[state-dump]` lines,
workers killed) to the driver's stdout through a thread of its own, whatever `log_to_driver`
says: 44 lines of `(raylet)` text landed in a run's table, and before `--json`'s document. The
driver's Python loggers (`ray.*`) go the same way. Both are sent to `ray.log` beside the run's
spool, and the run says where once."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable, TextIO

_lock = threading.Lock()


class RayMessages:
    """Ray's driver-side messages appended to `path` while active (`close` puts Ray's own back)."""

    def __init__(self, ray: Any, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = path.open("a", encoding="utf-8", errors="replace")
        self._handler = logging.FileHandler(path, encoding="utf-8", errors="replace")
        self._handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        self._loggers = [logging.getLogger(name) for name in ("ray", "ray.util", "ray._private")]
        self._propagate = [lg.propagate for lg in self._loggers]
        self._handlers = [list(lg.handlers) for lg in self._loggers]
        for lg in self._loggers:
            lg.handlers = [self._handler]
            lg.propagate = False
        self._module, self._original = _stdstream_printer(ray)
        if self._module is not None:
            self._module.print_to_stdstream = self._print  # what its error listener calls by module name

    def _print(self, data: dict[str, Any], ignore_prefix: bool = False) -> None:
        with _lock:
            for line in data.get("lines") or []:
                self._file.write(f"({data.get('pid', 'ray')}) {line}\n")
            self._file.flush()

    def close(self) -> None:
        if self._module is not None and self._original is not None:
            self._module.print_to_stdstream = self._original
        for lg, propagate, handlers in zip(self._loggers, self._propagate, self._handlers):
            lg.handlers, lg.propagate = handlers, propagate
        self._handler.close()
        with _lock:
            self._file.close()


def _stdstream_printer(ray: Any) -> tuple[Any, Callable[..., None] | None]:
    """Ray's module whose `print_to_stdstream` the driver's listener threads call, if this Ray has it
    (a private name: a Ray without it keeps printing, which costs output, never a run)."""
    module = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(module, "print_to_stdstream", None)
    return (module, original) if callable(original) else (None, None)
