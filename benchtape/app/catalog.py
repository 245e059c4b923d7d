"""What benchtape knows and can serve: the check catalog (`benchtape checks`), scripts
and the scripted model server (`benchtape model serve`, `benchtape script`), the environment
that points a real harness at it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchtape.core.lazy import names_from

if TYPE_CHECKING:
    from benchtape.adapters.endpoints import CODEX_KEY_ENV, SCRIPTED_KEY, claude_env, codex_config
    from benchtape.adapters.gemini_cli import SCRIPTED_MODEL as GEMINI_MODEL
    from benchtape.adapters.gemini_cli import SETTINGS as GEMINI_SETTINGS
    from benchtape.checks.registry import ALIASES, REFUSED, CheckConfigError, CheckInfo, catalog, lookup
    from benchtape.models.from_session import script_of
    from benchtape.models.server import serve
    from benchtape.models.tools import unmapped_for_codex
    from benchtape.spec.script import load_script, script_from

# Where each name lives; imported on first use, so `benchtape checks` loads the catalog and
# not the model server or the harnesses' settings.
_FROM = {
    "CODEX_KEY_ENV": ("benchtape.adapters.endpoints", "CODEX_KEY_ENV"),
    "SCRIPTED_KEY": ("benchtape.adapters.endpoints", "SCRIPTED_KEY"),
    "claude_env": ("benchtape.adapters.endpoints", "claude_env"),
    "codex_config": ("benchtape.adapters.endpoints", "codex_config"),
    "GEMINI_MODEL": ("benchtape.adapters.gemini_cli", "SCRIPTED_MODEL"),
    "GEMINI_SETTINGS": ("benchtape.adapters.gemini_cli", "SETTINGS"),
    "ALIASES": ("benchtape.checks.registry", "ALIASES"),
    "REFUSED": ("benchtape.checks.registry", "REFUSED"),
    "CheckConfigError": ("benchtape.checks.registry", "CheckConfigError"),
    "CheckInfo": ("benchtape.checks.registry", "CheckInfo"),
    "catalog": ("benchtape.checks.registry", "catalog"),
    "lookup": ("benchtape.checks.registry", "lookup"),
    "script_of": ("benchtape.models.from_session", "script_of"),
    "serve": ("benchtape.models.server", "serve"),
    "unmapped_for_codex": ("benchtape.models.tools", "unmapped_for_codex"),
    "load_script": ("benchtape.spec.script", "load_script"),
    "script_from": ("benchtape.spec.script", "script_from"),
}

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


__getattr__ = names_from(globals(), _FROM)
