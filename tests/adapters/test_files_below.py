"""A harness's transcript is found as the glob found it, without compiling a pattern per session."""

from __future__ import annotations

import os
from pathlib import Path

from benchtape.adapters.base import Launch, files_below
from benchtape.adapters.claude_code import ClaudeCodeAdapter
from benchtape.adapters.codex import CodexAdapter

THREAD = "01a232b2-20c3-7273-8941-a0e2b4472c78"


def tree(root: Path) -> None:
    """Rollouts at the right depth and at others, in a hidden folder, behind a link, and near misses."""
    day = root / "2026" / "12" / "01"
    day.mkdir(parents=True)
    for name in (f"rollout-2026-12-01T17-41-04-{THREAD}.jsonl", f"rollout-2026-12-01T09-00-00-{THREAD}.jsonl", f"rollout-{THREAD}.jsonl", f"rollout--{THREAD}.jsonl", f"xrollout-1-{THREAD}.jsonl", f"rollout-1-{THREAD}.json", "rollout-1-other.jsonl"):
        (day / name).write_text("{}\n")
    (root / "2026" / f"rollout-1-{THREAD}.jsonl").write_text("too shallow")
    hidden = root / ".old" / "12" / "01"
    hidden.mkdir(parents=True)
    (hidden / f"rollout-1-{THREAD}.jsonl").write_text("hidden")
    elsewhere = root.parent / "elsewhere" / "05" / "01"
    elsewhere.mkdir(parents=True)
    (elsewhere / f"rollout-9-{THREAD}.jsonl").write_text("through a link")
    os.symlink(root.parent / "elsewhere", root / "2025")
    (day / f"rollout-2-{THREAD}.jsonl.d").mkdir()


def test_the_same_files_as_the_glob(tmp_path):
    root = tmp_path / "sessions"
    tree(root)
    end = f"-{THREAD}.jsonl"
    found = files_below(root, 3, lambda n: n.startswith("rollout-") and n.endswith(end) and len(n) >= len("rollout-") + len(end))
    assert found == sorted(root.glob(f"*/*/*/rollout-*-{THREAD}.jsonl"))
    assert len(found) == 5  # two in the day's folder, `rollout--…`, the hidden one and the one behind the link
    assert files_below(root, 2, lambda n: n == "01") == sorted(root.glob("*/*/01"))
    assert files_below(tmp_path / "missing", 3, lambda n: True) == []


def test_each_adapter_finds_its_transcript(tmp_path):
    codex_day = tmp_path / ".codex" / "sessions" / "2026" / "12" / "01"
    codex_day.mkdir(parents=True)
    rollout = codex_day / f"rollout-2026-12-01T17-41-04-{THREAD}.jsonl"
    rollout.write_text("{}\n")
    launch = Launch(prompt="p", work_dir=tmp_path, root=tmp_path, home=tmp_path, session_uuid=THREAD)
    assert CodexAdapter().transcript(tmp_path, launch, THREAD) == rollout
    assert CodexAdapter().transcript(tmp_path, launch, "[0-9]*") is None  # an id is a name, not a pattern
    project = tmp_path / ".claude" / "projects" / "-work-x"
    project.mkdir(parents=True)
    (project / f"{THREAD}.jsonl").write_text("{}\n")
    assert ClaudeCodeAdapter().transcript(tmp_path, launch) == project / f"{THREAD}.jsonl"
