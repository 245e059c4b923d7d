"""The projection's lazy parts (actions, calls, invocations, turns, each subagent's actions
and calls) are built when first read: whatever order a reader asks for them in, through a
copy or not, they are what reading them in order gives; the projection of stored rows is the
projection of their Actions; and `query`'s narrow projection for `calls` (only the kinds
KINDS_FOR names) gives the calls the full projection gives, on every real transcript."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from adapterkit import realdata_params
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtape.adapters.transcripts import open_transcripts
from benchtape.core.model import MAIN, Action, Session, project, project_rows
from benchtape.replay.document import KINDS_FOR


def _view(s: Session) -> tuple:
    subs = {t: (v.agent, v.call_id, [_call(c) for c in v.calls], v.tools, v.output) for t, v in s.subagents.items()}
    return ([_call(c) for c in s.calls], [_call(i) for i in s.invocations], [(t.prompt, t.steps) for t in s.turns], subs, s.skills, s.final_output, s.metrics.step_count)


def _call(c) -> tuple:
    """A Call's or Invocation's fields, its canonical action as read (not the source it is read from)."""
    return (*dataclasses.astuple(c)[:-1], c.canonical)


def _read_backwards(s: Session) -> tuple:
    """Subagents' calls first, then turns and invocations through a copy, then the rest."""
    for sub in s.subagents.values():
        _ = sub.tools  # read only to build it: the order of first reads is the point
    view = copy.copy(s)
    _ = view.turns, view.invocations
    return _view(s)


def _actions(path: Path) -> list[Action]:
    out: list[Action] = []
    for transcript in open_transcripts(path):
        out += [a for _line, got in transcript.lines() for a in got]
    return [a.stamped(seq=i + 1) for i, a in enumerate(out)]


@pytest.mark.parametrize("path", realdata_params("**/*.jsonl"))
def test_lazy_parts_do_not_depend_on_the_order_they_are_read_in(path: Path) -> None:
    actions = _actions(path)
    assert _read_backwards(project(actions)) == _view(project(actions))


def _eager_subagent_actions(actions: list[Action]) -> dict[str, list[Action]]:
    """Each subagent's actions as the eager fold filed them: every action on a thread other
    than main, but its spawn rows, under that thread."""
    out: dict[str, list[Action]] = {}
    for a in actions:
        if a.thread != MAIN and a.kind != "subagent.spawned":
            out.setdefault(a.thread, []).append(a)
    return out


def _assert_rows_project_as_actions(actions: list[Action]) -> None:
    """What the store does (fold the rows; make Actions only when read) is the fold of the Actions."""
    stored = project_rows([(a.seq, a.at, a.thread, a.kind, a.data) for a in actions])
    direct = project(actions)
    assert _view(stored) == _view(direct)
    eager = _eager_subagent_actions(actions)
    assert {t: sub.actions for t, sub in stored.subagents.items()} == {t: eager.get(t, []) for t in stored.subagents}
    assert stored.actions == direct.actions == actions and stored.main == [a for a in actions if a.thread == MAIN]
    assert direct.actions is not actions and all(x is y for x, y in zip(direct.actions, actions))  # the caller's Actions, in a list of the projection's own


@pytest.mark.parametrize("path", realdata_params("**/*.jsonl"))
def test_stored_rows_project_as_their_actions(path: Path) -> None:
    _assert_rows_project_as_actions(_actions(path))


@pytest.mark.parametrize("path", realdata_params("**/*.jsonl"))
def test_the_narrow_projection_for_calls_gives_the_same_calls(path: Path) -> None:
    actions = _actions(path)
    narrow = project([a for a in actions if a.kind in KINDS_FOR["calls"]])
    assert [c.to_dict() for c in narrow.calls] == [c.to_dict() for c in project(actions).calls]


KINDS = ("tool.call", "tool.result", "subagent.spawned", "subagent.finished", "skill.invoked", "message.user", "message.assistant", "session.started", "final_output")
maybe = lambda values: st.one_of(st.none(), st.sampled_from(values))  # noqa: E731
DATA = st.fixed_dictionaries(
    {},
    optional={"call_id": maybe(["c1", "c2", "c3"]), "tool": maybe(["Read", "Task", "mcp__x"]), "thread": maybe(["t1", "t2", MAIN]), "agent": maybe(["a", "b"]), "is_error": st.one_of(st.none(), st.booleans()), "prompt": maybe(["p", "q"]), "text": maybe(["hi"]), "output": maybe(["o"]), "name": maybe(["sk"])},
)
ACTIONS = st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from([MAIN, MAIN, "t1", "t2"]), DATA), max_size=25)


@settings(max_examples=300, deadline=None)
@given(ACTIONS)
def test_any_action_sequence_reads_the_same_in_any_order(rows) -> None:
    actions = [Action(kind, data, thread=thread, seq=i + 1) for i, (kind, thread, data) in enumerate(rows)]
    assert _read_backwards(project(actions)) == _view(project(actions))
    _assert_rows_project_as_actions(actions)


def test_a_session_built_by_hand_keeps_what_it_was_given() -> None:
    s = Session(prompt="p")
    assert s.calls == [] and s.turns == [] and s.invocations == []
    s.calls = ["x"]  # type: ignore[list-item]
    assert s.calls == ["x"]
    assert dataclasses.replace(project([Action("session.started", {"prompt": "p"})])).turns[0].prompt == "p"


def test_a_calls_canonical_action_is_derived_when_first_read_and_as_eagerly(monkeypatch):
    """A call stored before calls carried their canonical action (an older store) has it
    derived on read: when a reader first asks, never while projecting, and the same as
    deriving it from the stored payload and the session's harness."""
    from benchtape.core import canonical as canon
    from benchtape.core import model

    rows = [
        (1, 0.0, MAIN, "session.started", {"scenario": "s", "harness": "codex", "prompt": "p"}),
        (2, 0.0, MAIN, "tool.call", {"call_id": "a", "tool": "exec_command", "input": {"cmd": "cat src/a.py"}}),
        (3, 0.0, MAIN, "tool.result", {"call_id": "a", "output": "x", "is_error": False}),
        (4, 0.0, MAIN, "tool.call", {"call_id": "b", "tool": "Read", "input": {"file_path": "b.py"}, "action": "read", "files": [{"path": "b.py", "action": "read"}]}),
    ]
    derived = []
    real = canon.of_call
    monkeypatch.setattr(model, "of_call", lambda data, harness: derived.append(data["call_id"]) or real(data, harness))
    session = project_rows(rows)
    calls, invocations = session.calls, session.invocations
    assert derived == []  # nothing read yet
    assert calls[0].canonical == canon.canonical("exec_command", {"cmd": "cat src/a.py"}, "codex") == canon.Canonical("read", (("src/a.py", "read"),), "cat src/a.py")
    assert invocations[0].canonical == calls[0].canonical
    assert calls[1].canonical == invocations[1].canonical == canon.Canonical("read", (("b.py", "read"),))
    assert derived == ["a", "a", "b", "b"]
    _ = calls[0].canonical, invocations[1].canonical
    assert len(derived) == 4  # once each
