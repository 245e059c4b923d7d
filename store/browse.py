"""The reads of browsing the store (what `benchtape view`'s filters, run panel, raw-lines
page, evaluation list and search ask that no CLI command asks): part of the store's read side,
like `reader`, so every SQL statement benchtape runs is in store/.

Every query runs on the store's read-only connection under its lock and reads its rows to
the end (no cursor is left open between calls: an open read would pin a WAL snapshot, and
the live stream would stop seeing new rows).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchtape.core.run_kinds import CONTROL
from benchtape.core.run_kinds import EVALUATION as RUN_KIND
from benchtape.store.codecs import inflate_raw
from benchtape.store.views import BrowsingStore


@dataclass(frozen=True)
class Filters:
    """What the session list may be narrowed to (every field optional; `before` pages on)."""

    run_id: str | None = None
    scenario: str | None = None
    harness: str | None = None
    model: str | None = None
    bench: str | None = None
    since: float | None = None  # epoch seconds, inclusive
    until: float | None = None  # epoch seconds, exclusive
    controls: bool = False
    before: str | None = None  # a session id: only older sessions (the next page)

    @property
    def sql_only(self) -> bool:
        """Whether the CLI's own `sessions` query names the same sessions (no filter it lacks)."""
        return not (self.harness or self.model or self.bench or self.since or self.until or self.before)


def _rows(store: BrowsingStore, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with store.lock:
        return store.conn.execute(sql, params).fetchall()


def pick_sessions(store: BrowsingStore, f: Filters, limit: int | None) -> list[tuple[str, str]]:
    """(session id, its run's kind), newest first, as `Store.newest_sessions` gives them, with
    the viewer's filters too (a harness, model, bench, a date range, a page's start)."""
    where, params = [], []
    for sql, value in (
        ("s.id < ?", f.before),
        ("s.run_id = ?", f.run_id),
        ("s.scenario = ?", f.scenario),
        ("COALESCE(s.harness, r.harness) = ?", f.harness),
        ("COALESCE(s.model, r.model) = ?", f.model),
        ("r.bench_path = ?", f.bench),
        ("s.started_at >= ?", f.since),
        ("s.started_at < ?", f.until),
    ):
        if value:
            where.append(sql)
            params.append(value)
    if not (f.run_id or f.controls):
        where.append("r.kind IS NOT ?")
        params.append(CONTROL)
    sql = "SELECT s.id, r.kind FROM sessions s JOIN runs r ON r.id = s.run_id" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY s.id DESC"
    if limit:
        sql, params = sql + " LIMIT ?", [*params, int(limit)]
    return [(r[0], r[1]) for r in _rows(store, sql, params)]


@dataclass(frozen=True)
class Choices:
    """The values the list's filters offer, each as stored."""

    benches: list[str]
    harnesses: list[str]
    models: list[str]


def choices(store: BrowsingStore) -> Choices:
    benches = [r[0] for r in _rows(store, "SELECT DISTINCT bench_path FROM runs WHERE bench_path IS NOT NULL ORDER BY bench_path", [])]
    harnesses = [r[0] for r in _rows(store, "SELECT DISTINCT harness FROM sessions WHERE harness IS NOT NULL UNION SELECT DISTINCT harness FROM runs WHERE harness IS NOT NULL ORDER BY 1", [])]
    models = [r[0] for r in _rows(store, "SELECT DISTINCT model FROM sessions WHERE model IS NOT NULL UNION SELECT DISTINCT model FROM runs WHERE model IS NOT NULL ORDER BY 1", [])]
    return Choices(benches, harnesses, models)


# ---------------------------------------------------------------- runs and their progress


@dataclass
class RunLine:
    """A run as the viewer lists it: what it ran and how far it got."""

    id: str
    kind: str
    bench: str | None
    harness: str | None
    model: str | None
    started_at: float
    evaluation: str | None
    sessions: int = 0
    finished: int = 0
    handle: str = ""

    @property
    def running(self) -> int:
        return self.sessions - self.finished

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "running": self.running}


# Whether a session finished is in its action stream. Two cheap ways to know, before walking it:
# its run's own grading (live, or the negative control's) grades a session once its recording
# ended, so a session with verdicts there has finished (read off the verdict sets' key index:
# no action is touched); and `session.finished` is a session's last action but for what is
# appended after it (an evaluation cell's `cell.outcome`), so its last few actions, read
# backwards on the primary key, find it. Only what neither finds is walked back whole.
_GRADED_BY_ITS_RUN = (
    "SELECT DISTINCT v.session_id FROM gradings g JOIN verdict_sets v ON v.grading_id = g.id "
    "WHERE g.run_id = ? AND g.source IN ('live', 'control')"
)
_TAIL = 4
_FINISHED_NEAR_END = (
    "SELECT s.id, EXISTS (SELECT 1 FROM (SELECT kind FROM actions a WHERE a.session_id = s.id ORDER BY a.seq DESC LIMIT "
    f"{_TAIL}) WHERE kind = 'session.finished') FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?))"
)


