"""Real transcripts (shared/realdata) become scripts that load and make the same calls."""

from __future__ import annotations

import pytest
from adapterkit import realdata_params
from realagents import parse, session_of

from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.codex_rollout import CodexRolloutParser
from benchtape.models.from_session import script_of
from benchtape.spec.script import script_from


@pytest.mark.parametrize("path", realdata_params("claude-transcripts/*.jsonl") + realdata_params("codex-rollout/*.jsonl"))
def test_real_transcripts_become_scripts_that_load(path):
    parser = ClaudeDiskParser() if "claude" in path.parent.name else CodexRolloutParser()
    session = session_of(parse(parser, path.read_text().splitlines()))
    got = script_of(session)
    script = script_from(got.script, str(path))
    calls = [c for t in script.turns for c in t.calls] + [c for s in script.subagents() for t in s.turns for c in t.calls]
    spawned = len(session.skills) + len([i for i in session.invocations if i.kind == "subagent"])
    assert len(calls) == len(session.calls) + spawned
