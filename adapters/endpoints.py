"""How each harness is pointed at a model server, with the environment that keeps a run hermetic.

These are the recipes of `spec/real-binaries.md`, verified on Claude Code 2.1.328 and
Codex 0.169.0: Claude Code reads `ANTHROPIC_BASE_URL`; Codex ignores `OPENAI_BASE_URL`
and needs a custom `[model_providers.*]` with `wire_api = "responses"` in
`$CODEX_HOME/config.toml` (the built-in provider first tries WebSockets for seconds).
Both always get a private HOME (and CODEX_HOME), stdin from /dev/null, and no updater:
the interactive Claude Code updater would otherwise run `npm install -g`.
"""

from __future__ import annotations

import os
from pathlib import Path

SCRIPTED = "scripted"  # `--model scripted`: the real binary, this server as its model
SCRIPTED_KEY = "sk-benchtape-scripted"  # any value: the scripted server checks no key
CODEX_KEY_ENV = "BENCHTAPE_MODEL_KEY"
CODEX_PROVIDER = "benchtape"
CODEX_MODEL = "gpt-5.5"  # a slug Codex knows: classic function tools, no fallback-metadata warning


# the scripted server playing a task's reference fix through the harness's own tools (spec/solver.py): all of it, or only its first edit
SOLVER, SOLVER_PARTIAL = "scripted-solver", "scripted-solver-partial"
SCRIPTED_MODELS = frozenset({SCRIPTED, SOLVER, SOLVER_PARTIAL})


def is_scripted(model: str | None) -> bool:
    return model in SCRIPTED_MODELS


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def claude_env(base_url: str, home: Path | str | None = None, *, root: bool | None = None) -> dict[str, str]:
    """The environment that points Claude Code at `base_url` and keeps it from updating or phoning home.

    IS_SANDBOX=1 only as root (where `--permission-mode bypassPermissions` refuses to run without it).
    """
    env = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": SCRIPTED_KEY,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if home is not None:
        env["HOME"] = str(home)
    if running_as_root() if root is None else root:
        env["IS_SANDBOX"] = "1"
    return env


def codex_config(openai_url: str, *, model: str = CODEX_MODEL, extra: str = "") -> str:
    """`$CODEX_HOME/config.toml` for a run against `openai_url` (the server's `/v1` base)."""
    return f'''model = "{model}"
model_provider = "{CODEX_PROVIDER}"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.{CODEX_PROVIDER}]
name = "benchtape scripted model"
base_url = "{openai_url}"
wire_api = "responses"
env_key = "{CODEX_KEY_ENV}"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[analytics]
enabled = false
{extra}'''


def codex_env(codex_home: Path | str, home: Path | str | None = None) -> dict[str, str]:
    env = {"CODEX_HOME": str(codex_home), CODEX_KEY_ENV: SCRIPTED_KEY}
    if home is not None:
        env["HOME"] = str(home)
    return env


def write_codex_home(codex_home: Path, openai_url: str, *, extra: str = "") -> Path:
    """A private CODEX_HOME holding only the config that points Codex at the server."""
    codex_home.mkdir(parents=True, exist_ok=True)
    path = codex_home / "config.toml"
    path.write_text(codex_config(openai_url, extra=extra), encoding="utf-8")
    return path
