"""Ingesting what was recorded elsewhere or before: import transcripts, reparse a session
from its raw lines, recover what a killed benchtape left, fold a spool of bundles.
"""

from __future__ import annotations

from benchtape.recorder.importer import checked_files, import_checked, import_files, reparse, reparse_report
from benchtape.recorder.recover import sweep
from benchtape.recorder.spool import fold_spooled, spool_folder, spooled

__all__ = ["checked_files", "fold_spooled", "import_checked", "import_files", "reparse", "reparse_report", "spool_folder", "spooled", "sweep"]
