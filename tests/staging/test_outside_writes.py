"""A harness writing next to its workspace (`../escape.txt`) is reported in its own record."""

from __future__ import annotations

import pytest
from stagekit import run_bench, write_bench


@pytest.mark.parametrize("level", ["home", "workspace"])
def test_a_write_outside_the_workspace_is_an_error_action(tmp_path, level):
    home = tmp_path / "fakehome"
    home.mkdir()
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: escaper
            prompt: a
            sandbox: {level}
            mock:
              steps:
                - tool: Bash
                  input: {{command: "echo out > ../escape.txt && echo in > inside.txt && echo scratch > ../tmp/ok.txt"}}
                - say: done
    """)
    ran = run_bench(bench, env={"HOME": str(home)})
    assert ran.code == 0, ran.stderr
    errors = [a["message"] for a in ran.actions("error")]
    assert errors == ["harness wrote outside its workspace: escape.txt"]
    kinds = [a["kind"] for a in ran.actions()]
    assert kinds.index("error") < kinds.index("session.finished")  # part of the session, before it closes


def test_a_well_behaved_session_reports_nothing(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: tidy
            prompt: a
            mock: {steps: [{tool: Write, input: {file_path: x.txt, content: hi}}, {say: done}]}
    """)
    ran = run_bench(bench)
    assert ran.code == 0 and ran.actions("error") == []
