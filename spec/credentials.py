"""Credential routes per tool (berbench §4.2): which variables and files a tool may take its
credentials from, and which of them are present — by NAME only, never a value.

Only the selected tool's route is forwarded to its agent, so a Codex cell never sees an
Anthropic key. A user's hint (`credentials.<tool>.env` / `.file` in `kind: UserConfig`) may
only pick a route the tool already accepts; a hint naming another is refused by name.
Nothing here reads a secret's content: presence is "the variable is set and non-empty" or
"the file exists".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from benchtape.core.errors import BadInput


@dataclass(frozen=True)
class Route:
    kind: str  # env, file
    name: str  # a variable name, or a path relative to HOME


ROUTES: dict[str, tuple[Route, ...]] = {
    "claude-code": (Route("env", "ANTHROPIC_API_KEY"), Route("env", "CLAUDE_CODE_OAUTH_TOKEN"), Route("file", ".claude/.credentials.json")),
    "codex": (Route("env", "OPENAI_API_KEY"), Route("file", ".codex/auth.json")),
    "gemini-cli": (Route("env", "GEMINI_API_KEY"), Route("env", "GOOGLE_API_KEY")),
    "qwen-code": (Route("env", "OPENAI_API_KEY"),),
    "mini-swe-agent": (Route("env", "OPENAI_API_KEY"),),
    "aider": (Route("env", "OPENAI_API_KEY"), Route("env", "ANTHROPIC_API_KEY")),
    "opencode": (Route("env", "ANTHROPIC_API_KEY"), Route("env", "OPENAI_API_KEY"), Route("env", "GOOGLE_GENERATIVE_AI_API_KEY"), Route("env", "OPENROUTER_API_KEY")),
    "copilot": (Route("env", "COPILOT_GITHUB_TOKEN"),),
    "github": (Route("env", "GITHUB_TOKEN"), Route("env", "GH_TOKEN")),
    "gitlab": (Route("env", "GITLAB_TOKEN"),),
    "mock": (),  # the offline harness needs none
}


@dataclass(frozen=True)
class Presence:
    """A tool's routes and which are present (names only: safe to print, store and report)."""

    tool: str
    routes: tuple[Route, ...]
    present: tuple[Route, ...]
    preferred: Route | None = None

    @property
    def needed(self) -> bool:
        return bool(self.routes)

    @property
    def ok(self) -> bool:
        return not self.routes or bool(self.present)

    def to_dict(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "routes": [f"{r.kind}:{r.name}" for r in self.routes],
            "present": [f"{r.kind}:{r.name}" for r in self.present],
            "preferred": f"{self.preferred.kind}:{self.preferred.name}" if self.preferred else None,
            "ok": self.ok,
        }


def routes_of(tool: str) -> tuple[Route, ...]:
    """The routes a tool (by harness name) accepts; an unknown tool has none to offer."""
    return ROUTES.get(tool, ())


def presence(tool: str, env: Mapping[str, str] | None = None, home: Path | None = None, hint: Mapping[str, str] | None = None) -> Presence:
    """Which of `tool`'s routes are present here; a hint (UserConfig) is put first when present."""
    env = os.environ if env is None else env
    home = home if home is not None else Path.home()
    routes = routes_of(tool)
    preferred = _hinted(tool, routes, hint or {})
    present = tuple(r for r in routes if (env.get(r.name) if r.kind == "env" else (home / r.name).is_file()))
    if preferred is not None and preferred in present:
        present = (preferred, *(r for r in present if r != preferred))
    return Presence(tool, routes, present, preferred)


def forwarded_names(tool: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The variables forwarded to `tool`'s agent: its own env routes that are set, no other tool's."""
    env = os.environ if env is None else env
    return [r.name for r in routes_of(tool) if r.kind == "env" and env.get(r.name)]


def _hinted(tool: str, routes: tuple[Route, ...], hint: Mapping[str, str]) -> Route | None:
    for kind in ("env", "file"):
        name = hint.get(kind)
        if not name:
            continue
        name = name.removeprefix("~/") if kind == "file" else name
        route = Route(kind, name)
        if route not in routes:
            known = ", ".join(f"{r.kind}: {r.name}" for r in routes) or "none"
            raise BadInput(f"the credential hint for {tool} names {kind} {name!r}, a route {tool} does not accept", fix=f"pick one of its routes ({known})")
        return route
    return None
