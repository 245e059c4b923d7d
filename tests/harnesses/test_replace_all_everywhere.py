"""One scripted Edit with `replace_all: true` (a rename) is made in full by every harness that
plays it through line-matching edits: Codex's apply_patch and aider's SEARCH/REPLACE blocks were
sent the lines around the first match only, so the rename changed its definition and none of its
uses under those two, where Claude Code, Gemini CLI, opencode and the mock made all of them: the
same script scored fail against pass, a bias of the comparison itself (tkem/cachetools'
`_kwmark`, newcomer pass). The real binaries, offline, against the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from realagents import TOOLS, need

pytestmark = pytest.mark.xdist_group("real-agents")

NAMES = "_kwmark = (object(),)\n\n\ndef first():\n    return _kwmark\n\n\ndef second():\n    return _kwmark\n\n\ndef third(x=_kwmark):\n    return x is _kwmark\n"
CHECK = "src = open('names.py').read(); assert '_kwmark' not in src and src.count('_KWMARK') == 5, src; import names; assert names.third()"
BENCH = {
    "description": "a rename by replace_all",
    "defaults": {"sandbox": "home", "timeout": "180s"},
    "scenarios": [
        {
            "name": "rename",
            "testdata": "pkg",
            "prompt": "Rename _kwmark to _KWMARK everywhere in names.py.",
            "checks": [{"type": "exec", "args": {"cmd": ["python3", "-c", CHECK], "timeout": "30s"}}],
            "mock": {"steps": [{"tool": "Edit", "input": {"file_path": "names.py", "old_string": "_kwmark", "new_string": "_KWMARK", "replace_all": True}}, {"say": "Renamed it."}]},
        }
    ],
}


@pytest.mark.parametrize("harness", ["codex", "aider", "mock"])
def test_a_rename_by_replace_all_changes_every_use(harness: str, tmp_path: Path) -> None:
    if harness != "mock":
        need(harness)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "names.py").write_text(NAMES)
    (tmp_path / "bench.yaml").write_text(json.dumps({**BENCH, "harness": harness}))
    env = {**os.environ, "BENCHTAPE_TOOLS": str(TOOLS), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    model = [] if harness == "mock" else ["--model", "scripted"]
    done = subprocess.run([sys.executable, "-m", "benchtape", "run", "bench.yaml", *model, "--db", str(tmp_path / "s.db")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "rename #1: PASS" in said, said
