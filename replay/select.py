"""Which stored sessions a read command works on, and reading them one at a time.

Every replay command (grade, regrade, query, sessions, show) names sessions the same
way: `--session` (a unique id prefix), `--run`, `--scenario`, `--all`. Sessions are
streamed, a page of rows and then one session's actions at a time, so memory stays
flat however large the store grows.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from recorder.errors import BadInput
from recorder.model import Session
from recorder.store import SessionRow, Store

_NOUN = {"sessions": "session", "runs": "run", "gradings": "grading"}


@dataclass(frozen=True)
class Selection:
    session: str | None = None
    run: str | None = None
    scenario: str | None = None
    all: bool = False

    @property
    def empty(self) -> bool:
        return not (self.session or self.run or self.scenario or self.all)


def resolve(store: Store, table: str, prefix: str) -> str:
    """The full id for a unique prefix; bad input (exit 2) when none or several match."""
    noun = _NOUN[table]
    try:
        found = store.resolve_id(table, prefix)
    except LookupError as exc:
        shown = ", ".join(exc.args[0][:5])
        raise BadInput(f"{noun} id prefix {prefix!r} is ambiguous ({shown}, …)", fix="give more characters of the id") from None
    if found is None:
        hint = {"sessions": "benchtape sessions", "runs": "benchtape sessions", "gradings": "benchtape gradings"}[table]
        raise BadInput(f"no {noun} with id {prefix!r} in {store.path}", fix=f"list them with `{hint}`, or pass the right --db")
    return found


def rows(store: Store, sel: Selection) -> Iterator[SessionRow]:
    """The selected session rows, in creation order, streamed a page at a time."""
    if sel.session:
        sid = resolve(store, "sessions", sel.session)
        yield from store.iter_session_rows(session_ids=[sid])
        return
    run_id = resolve(store, "runs", sel.run) if sel.run else None
    yield from store.iter_session_rows(run_id=run_id, scenario=sel.scenario)


def rows_by_ids(store: Store, ids: list[str], page: int = 500) -> Iterator[SessionRow]:
    """Rows for a known set of ids, a page of ids per query."""
    ordered = sorted(ids)
    for start in range(0, len(ordered), page):
        yield from store.iter_session_rows(session_ids=ordered[start : start + page])


def sessions(store: Store, selected: Iterator[SessionRow]) -> Iterator[tuple[SessionRow, Session]]:
    """Each row with its projection, built only when the consumer asks for it."""
    for row in selected:
        yield row, store.load_session(row.id, row)


@contextmanager
def batch_gc(gen0: int = 20_000) -> Iterator[None]:
    """Fewer cyclic-GC passes while streaming sessions: each session allocates hundreds of
    short-lived containers that reference counting frees anyway, so the default gen-0
    threshold (700) spends ~4% of a regrade scanning them. Cycles are still collected."""
    old = gc.get_threshold()
    gc.set_threshold(max(gen0, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
