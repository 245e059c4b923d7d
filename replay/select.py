"""Which stored sessions a read command works on, and reading them one at a time.

Every command that takes an id names it the same way, through `resolve`: a unique id
prefix (any case), `latest`, or for a session `RUN/SCENARIO#N` (the run as a prefix or
`latest`, the scenario by name, the attempt; `#N` may be left out when there is one).
`--session`, `--run`, `--scenario`, `--all` select sets of sessions. Negative-control
sessions (runs of kind `control`, the no-op agent) are left out of a set unless a
command asks for them or names their run or session.

Sessions are streamed, a page of rows and then one session's actions at a time, so
memory stays flat however large the store grows.
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

from benchtape.core.errors import BadInput
from benchtape.store.database import SessionRow

_NOUN = {"sessions": "session", "runs": "run", "gradings": "grading"}
_LIST = {"sessions": "benchtape sessions", "runs": "benchtape sessions", "gradings": "benchtape gradings"}
LATEST = "latest"
from benchtape.core.run_kinds import CONTROL  # noqa: E402 - runs.kind of the negative control
from benchtape.store.views import BrowsingStore

if TYPE_CHECKING:  # a type only: listing sessions needs no domain model
    from benchtape.core.model import Session

SHORTEST = 6  # a listed handle is never shorter than this, so it stays recognisable
LONGEST_PREFIX = 12  # past this a session is listed by its place (RUN/SCENARIO#N) instead
_ATTEMPT = re.compile(r"^(?P<scenario>.*)#(?P<attempt>\d+)$")


@dataclass(frozen=True)
class Selection:
    session: str | None = None
    run: str | None = None
    scenario: str | None = None
    all: bool = False
    controls: bool = False  # include negative-control sessions in a set (a named run or session is always included)

    @property
    def empty(self) -> bool:
        return not (self.session or self.run or self.scenario or self.all)


def resolve(store: BrowsingStore, table: str, handle: str) -> str:
    """The full id a handle names; bad input (exit 2) when it names none or several.

    The one place a user's id becomes an id: every command that takes a run, session or
    grading calls this."""
    noun = _NOUN[table]
    text = handle.strip()
    if text.lower() == LATEST:
        return _latest(store, table)
    if table == "sessions" and "/" in text:
        return _by_position(store, text)
    try:
        found = store.resolve_id(table, text)
    except LookupError as exc:
        shown = ", ".join(exc.args[0][:5])
        raise BadInput(f"{noun} id prefix {handle!r} is ambiguous ({shown}, …)", fix=f"give more characters of the id (`{_LIST[table]}` shows a short handle for each)") from None
    if found is None:
        raise BadInput(f"no {noun} with id {handle!r} in {store.path}", fix=f"list them with `{_LIST[table]}`, or pass the right --db")
    return found


def _latest(store: BrowsingStore, table: str) -> str:
    """The newest run or session that is not the negative control (what a user last ran), or the newest grading."""
    found = store.newest_id(table, not_kind=CONTROL)
    if found is None:
        raise BadInput(f"`latest`: no {_NOUN[table]} is stored in {store.path}", fix="run something first (`benchtape run BENCH`), or pass the right --db")
    return found


def _by_position(store: BrowsingStore, handle: str) -> str:
    """`RUN/SCENARIO#N`: the run's session of that scenario and attempt."""
    run_part, _, rest = handle.partition("/")
    run_id = resolve(store, "runs", run_part)
    m = _ATTEMPT.match(rest)
    scenario, attempt = (m["scenario"], int(m["attempt"])) if m else (rest, None)
    hits = store.sessions_at(run_id, scenario, attempt)
    if len(hits) == 1:
        return hits[0][0]
    if not hits:
        names = store.run_scenarios(run_id)
        want = f"{scenario!r}" + (f" attempt {attempt}" if attempt is not None else "")
        raise BadInput(f"run {run_id} has no session of scenario {want}", fix=f"its scenarios: {', '.join(names) or '(none)'}; write RUN/SCENARIO#N")
    if attempt is not None:  # a reparse keeps the place of the session it re-derives
        raise BadInput(f"{handle!r} names {len(hits)} sessions ({', '.join(i for i, _ in hits[:5])})", fix="give the session's id (`benchtape sessions --run RUN` lists them)")
    attempts = ", ".join(f"#{a}" for _, a in hits[:8])
    alone = [a for _, a in hits if sum(1 for _, b in hits if b == a) == 1]
    if not alone:  # an evaluation's setups share the run, the task and the attempt: no #N names one
        raise BadInput(f"{handle!r} names {len(hits)} sessions, several at each attempt (an evaluation's setups share one): {', '.join(i for i, _ in hits[:5])}", fix="give the session's id (`benchtape sessions --run RUN` lists them)")
    raise BadInput(f"{handle!r} names {len(hits)} sessions (attempts {attempts})", fix=f"add the attempt: {run_part}/{scenario}#{alone[0]}")


def short_handles(store: BrowsingStore, table: str, ids: Iterable[str]) -> dict[str, str]:
    """A short name for each id that `resolve` takes back: its shortest prefix no other id in
    the table shares (at least SHORTEST characters). Sessions started in the same
    millisecond get ids that differ only in their last characters (ULIDs are monotonic), so
    a session whose prefix would be longer than LONGEST_PREFIX is named by its place,
    RUN/SCENARIO#N, when that names it alone (else by its whole id)."""
    if table not in _NOUN:
        raise ValueError(table)
    out = {id_: id_[: max(SHORTEST, _shared(store, table, id_) + 1)] for id_ in ids}
    if table == "sessions":
        places = {i: store.session_row(i) for i, h in out.items() if len(h) > LONGEST_PREFIX}
        runs = short_handles(store, "runs", {row.run_id for row in places.values() if row})
        for id_, row in places.items():
            if row is not None and len(store.sessions_at(row.run_id, row.scenario, row.attempt)) == 1:
                out[id_] = f"{runs[row.run_id]}/{row.scenario}#{row.attempt}"
    return out


def _shared(store: BrowsingStore, table: str, id_: str) -> int:
    """How many leading characters `id_` shares with its nearest neighbour in the table."""
    return max((_common(id_, n) for n in store.neighbour_ids(table, id_) if n), default=0)


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def control_runs(store: BrowsingStore) -> set[str]:
    """The ids of negative-control runs (few: one per `benchtape check`)."""
    return store.run_ids_of_kind(CONTROL)


def rows(store: BrowsingStore, sel: Selection) -> Iterator[SessionRow]:
    """The selected session rows, in creation order, streamed a page at a time."""
    if sel.session:
        sid = resolve(store, "sessions", sel.session)
        yield from store.iter_session_rows(session_ids=[sid])
        return
    run_id = resolve(store, "runs", sel.run) if sel.run else None
    skip = set() if run_id or sel.controls else control_runs(store)
    for row in store.iter_session_rows(run_id=run_id, scenario=sel.scenario):
        if row.run_id not in skip:
            yield row


def rows_by_ids(store: BrowsingStore, ids: list[str], page: int = 500) -> Iterator[SessionRow]:
    """Rows for a known set of ids, a page of ids per query."""
    ordered = sorted(ids)
    for start in range(0, len(ordered), page):
        yield from store.iter_session_rows(session_ids=ordered[start : start + page])


def sessions(store: BrowsingStore, selected: Iterator[SessionRow]) -> Iterator[tuple[SessionRow, Session]]:
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
