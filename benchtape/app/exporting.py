"""Exports at the edge: a session's workspace as files (`benchtape export --format workspace`), ATIF
trajectories, Inspect logs and OpenTelemetry traces (benchtape.formats), for the CLI and a notebook alike.
"""

from __future__ import annotations

from benchtape.formats.exports import atif_document, write_atif_file, write_atif_folder, write_inspect_logs, write_otlp
from benchtape.replay.workspace_export import export

__all__ = ["atif_document", "export", "write_atif_file", "write_atif_folder", "write_inspect_logs", "write_otlp"]
