"""A real harness binary with a scripted model: one model server per run, one script per session.

`--model scripted` (or `model: scripted` in the bench's harness_config) runs claude-code or
codex exactly as a real run does — same binary, same argv, same sandbox — except that its
model endpoint is benchtape's scripted server (models/), playing the scenario's `mock:` steps
(the negative control plays the no-op script: the model says the prompt back). No key, no
spend, and the cost is known because the script's usage numbers are. Each session's
endpoint, script hash and requests the script could not answer are recorded with it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

import orjson

from benchtape.adapters.endpoints import SCRIPTED
from benchtape.core.model import Action

HARNESSES = ("claude-code", "codex", "gemini-cli", "qwen-code", "mini-swe-agent", "opencode", "aider")


@dataclass(frozen=True)
class Endpoint:
    """Where one session's model answers (as seen from the host), and what it plays."""

    url: str
    script_sha256: str
    noop: bool

    def facts(self) -> dict[str, Any]:
        return {"kind": SCRIPTED, "url": self.url, "script_sha256": self.script_sha256, "noop": self.noop}


def script_sha256(mock: Any, noop: bool) -> str:
    """The identity of what a session's model plays: the canonical `mock:` block (or no-op)."""
    doc = {"noop": True} if noop else (mock or {})
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


class ScriptedModels:
    """The run's scripted model server, started on first use and stopped with the run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack: Any = None
        self._server: Any = None

    def _started(self) -> Any:
        with self._lock:
            if self._server is None:
                from contextlib import ExitStack

                from benchtape.models.server import serve

                self._stack = ExitStack()
                self._server = self._stack.enter_context(serve(None))
            return self._server

    def endpoint(self, session_id: str, mock: dict[str, Any] | None, *, noop: bool, source: str, paths: dict[str, str] | None = None) -> Endpoint:
        """A slot on the server playing this session's script; a malformed script is BadInput.
        `paths`: the workspace as the agent sees it -> its host folder (a container's /workspace)."""
        from benchtape.spec.script import noop_script, script_from

        script = noop_script() if noop or not mock else script_from(mock, source)
        url = self._started().add(session_id, script, paths)
        return Endpoint(url, script_sha256(mock, noop), noop or not mock)

    def findings(self, session_id: str) -> list[Action]:
        """What the script could not answer, as errors of the session: a run whose agent asked
        for more than the script has is not a clean measurement, and the user must see why."""
        if self._server is None:
            return []
        out = []
        for entry in self._server.entries(slot=session_id):
            outcome = entry.get("outcome")
            if outcome == "exhausted" and entry.get("role") == "judge":  # no tools offered: not a turn of the steps (an agent's title or summary request)
                out.append(Action("error", {"message": f"the scripted model got a request offering no tools at request {entry.get('seq')} (read as a judge's: an agent's title or summary request is one) and the script has no `chat:` reply left for it; add a `chat:` entry to the scenario's mock: script (`chat: [{{reply: \"...\"}}]`), one per such request", "source": "scripted-model"}))
            elif outcome == "exhausted":
                out.append(Action("error", {"message": f"the scripted model ran out of turns at request {entry.get('seq')}: the agent asked for more than the scenario's mock: steps script", "source": "scripted-model"}))
            elif outcome == "unmapped":
                out.append(Action("error", {"message": f"the scripted model could not play a step for this harness: {entry.get('line') or entry.get('body', {}).get('model', '')}", "source": "scripted-model"}))
        return out

    def close(self) -> None:
        with self._lock:
            if self._stack is not None:
                self._stack.close()
            self._stack = self._server = None
