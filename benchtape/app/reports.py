"""Run reports on disk (`benchtape report list|show|compare|trend`, `--report-json`): find,
load, compare and trend them; write a report file atomically.
"""

from __future__ import annotations

from benchtape.replay.history import DEFAULT_DIR, compare, find, folder, reports_in, trend
from benchtape.replay.report import load_report, write_text_atomic

__all__ = ["DEFAULT_DIR", "compare", "find", "folder", "load_report", "reports_in", "trend", "write_text_atomic"]
