"""The harnesses benchtape knows, by name: the vocabulary a bench, a tool document and `--harness` use.

Each name points at its adapter class as text (`module:Class`, the module inside the adapters
room), so a document can be checked against the names without importing any adapter;
`benchtape.adapters.base.get_adapter` is the one place a name becomes an adapter. The core names
no module of another room, not even as a string (tests/test_layout.py reads strings too).
"""

from __future__ import annotations

ADAPTERS: dict[str, str] = {
    "mock": "mock:MockAdapter",
    "claude-code": "claude_code:ClaudeCodeAdapter",
    "codex": "codex:CodexAdapter",
    "oracle": "oracle:OracleAdapter",  # the positive control of task cells: the task's known fix, no model
}
CONTROL_HARNESSES = frozenset({"oracle"})  # harnesses whose sessions are controls, never a setup's measurement


def harness_names() -> list[str]:
    return sorted(ADAPTERS)
