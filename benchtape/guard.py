"""Every command runs guarded: a benchtape error becomes its message and exit code, never a traceback.

`command` is the one wrapper every CLI command goes through: it owns the guard, turns the
returned number into the exit code and, for a command that names one, opens the store `--db`
names (read-only for a browsing command) and closes it after. What is left to a command is
three steps: parse its options, call the app layer, hand the result to a renderer.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from benchtape.app.stores import StoreMode
    from benchtape.core.errors import BadInput


def command(*, store: StoreMode | None = None) -> Callable[[Callable[..., int]], Callable[..., None]]:
    """A typer command from a function that returns its exit code.

    With `store=`, the function takes a `store` parameter (hidden from the command line) and a
    `db` option: the store is opened for that mode ("read": an existing file, read-only;
    "existing": an existing file, to write; "write": created when missing) inside the guard, so
    a path that is no store is exit 2 like every other bad input, and closed when it returns."""

    def wrap(fn: Callable[..., int]) -> Callable[..., None]:
        sig = inspect.signature(fn)
        if store is not None and ("store" not in sig.parameters or "db" not in sig.parameters):
            raise TypeError(f"{fn.__qualname__}: a command with store={store!r} takes `store` and `db`")
        # typer reads the signature: the store is ours to pass, and the annotations are resolved
        # here (the modules use `from __future__ import annotations`, and `store`'s type is only
        # imported for the type checker)
        shown = [p.replace(annotation=_resolved(p.annotation, fn)) for p in sig.parameters.values() if store is None or p.name != "store"]

        @functools.wraps(fn)
        def run(**kwargs: Any) -> None:
            def body() -> int:
                from benchtape.core.gcpause import start_up_done

                if store is None:
                    start_up_done()
                    return fn(**kwargs)
                from benchtape.app.stores import open_for

                opened = open_for(kwargs.get("db"), store)
                start_up_done()  # the store's modules are loaded: the start-up is over
                try:
                    return fn(store=opened, **kwargs)
                finally:
                    opened.close()

            guarded(body)

        del run.__wrapped__  # typer and typing read `run`'s own signature, not fn's
        run.__signature__ = sig.replace(parameters=shown, return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in shown}
        return run

    return wrap


def _resolved(annotation: Any, fn: Callable[..., Any]) -> Any:
    return eval(annotation, fn.__globals__) if isinstance(annotation, str) else annotation  # noqa: S307 - the module's own annotation text


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body; an error meant for the user is printed and becomes its exit code."""
    import typer

    from benchtape.core.errors import BenchtapeError, ExitCode
    from benchtape.core.termtext import printable

    try:
        code = fn()
    except BenchtapeError as exc:
        text = printable(exc.render(), one_line=False)  # it may name a file of someone else's, control characters and all
        print(text if exc.exit_code != ExitCode.BAD_INPUT else f"error: {text}", file=sys.stderr)
        code = exc.exit_code
    except Exception as exc:
        damage = _sqlite_damage(exc)
        if damage is None:
            raise
        print(f"error: {damage.render()}", file=sys.stderr)
        code = ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted: what was recorded stays recorded", file=sys.stderr)
        code = ExitCode.INTERRUPTED
    raise typer.Exit(int(code))


def _sqlite_damage(exc: Exception) -> BadInput | None:
    """An error SQLite raised that the store did not turn into its message (its reads and
    writes do, naming the file): the user's message all the same, never a traceback. None
    for any other error (a bug is a bug: it stays a traceback)."""
    sqlite3 = sys.modules.get("sqlite3")  # never imported here: a command that has no store never loaded it
    if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.IntegrityError):
        return None
    from benchtape.core.errors import BadInput

    return BadInput(
        f"the benchtape store could not be read or written ({exc})",
        fix="check it with `benchtape verify` (pass the same --db); restore it from a copy if it is damaged",
    )
