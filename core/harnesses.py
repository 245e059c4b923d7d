"""The harnesses benchtape knows, by name: the vocabulary a bench, a tool document and `--harness` use.

Each name points at its adapter class as text (`module:Class`), so a document can be checked
against the names without importing any adapter; `benchtape.adapters.base.get_adapter` is the
one place a name becomes an adapter.
"""

from __future__ import annotations

ADAPTERS: dict[str, str] = {
    "mock": "benchtape.adapters.mock:MockAdapter",
    "claude-code": "benchtape.adapters.claude_code:ClaudeCodeAdapter",
    "codex": "benchtape.adapters.codex:CodexAdapter",
    "oracle": "benchtape.adapters.oracle:OracleAdapter",  # the positive control of task cells: the task's known fix, no model
}
CONTROL_HARNESSES = frozenset({"oracle"})  # harnesses whose sessions are controls, never a setup's measurement


def harness_names() -> list[str]:
    return sorted(ADAPTERS)
