"""What browsing the store asks: pick sessions and runs, resolve a handle, show one session
(timeline, changes, verdicts), page its raw lines, query it, search it.

One module for the CLI's read commands (`sessions`, `show`, `query`, `report html`) and the
viewer's pages, so `--json` and `?format=json` are made by the same functions from the same
store view (`BrowsingStore`: a reader cannot append). The queries themselves live in the read
side (benchtape.replay) and the store's browsing SQL (benchtape.store.browse); this is the one
door the front ends use to reach them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchtape.core.lazy import names_from

if TYPE_CHECKING:
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

# Where each name lives; imported on first use, so `benchtape sessions` loads the listing's
# modules and not `show`'s changes, `query`'s JMESPath or the grading behind an outcome.
_FROM = {
    "NoDiff": ("benchtape.replay.changes", "NoDiff"),
    "workspace_changes": ("benchtape.replay.changes", "workspace_changes"),
    "PASSED": ("benchtape.replay.outcomes", "PASSED"),
    "compile_query": ("benchtape.replay.query", "compile_query"),
    "evaluate": ("benchtape.replay.query", "evaluate"),
    "run_query": ("benchtape.replay.query", "run_query"),
    "Selection": ("benchtape.replay.select", "Selection"),
    "resolve": ("benchtape.replay.select", "resolve"),
    "rows": ("benchtape.replay.select", "rows"),
    "sessions": ("benchtape.replay.select", "sessions"),
    "short_handles": ("benchtape.replay.select", "short_handles"),
    "SessionLine": ("benchtape.replay.timeline", "SessionLine"),
    "Shown": ("benchtape.replay.timeline", "Shown"),
    "count_sessions": ("benchtape.replay.timeline", "count_sessions"),
    "lines_of": ("benchtape.replay.timeline", "lines_of"),
    "session_lines": ("benchtape.replay.timeline", "session_lines"),
    "session_status": ("benchtape.replay.timeline", "session_status"),
    "show": ("benchtape.replay.timeline", "show"),
    "show_document": ("benchtape.replay.timeline", "show_document"),
    "shown_kind": ("benchtape.replay.timeline", "shown_kind"),
    "AGENT_LABELS": ("benchtape.spec.agent_kind", "LABELS"),
    "AGENT_TAGS": ("benchtape.spec.agent_kind", "SHORT"),
    "Filters": ("benchtape.store.browse", "Filters"),
    "Finished": ("benchtape.store.browse", "Finished"),
    "RunLine": ("benchtape.store.browse", "RunLine"),
    "actions_like": ("benchtape.store.browse", "actions_like"),
    "choices": ("benchtape.store.browse", "choices"),
    "data_version": ("benchtape.store.browse", "data_version"),
    "evaluations": ("benchtape.store.browse", "evaluations"),
    "older_session_ids": ("benchtape.store.browse", "older_session_ids"),
    "pick_sessions": ("benchtape.store.browse", "pick_sessions"),
    "raw_page": ("benchtape.store.browse", "raw_page"),
    "recent_runs": ("benchtape.store.browse", "recent_runs"),
    "dumps": ("benchtape.store.database", "dumps"),
    "BrowsingStore": ("benchtape.store.views", "BrowsingStore"),
}

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


__getattr__ = names_from(globals(), _FROM)
