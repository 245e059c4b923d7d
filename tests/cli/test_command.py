"""benchtape.guard.command: the one wrapper every command goes through (the guard, the exit
code, the store). Exercised on a real typer app over a real SQLite store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from benchtape.core.errors import BadInput
from benchtape.guard import command
from benchtape.options import Db
from benchtape.store.database import Store
from benchtape.store.views import BrowsingStore

seen: dict[str, object] = {}


@command(store="read")
def peek(store: BrowsingStore, db: Db = None, fail: bool = typer.Option(False, "--fail")) -> int:
    """Count the sessions."""
    seen["store"] = store
    if fail:
        raise BadInput("told to fail", fix="drop --fail")
    return 3 if store.count_sessions() == 0 else 0


@command(store="write")
def touch(store: Store, db: Db = None) -> int:
    store.new_run("run")
    return 0


@command()
def plain(name: str = typer.Argument(...)) -> int:
    return 0 if name == "ok" else 1


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("peek")(peek)
    app.command("touch")(touch)
    app.command("plain")(plain)
    return app


def test_the_store_is_the_decorators_hidden_from_the_command_line():
    out = CliRunner().invoke(_app(), ["peek", "--help"])
    assert out.exit_code == 0
    assert "--db" in out.output and "--fail" in out.output
    assert "store" not in out.output.lower().replace("sqlite store", "")


def test_a_browsing_command_gets_a_read_only_store_closed_after(tmp_path: Path):
    db = tmp_path / "b.db"
    Store(db).close()
    before = db.read_bytes()
    out = CliRunner().invoke(_app(), ["peek", "--db", str(db)])
    assert out.exit_code == 3, out.output  # the returned number is the exit code
    opened = seen["store"]
    assert isinstance(opened, Store) and opened.readonly
    with pytest.raises(sqlite3.ProgrammingError):  # closed once the command returned
        opened.count_sessions()
    assert db.read_bytes() == before


def test_a_path_that_is_no_store_is_exit_2_named(tmp_path: Path):
    out = CliRunner().invoke(_app(), ["peek", "--db", str(tmp_path / "none.db")])
    assert out.exit_code == 2
    assert "none.db" in out.output and not (tmp_path / "none.db").exists()  # a reader never creates it


def test_an_error_meant_for_the_user_is_its_message_and_exit_code(tmp_path: Path):
    db = tmp_path / "b.db"
    Store(db).close()
    out = CliRunner().invoke(_app(), ["peek", "--db", str(db), "--fail"])
    assert out.exit_code == 2
    assert "error: told to fail" in out.output and "drop --fail" in out.output
    assert "Traceback" not in out.output


def test_a_writing_command_creates_the_store_and_writes(tmp_path: Path):
    db = tmp_path / "new" / "w.db"
    out = CliRunner().invoke(_app(), ["touch", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert len(Store(db, readonly=True).runs()) == 1


def test_a_command_without_a_store_returns_its_code():
    assert CliRunner().invoke(_app(), ["plain", "ok"]).exit_code == 0
    assert CliRunner().invoke(_app(), ["plain", "no"]).exit_code == 1


def test_a_store_mode_needs_the_store_and_db_parameters():
    with pytest.raises(TypeError, match="takes `store` and `db`"):

        @command(store="read")
        def broken(db: Db = None) -> int:
            return 0
