"""Helpers for the format tests: sessions from the real transcripts, an ATIF round trip without
the store, and the views of a session a round trip must keep (calls, threads, errors, metrics)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "tests" / "adapters", ROOT / "tests" / "e2e", ROOT / "tests" / "replay"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from adapterkit import REALDATA, realdata_params, session_of  # noqa: E402,F401 - re-exported for the format tests
from cli import benchtape  # noqa: E402,F401 - the real command in a subprocess (tests/e2e/cli.py)
from replaykit import cli  # noqa: E402,F401 - the real command in-process (tests/replay/replaykit.py), for the quick refusals

from benchtape.adapters.atif_trajectory import AtifParser  # noqa: E402
from benchtape.adapters.transcripts import open_transcripts  # noqa: E402
from benchtape.core.model import METRIC_FIELDS, Action, Session  # noqa: E402
from benchtape.formats.atif_export import trajectory  # noqa: E402


def session_params() -> list:
    """pytest params of every real transcript that is a session of its own (a Claude subagent's
    file imports with its session), or one loud skip when the real transcripts are missing."""
    return [p for p in realdata_params("**/*.jsonl") if p.values[0] is None or not p.values[0].name.startswith("agent-")]


def transcript_actions(path: Path, keep: int | None = None) -> list[Action]:
    """A real transcript's actions as an import derives them, from its first `keep` lines only
    (a run killed part-way) when given; with the bookends an import writes around them."""
    out: list[Action] = [Action("session.started", {"scenario": path.stem, "harness": "claude-code" if "claude" in str(path) else "codex"})]
    for transcript in open_transcripts(path):
        for i, (_line, got) in enumerate(transcript.lines()):
            if keep is not None and i >= keep:
                break
            out += got
        out += transcript.finish()
    return out + [Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1.0})]


def real_session(path: Path, keep: int | None = None) -> Session:
    s = session_of(transcript_actions(path, keep))
    s.id = "01TESTSESSION"
    return s


def parse_document(text: str) -> list[Action]:
    """An ATIF document's actions, fed to the parser line by line as an import feeds it."""
    parser = AtifParser()
    for line in text.split("\n"):
        if line.strip():
            parser.feed(line)
    return parser.finish()


def atif_roundtrip(session: Session) -> Session:
    """Export the session as ATIF (indented, as the export writes it) and import the document back."""
    text = json.dumps(trajectory(session), indent=2)
    return session_of(parse_document(text))


def views(s: Session) -> dict[str, Any]:
    """What an export and import must give back: calls per thread (in order), each thread's
    subagent facts, errors, metric totals (its spend as benchtape prices it), the final output."""
    calls: dict[str, list[tuple]] = {}
    for c in s.calls:
        calls.setdefault(c.thread, []).append((c.call_id, c.tool, c.input, c.output, c.is_error, c.has_result, c.agent))
    threads = {t: (sub.agent, sub.parent_thread, sub.call_id, sub.prompt, sub.output, sub.finished) for t, sub in s.subagents.items()}
    from benchtape.spec.pricing import reported_cost

    metrics = {f: getattr(s.metrics, f) for f in METRIC_FIELDS} | {"step_count": s.metrics.step_count}
    metrics["cost_usd"] = reported_cost(s.model, s.metrics.cost_usd)  # what it spent: nothing for a scripted model, whatever its tool printed
    return {"calls": calls, "threads": threads, "errors": s.errors, "metrics": metrics, "final_output": s.final_output}


MOCK_BENCH = """
harness: mock
defaults: {sandbox: workspace, interactive: false, timeout: 60s}
scenarios:
  - name: delegates
    prompt: review the code and report
    mock:
      steps:
        - tool: Write
          input: {file_path: notes.txt, content: "hello"}
        - tool: Read
          input: {file_path: missing.txt}
        - think: "a subagent can look deeper"
        - subagent:
            agent: Explore
            prompt: look for bugs
            steps:
              - tool: Read
                input: {file_path: notes.txt}
              - subagent:
                  agent: Plan
                  prompt: plan the fix
                  steps:
                    - say: "plan: none needed"
              - say: "no bugs found"
        - skill: review
        - tool: Lint
          input: {path: "."}
          result: "3 warnings"
          is_error: true
        - say: "All reviewed: no bugs."
      metrics: {cost_usd: 0.02, duration_ms: 1500, tokens_in: 900, tokens_out: 120, cache_read_tokens: 300, cache_write_tokens: 40, turns: 4}
    checks:
      - {type: contains, value: "no bugs"}
      - {type: session:tool-used, value: Read}
      - {type: session:subagent-used, args: {agent: Explore}}
  - name: says-little
    prompt: say hi
    mock:
      steps:
        - say: "hi"
    checks:
      - {type: contains, value: "bye"}
"""


def write_mock_bench(folder: Path) -> Path:
    path = folder / "bench.yaml"
    path.write_text(textwrap.dedent(MOCK_BENCH).lstrip())
    return path
