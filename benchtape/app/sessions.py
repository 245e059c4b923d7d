"""What browsing the store asks: pick sessions and runs, resolve a handle, show one session
(timeline, changes, verdicts), page its raw lines, query it, search it.

One module for the CLI's read commands (`sessions`, `show`, `query`, `report html`) and the
viewer's pages, so `--json` and `?format=json` are made by the same functions from the same
store view (`BrowsingStore`: a reader cannot append). The queries themselves live in the read
side (benchtape.replay) and the store's browsing SQL (benchtape.store.browse); this is the one
door the front ends use to reach them.
"""

from __future__ import annotations

from benchtape.replay.changes import NoDiff, workspace_changes
from benchtape.replay.outcomes import PASSED
from benchtape.replay.query import compile_query, evaluate, run_query
from benchtape.replay.select import Selection, resolve, rows, sessions, short_handles
from benchtape.replay.timeline import SessionLine, Shown, count_sessions, lines_of, session_lines, session_status, show, show_document, shown_kind
from benchtape.spec.agent_kind import LABELS as AGENT_LABELS
from benchtape.spec.agent_kind import SHORT as AGENT_TAGS
from benchtape.store.browse import Filters, Finished, RunLine, actions_like, choices, data_version, evaluations, older_session_ids, pick_sessions, raw_page, recent_runs
from benchtape.store.database import dumps
from benchtape.store.views import BrowsingStore

__all__ = [
    "AGENT_LABELS",
    "AGENT_TAGS",
    "BrowsingStore",
    "Filters",
    "Finished",
    "NoDiff",
    "PASSED",
    "RunLine",
    "Selection",
    "SessionLine",
    "Shown",
    "actions_like",
    "choices",
    "compile_query",
    "count_sessions",
    "data_version",
    "dumps",
    "evaluate",
    "evaluations",
    "lines_of",
    "older_session_ids",
    "pick_sessions",
    "raw_page",
    "recent_runs",
    "resolve",
    "rows",
    "run_query",
    "session_lines",
    "session_status",
    "shown_kind",
    "sessions",
    "short_handles",
    "show",
    "show_document",
    "workspace_changes",
]
