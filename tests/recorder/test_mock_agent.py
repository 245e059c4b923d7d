"""The mock agent really acts: each tool on real files, as a real harness would record it."""

from __future__ import annotations

from mocksession import mock_session


def test_tools_act_on_the_workspace_and_record_outcomes(tmp_path):
    root = tmp_path / "ws"
    s = mock_session(
        root,
        [
            {"tool": "Write", "input": {"file_path": "pkg/a.py", "content": "x = 1\ny = 2\n"}},
            {"tool": "MultiEdit", "input": {"file_path": "pkg/a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 10"}, {"old_string": "y = 2", "new_string": "y = 20"}]}},
            {"tool": "Read", "input": {"file_path": "pkg/a.py"}},
            {"tool": "Glob", "input": {"pattern": "*.py"}},
            {"tool": "Grep", "input": {"pattern": "y = 20"}},
            {"tool": "Bash", "input": {"command": "exit 3"}},
            {"tool": "Bash", "input": {"command": "sleep 5", "timeout": 300}},
            {"tool": "Edit", "input": {"file_path": "pkg/a.py", "old_string": "not there", "new_string": "z"}},
            {"tool": "mcp__tracker__create_issue", "input": {"title": "x"}, "result": "created #4", "is_error": False},
            {"say": "done"},
        ],
    )
    assert (root / "pkg" / "a.py").read_text() == "x = 10\ny = 20\n"
    by = [(c.tool, c.outcome) for c in s.calls]
    assert by == [
        ("Write", "ok"),
        ("MultiEdit", "ok"),
        ("Read", None),  # like Claude Code: a good Read records no outcome
        ("Glob", None),
        ("Grep", None),
        ("Bash", "error"),  # non-zero exit
        ("Bash", "error"),  # timed out
        ("Edit", "error"),  # old_string missing
        ("mcp__tracker__create_issue", "ok"),  # a tool it cannot run takes its result from the step
    ]
    assert "10" in s.calls[2].output and "pkg/a.py" in s.calls[3].output and "pkg/a.py" in s.calls[4].output
    assert "Exit code 3" in s.calls[5].output and "timed out" in s.calls[6].output
    assert s.invocations[-1].kind == "mcp" and s.final_output == "done"


def test_a_path_escaping_the_workspace_is_an_error_never_a_write(tmp_path):
    root = tmp_path / "ws"
    s = mock_session(root, [
        {"tool": "Write", "input": {"file_path": "../escaped.txt", "content": "no"}},
        {"tool": "Write", "input": {"file_path": "/tmp/../" + str(tmp_path / "abs.txt"), "content": "no"}},
        {"tool": "Read", "input": {"file_path": "../../etc/passwd"}},
    ])
    assert [c.outcome for c in s.calls] == ["error", "error", "error"]
    assert all("outside the workspace" in c.output for c in s.calls)
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "abs.txt").exists()


def test_subagent_skill_and_thinking_become_their_own_actions(tmp_path):
    s = mock_session(tmp_path / "ws", [
        {"think": "plan"},
        {"skill": "reviewing-code"},
        {"subagent": {"agent": "Explore", "prompt": "find callers", "steps": [{"tool": "Glob", "input": {"pattern": "*"}}, {"say": "none found"}]}},
        {"say": "ok"},
    ])
    kinds = [a.kind for a in s.actions]
    assert "thinking" in kinds and "skill.invoked" in kinds and "subagent.spawned" in kinds and "subagent.finished" in kinds
    [sub] = s.subagents.values()
    assert sub.agent == "Explore" and [c.tool for c in sub.calls] == ["Glob"] and sub.output == "none found"
    assert s.metrics.step_count == 0  # the Glob ran on the subagent's thread
    assert s.skills[0]["name"] == "reviewing-code"
