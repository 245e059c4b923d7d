"""Claude Code as users run it: the terminal UI, driven by the recorder (recorder/interactive.py).

Everything here is knowledge of Claude Code 2.1.328's TUI, verified offline
(spec/real-binaries.md §2): the first-run dialogs and the keys that remove each, what the
screen shows when a prompt can be typed or when a permission prompt waits for a person,
where a finished turn is signalled, and how to leave. The adapter only describes; the
recorder runs and types.

The pre-seed is merged into the sandbox HOME after the environment probe and before launch:

| dialog                      | what removes it                                                    |
|-----------------------------|--------------------------------------------------------------------|
| onboarding (exits offline)  | `.claude.json` hasCompletedOnboarding                              |
| trust this folder           | `.claude.json` projects[<root>, <cwd>].hasTrustDialogAccepted       |
| use this API key?           | `.claude.json` customApiKeyResponses.approved: [<key[-20:]>]        |
| bypass-permissions warning  | settings skipDangerousModePermissionPrompt (+ legacy bypassPermissionsModeAccepted) |
| new project MCP server      | settings enableAllProjectMcpServers                                |
| the updater (`npm i -g`!)   | `.claude.json` autoUpdates false, settings env DISABLE_AUTOUPDATER  |

A Stop hook benchtape adds to the sandbox settings appends one JSON line per finished turn
to a file under HOME: the turn-end signal, with the transcript's `turn_duration` record and
the screen as fallbacks.
"""

from __future__ import annotations

from typing import Any, Mapping

from benchtape.adapters.base import Tui

STOP_LOG = ".claude/benchtape/stop.jsonl"  # under HOME; the hook writes it through $HOME, so it works in a container too
STOP_HOOK = 'mkdir -p "$HOME/.claude/benchtape" && { cat; echo; } >> "$HOME/' + STOP_LOG + '"'
# An empty prompt box under a rule, and the mode line beneath it ("bypass permissions on
# (shift+tab to cycle)", "manual mode on · ? for shortcuts").
READY = r"(?ms)^❯[ \u00a0]*$.*?(shift\+tab to cycle|\? for shortcuts)"
# A dialog waiting for a person: a permission prompt ("Do you want to proceed?"), or a
# first-run dialog the pre-seed did not remove (API key, trust, bypass warning).
BLOCKED = r"(?m)(Do you want to [^\n?]*\?|Yes, I trust this folder|Yes, I accept|^\s*❯ 1\. Yes)"
API_KEY_ENV = "ANTHROPIC_API_KEY"
GOODBYE = r"Resume this session with:"  # printed by /exit once the session is written and closed


def seed(env: Mapping[str, str], trusted: list[str], agent_env: bool = False) -> dict[str, dict[str, Any]]:
    """The first-run answers for `.claude.json` and `~/.claude/settings.json`, merged into what
    staging left there (a plugin install writes settings too)."""
    key = env.get(API_KEY_ENV) or ""
    state: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "autoUpdates": False,
        "bypassPermissionsModeAccepted": True,
        "projects": {path: {"hasTrustDialogAccepted": True} for path in trusted},
    }
    if key:
        state["customApiKeyResponses"] = {"approved": [key[-20:]], "rejected": []}
    # in the order 2.1.328 writes the file back (it re-adds skipDangerousModePermissionPrompt
    # last when the session starts): seeded in another, the rewrite showed in `show --diff` as
    # the agent's change to settings.json
    settings = {
        "enableAllProjectMcpServers": True,
        "env": {"DISABLE_AUTOUPDATER": "1"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": STOP_HOOK}]}]},
        "skipDangerousModePermissionPrompt": True,
    }
    files = {".claude.json": state, ".claude/settings.json": settings}
    if agent_env:  # `--setting-sources ""` reads only the --settings file: the answers go into the agent_env's copy
        from benchtape.adapters.claude_env import AGENT_ENV

        files[f"{AGENT_ENV}/settings.json"] = settings
    return files


# 2.1.328 attaches an image whose path is pasted into the prompt box (as a file dropped on the
# terminal is), showing `[Image #n]`; the transcript's user entry then carries the base64 block
ATTACHED = "[Image #{n}]"


def tui(session_uuid: str, trusted: list[str], agent_env: bool = False, images: tuple[str, ...] = ()) -> Tui:
    from benchtape.adapters.claude_disk import ClaudeDiskParser

    return Tui(
        seed=lambda env: seed(env, trusted, agent_env),
        transcript=f".claude/projects/*/{session_uuid}.jsonl",
        sidechains=f".claude/projects/*/{session_uuid}/subagents/agent-*.jsonl",
        stop_log=STOP_LOG,
        ready=READY,
        blocked=BLOCKED,
        parser=ClaudeDiskParser,
        goodbye=GOODBYE,
        session=session_uuid,
        attach=images,
        attached=ATTACHED if images else "",
    )
