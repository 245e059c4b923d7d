"""What benchtape knows and can serve: the check catalog (`benchtape checks`), scripts
and the scripted model server (`benchtape model serve`, `benchtape script`), the environment
that points a real harness at it.
"""

from __future__ import annotations

from benchtape.adapters.endpoints import CODEX_KEY_ENV, SCRIPTED_KEY, claude_env, codex_config
from benchtape.adapters.gemini_cli import SCRIPTED_MODEL as GEMINI_MODEL
from benchtape.adapters.gemini_cli import SETTINGS as GEMINI_SETTINGS
from benchtape.checks.registry import ALIASES, REFUSED, CheckConfigError, CheckInfo, catalog, lookup
from benchtape.models.from_session import script_of
from benchtape.models.server import serve
from benchtape.models.tools import unmapped_for_codex
from benchtape.spec.script import load_script, script_from

__all__ = [
    "ALIASES",
    "CODEX_KEY_ENV",
    "CheckConfigError",
    "CheckInfo",
    "GEMINI_MODEL",
    "GEMINI_SETTINGS",
    "REFUSED",
    "SCRIPTED_KEY",
    "catalog",
    "claude_env",
    "codex_config",
    "load_script",
    "lookup",
    "script_from",
    "script_of",
    "serve",
    "unmapped_for_codex",
]
