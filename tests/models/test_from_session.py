"""A stored session's model side as a script: what the model did, replayable."""

from __future__ import annotations

from mocksession import mock_session
from realagents import session_of

from benchtape.core.model import Action
from benchtape.models.from_session import script_of
from benchtape.spec.script import script_from


def test_the_mock_agents_steps_come_back_as_they_were_scripted(tmp_path):
    steps = [
        {"think": "look"},
        {"tool": "Read", "input": {"file_path": "a.txt"}},
        {"say": "editing"},
        {"tool": "Edit", "input": {"file_path": "a.txt", "old_string": "x", "new_string": "y"}},
        {"skill": "review"},
        {"subagent": {"agent": "Explore", "prompt": "look around", "steps": [{"tool": "Bash", "input": {"command": "ls"}}, {"say": "two files"}]}},
        {"say": "done"},
    ]
    session = mock_session(tmp_path / "w", steps, files={"a.txt": "x\n"}, metrics={"tokens_in": 300, "tokens_out": 40})
    got = script_of(session)
    sub = {"subagent": {"agent": "Explore", "prompt": "look around", "tool": "Task", "steps": steps[5]["subagent"]["steps"]}}
    assert got.script["steps"] == [*steps[:5], sub, steps[6]]
    assert got.script["metrics"] == {"tokens_in": 300, "tokens_out": 40}
    assert got.notes == []
    script_from(got.script)  # loads and plays


def test_calls_made_before_their_results_were_one_parallel_turn_and_a_user_message_ends_a_turn():
    actions = [
        Action("message.user", {"text": "go"}),
        Action("tool.call", {"call_id": "1", "tool": "Read", "input": {"file_path": "a"}}),
        Action("tool.call", {"call_id": "2", "tool": "Read", "input": {"file_path": "b"}}),
        Action("tool.result", {"call_id": "1", "output": "A", "is_error": None}),
        Action("tool.result", {"call_id": "2", "output": "B", "is_error": None}),
        Action("message.assistant", {"text": "first"}),
        Action("message.user", {"text": "more"}),
        Action("tool.call", {"call_id": "3", "tool": "command_execution", "input": {"command": "/bin/bash -lc 'ls -la'"}}),
        Action("tool.result", {"call_id": "3", "output": "", "is_error": False}),
        Action("tool.call", {"call_id": "4", "tool": "file_change", "input": {"changes": [{"path": "a", "kind": "update"}]}}),
        Action("tool.result", {"call_id": "4", "output": "", "is_error": False}),
        Action("message.assistant", {"text": "second"}),
    ]
    got = script_of(session_of(actions))
    assert got.script["steps"] == [
        {"parallel": [{"tool": "Read", "input": {"file_path": "a"}}, {"tool": "Read", "input": {"file_path": "b"}}]},
        {"say": "first", "end_turn": True},
        {"tool": "Bash", "input": {"command": "ls -la"}},
        {"tool": "file_change", "input": {"changes": [{"path": "a", "kind": "update"}]}},
        {"say": "second"},
    ]
    assert len(got.notes) == 1 and "file_change" in got.notes[0]
    assert [t.ends for t in script_from(got.script).turns] == [False, True, False, False, True]


def test_a_session_that_did_nothing_is_the_noop_script():
    assert script_of(session_of([Action("message.user", {"text": "hi"})])).script == {"noop": True}
