"""The CLI a madbench user types, with a bench written as they write it: exit codes where the
spec is definite, bare-file invocation, `.env`, the MADBENCH_* variables, retired flags."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cli import benchtape


def write(folder: Path, text: str, name: str = "madbench.yaml") -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def test_list_exits_1_on_a_load_error_and_a_missing_file_grader_is_preflights_block(tmp_path):
    broken = write(tmp_path, """
        description: a retired level
        scenarios:
          - {name: a, prompt: hi, sandbox: process}
        """, "broken.yaml")
    out = benchtape("list", broken)
    assert out.returncode == 1 and 'sandbox: level "process" was renamed to "home"' in out.stderr and "Traceback" not in out.stderr
    assert benchtape("preflight", broken).returncode == 2  # every other command: bad input, exit 2
    grader = write(tmp_path, """
        description: a grader that is not written yet
        harness: mock
        scenarios:
          - name: a
            prompt: hi
            interactive: false
            checks:
              - {type: ts, value: "file://graders/score.ts"}
        """)
    listed = benchtape("list", grader)
    assert listed.returncode == 0, listed.stderr  # list parses only: the grader is preflight's
    for command in ("preflight", "run"):
        out = benchtape(command, grader, *(["--db", str(tmp_path / "x.db")] if command == "run" else []))
        assert out.returncode == 3, (command, out.stdout + out.stderr)
        assert f"grader ts: stat {tmp_path / 'graders' / 'score.ts'}: no such file or directory" in out.stderr