@dataclass
class Finished:
    """Which sessions of each run have finished, remembered: a `session.finished` is never taken
    back (the log is append-only), so a session found finished is never looked up again, and a
    run whose every session is known finished costs one read of its ids to list again."""

    by_run: dict[str, set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # pages are made on many threads

    def of_run(self, store: BrowsingStore, run_id: str) -> tuple[int, int]:
        """(the run's sessions, how many of them finished)."""
        with self.lock:
            return self._of_run(store, run_id)

    def _of_run(self, store: BrowsingStore, run_id: str) -> tuple[int, int]:
        known = self.by_run.setdefault(run_id, set())
        ids = {r[0] for r in _rows(store, "SELECT id FROM sessions WHERE run_id = ?", [run_id])}
        if not ids <= known:
            known.update(ids & {r[0] for r in _rows(store, _GRADED_BY_ITS_RUN, [run_id])})
        rest = sorted(ids - known)
        if rest:
            for sid, near_end in _rows(store, _FINISHED_NEAR_END, [orjson.dumps(rest).decode()]):
                if near_end or store.finish_status(sid) is not None:  # the full walk back only for the rest
                    known.add(sid)
        return len(ids), len(ids & known)


def recent_runs(store: BrowsingStore, finished: Finished, *, limit: int = 8, before: str | None = None, controls: bool = False, run_id: str | None = None) -> list[RunLine]:
    """The newest runs (ULIDs: newest first by id), each with its sessions and how many finished
    (`run_id`: that run alone)."""
    where, params = [], []
    if run_id:
        where.append("id = ?")
        params.append(run_id)
    elif before:
        where.append("id < ?")
        params.append(before)
    if not (controls or run_id):
        where.append("kind IS NOT ?")
        params.append(CONTROL)
    sql = "SELECT id, kind, bench_path, harness, model, started_at, json_extract(params, '$.evaluation') FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?"
    out = [RunLine(*r) for r in _rows(store, sql, [*params, limit])]
    for run in out:
        run.sessions, run.finished = finished.of_run(store, run.id)
    return out


def evaluations(store: BrowsingStore) -> list[dict[str, Any]]:
    """Every evaluation the store holds runs of, newest first: its name, runs, cells, last run."""
    sql = (
        "SELECT json_extract(r.params, '$.evaluation') AS name, COUNT(DISTINCT r.id), COUNT(s.id), MAX(r.started_at), MAX(r.id) "
        "FROM runs r LEFT JOIN sessions s ON s.run_id = r.id AND s.cell_id IS NOT NULL "
        "WHERE r.kind = ? GROUP BY name ORDER BY MAX(r.started_at) DESC"
    )
    return [{"evaluation": name, "runs": runs, "sessions": sessions, "last_run_at": at, "last_run": last} for name, runs, sessions, at, last in _rows(store, sql, [RUN_KIND]) if name]


# ---------------------------------------------------------------- raw lines, a page at a time


@dataclass
class RawPage:
    first: int  # the number of the first line shown (1-based)
    lines: list[str]
    total: int  # how many lines the session has


def raw_page(store: BrowsingStore, session_id: str, first: int, count: int) -> RawPage:
    """Lines `first`..`first + count - 1` of the session's raw stream. Chunks are zstd streams
    that restart at a `fresh` chunk, so decoding starts at the last fresh chunk at or before
    `first` and stops past the page: a page of a 1 GiB stream reads only its own chunks."""
    heads = _rows(store, "SELECT line_no, lines, fresh FROM raw WHERE session_id = ? ORDER BY line_no", [session_id])
    total = (heads[-1][0] + heads[-1][1] - 1) if heads else 0
    first = max(1, min(first, max(total, 1)))
    start = 0
    for i, (line_no, _lines, fresh) in enumerate(heads):
        if line_no > first:
            break
        if fresh or i == 0:
            start = line_no
    stop = first + count
    rows = _rows(store, "SELECT line_no, lines, fresh, data FROM raw WHERE session_id = ? AND line_no >= ? AND line_no < ? ORDER BY line_no", [session_id, start, stop])
    out: list[str] = []
    numbers = _numbers(rows)
    for number, text in zip(numbers, inflate_raw((lines, fresh, data) for _n, lines, fresh, data in rows)):
        if first <= number < stop:
            out.append(text)
    return RawPage(first, out, total)


def _numbers(rows: list[tuple[Any, ...]]) -> Iterator[int]:
    for line_no, lines, _fresh, _data in rows:
        yield from range(line_no, line_no + lines)


# ---------------------------------------------------------------- changes since a moment


def data_version(store: BrowsingStore) -> int:
    """SQLite's counter of commits by other connections: a hint that something may have changed."""
    with store.lock:
        return int(store.conn.execute("PRAGMA data_version").fetchone()[0])


# ---------------------------------------------------------------- search


def older_session_ids(store: BrowsingStore, before: str | None, *, controls: bool, limit: int) -> list[str]:
    """The ids of the `limit` newest sessions older than `before` (all when None), newest first."""
    where, params = [], []
    if before:
        where.append("s.id < ?")
        params.append(before)
    if not controls:
        where.append("r.kind IS NOT ?")
        params.append(CONTROL)
    sql = "SELECT s.id FROM sessions s JOIN runs r ON r.id = s.run_id" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY s.id DESC LIMIT ?"
    return [r[0] for r in _rows(store, sql, [*params, limit])]


def actions_like(store: BrowsingStore, session_ids: list[str], kinds: list[str], pattern: str) -> list[tuple[str, int, str, str]]:
    """(session id, seq, kind, data JSON) of these sessions' actions of these kinds whose data
    is LIKE `pattern` (escaped by `^`): each session's actions on the primary key's prefix."""
    sql = (
        f"SELECT session_id, seq, kind, data FROM actions WHERE session_id IN ({','.join('?' * len(session_ids))}) "
        f"AND kind IN ({','.join('?' * len(kinds))}) AND data LIKE ? ESCAPE '^'"
    )
    return [(r[0], r[1], r[2], r[3]) for r in _rows(store, sql, [*session_ids, *kinds, pattern])]
