"""The next session's folder made ahead (benchtape.sandbox.spares): used when it fits, never shared, never left behind."""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from pathlib import Path

from benchtape.app.api import load_benches, run_benches
from benchtape.recorder.runner import RunOptions
from benchtape.sandbox import local
from benchtape.sandbox.capture import SessionFolder
from benchtape.sandbox.run_resources import RunResources
from benchtape.sandbox.spares import Spares
from benchtape.sandbox.trees import Cleanup
from benchtape.store.database import Store

DEMO = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"


def test_a_serial_run_opens_its_later_sessions_in_folders_made_ahead_and_leaves_none(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made_on: list[str] = []
    create = SessionFolder.create.__func__

    def spy(cls, **facts):
        made_on.append(threading.current_thread().name)
        return create(cls, **facts)

    monkeypatch.setattr(SessionFolder, "create", classmethod(spy))
    taken: list[bool] = []
    monkeypatch.setattr(Spares, "take", _recording(Spares.take, taken))
    store = Store(tmp_path / "x.db")
    outcome = run_benches(load_benches([DEMO]), store, RunOptions(repeat=3, concurrency=1, scenarios=["fixes-the-bug"]))
    try:
        assert outcome.tally.summary()["passed"] == 3  # graded as before: the copy of the staged tree is the same
    finally:
        outcome.close()
    ids = [sid for (sid,) in sqlite3.connect(tmp_path / "x.db").execute("SELECT id FROM sessions")]
    workdirs = [store.load_session(sid).actions[0].data["work_dir"] for sid in ids]
    assert len(set(workdirs)) == 3  # each session its own folder
    assert taken[0] is False and any(taken[1:])  # the first makes its own; a later one takes the spare
    assert "benchtape-cleanup" in made_on  # made on the cleanup thread, off the session's path
    assert not list(tmp_path.glob("benchtape-*")), "a spare (or a session folder) was left behind"


def _recording(take, taken):
    def recorded(self, key):
        folder = take(self, key)
        taken.append(folder is not None)
        return folder

    return recorded


def test_a_spare_made_for_another_staged_tree_is_not_taken_and_discard_removes_it(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "a.txt").write_text("a")
    spares = Spares(Cleanup())
    spares._make(("home", False, seed, {}), spares.generation)
    assert spares.take(("home", False, None, {})) is None and spares.take(("workspace", False, seed, {})) is None
    [made] = list(tmp_path.glob("benchtape-*"))
    assert (made / "work" / "a.txt").read_text() == "a" and (made / "tmp").is_dir()
    spares.discard()
    from benchtape.sandbox.trees import wait_later

    wait_later()
    assert not list(tmp_path.glob("benchtape-*"))


def test_a_spare_still_being_made_when_its_run_ends_is_removed_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spares = Spares(Cleanup())
    generation = spares.generation
    spares.discard()  # the run ended while the spare was being made
    spares._make(("home", False, None, {}), generation)
    assert spares.spare is None
    from benchtape.sandbox.trees import wait_later

    wait_later()
    assert not list(tmp_path.glob("benchtape-*"))


def test_a_parked_cleanup_waits_for_the_next_harness_and_a_run_end_lets_it_go():
    from benchtape.sandbox.trees import wait_later

    done: list[str] = []
    cleanup = Cleanup()
    cleanup.park(lambda: done.append("outside a run"))
    wait_later()
    assert done == ["outside a run"]  # no run records: as `later`
    cleanup.open()
    try:
        cleanup.park(lambda: done.append("first"))
        wait_later()
        assert done == ["outside a run"]  # held while the run records
        cleanup.release()  # a harness started
        wait_later()
        assert done[-1] == "first"
        cleanup.park(lambda: done.append("at the end"))
    finally:
        cleanup.close()
    wait_later()
    assert done[-1] == "at the end"


def test_a_spare_holds_the_harness_home_json_merged_as_the_session_would_merge_it(tmp_path, monkeypatch):
    from benchtape.adapters.claude_code import NO_UPDATES
    from benchtape.app.api import load_benches as load
    from benchtape.core.launch_plan import LaunchPlan
    from benchtape.sandbox.home_seed import seed_home
    from benchtape.sandbox.trees import wait_later

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    resources = RunResources()
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / ".claude.json").write_text('{"theme": "dark"}')
    scenario = load([DEMO])[0].scenarios[0]
    level = local.LocalLevel("home", resources=resources)
    plan = LaunchPlan(home_json=NO_UPDATES)
    level.prepare_ahead(seed, plan)
    wait_later()
    with level.open(scenario, seed) as box:  # another harness (no home_json): not this spare
        assert not box.home_seeded and not (box.home / ".claude" / "settings.json").exists()
    level.prepare_ahead(seed, plan)
    wait_later()
    with level.open(scenario, seed, plan) as box:
        assert box.home_seeded and box.home == box.root
        seeded = {rel: (box.home / rel).read_bytes() for rel in NO_UPDATES}
    by_the_session = tmp_path / "by-the-session"
    by_the_session.mkdir()
    (by_the_session / ".claude.json").write_text('{"theme": "dark"}')
    seed_home(by_the_session, NO_UPDATES)
    assert seeded == {rel: (by_the_session / rel).read_bytes() for rel in NO_UPDATES}
    assert b'"theme"' in seeded[".claude.json"] and b'"autoUpdates": false' in seeded[".claude.json"]
    resources.close()
    wait_later()
