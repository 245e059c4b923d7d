"""`reparse` of a session a plugin harness recorded: its raw lines are the plugin's own format,
read again with the installed plugin's parser; without the plugin, the refusal names it."""

from __future__ import annotations

import json
import sys
import types

import pytest

from benchtape.adapters.base import Harness
from benchtape.core import harnesses
from benchtape.core.errors import BadInput
from benchtape.core.model import Action
from benchtape.recorder.importer import reparse
from benchtape.store.database import Store


class _Parser:
    def feed(self, line: str) -> list[Action]:
        event = json.loads(line)
        return [Action("message.assistant", {"text": event["say"]})]

    def finish(self) -> list[Action]:
        return []


class _TinyHarness(Harness):
    name = "tinytest"

    def parser(self) -> _Parser:
        return _Parser()


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "r.db")
    yield s
    s.close()


def _recorded(store: Store) -> str:
    """A live session of the plugin harness: benchtape's bookends around its raw stream."""
    sid = store.new_session(store.new_run("run"), "sc", harness="tinytest")
    store.append(sid, [Action("session.started", {"scenario": "sc", "harness": "tinytest", "prompt": "go"}), Action("message.user", {"text": "go"})])
    store.append_line(sid, 1, json.dumps({"say": "hello"}), [Action("message.assistant", {"text": "hello"})])
    store.append(sid, [Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 5.0})])
    return sid


def _install(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("bt_tinytest_plugin")
    module._TinyHarness = _TinyHarness  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bt_tinytest_plugin", module)
    monkeypatch.setattr(harnesses, "plugins", lambda: (harnesses.Installed("tinytest", "bt_tinytest_plugin:_TinyHarness", "bt-tinytest", "0.1"),))


def test_a_plugin_session_is_reparsed_with_the_plugins_parser(store, monkeypatch):
    sid = _recorded(store)
    _install(monkeypatch)
    new = reparse(store, sid)
    kinds = [(a.kind, a.data.get("text")) for a in store.actions(new) if a.kind != "session.finished"]
    assert kinds == [("session.started", None), ("message.user", "go"), ("message.assistant", "hello")]
    assert store.session_row(new).parent_session == sid


def test_without_the_plugin_the_refusal_names_it(store, monkeypatch):
    sid = _recorded(store)
    monkeypatch.setattr(harnesses, "plugins", lambda: ())
    with pytest.raises(BadInput, match="harness 'tinytest', whose plugin is not installed here") as info:
        reparse(store, sid)
    assert "install the plugin that provides harness 'tinytest'" in (info.value.fix or "")
