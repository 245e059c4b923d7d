"""Opening a store: every wrong --db is a message naming the file and the fix (exit 2, no
traceback), and a read-only command never creates, changes or migrates the file it is given."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass

import orjson
import pytest
import sqlite_utils
from typer.testing import CliRunner

from benchtape.cli import build
from benchtape.core.errors import BadInput
from benchtape.core.model import Action
from benchtape.store import database as store_module
from benchtape.store.database import MIGRATIONS, Store


@dataclass
class Out:
    code: int
    stdout: str
    stderr: str


def cli(*args: object) -> Out:
    """The real CLI in-process; an exception that escapes it (a traceback) fails the test."""
    result = CliRunner().invoke(build(), [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "240"}, catch_exceptions=False)
    return Out(result.exit_code, result.stdout, result.stderr)

READ_ONLY_COMMANDS = (("sessions",), ("show", "01"), ("query", "metrics"), ("gradings",), ("diff", "A", "B"), ("report", "01", "--html", "/dev/null"))


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def a_store(tmp_path) -> tuple:
    path = tmp_path / "s.db"
    s = Store(path)
    sid = s.new_session(s.new_run("run"), "sc")
    s.append_line(sid, 1, '{"line": 1}', [Action("message.user", {"text": "hi"})])
    s.close()
    return path, sid


def truncated(tmp_path):
    path, _ = a_store(tmp_path)
    con = sqlite3.connect(path, isolation_level=None)
    con.executemany("INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)", [(str(i), 1, os.urandom(3000)) for i in range(60)])
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    return path


BAD = {
    "a folder": (lambda tmp: tmp, "folder, not a database file"),
    "random bytes": (lambda tmp: (tmp / "r.db").write_bytes(os.urandom(4096)) and tmp / "r.db", "not a SQLite database"),
    "a YAML file": (lambda tmp: (tmp / "bench.yaml").write_text("harness: mock\nscenarios: []\n") and tmp / "bench.yaml", "not a SQLite database"),
    "a truncated database": (truncated, "database disk image is malformed"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", [("sessions",), ("import", "codex", "x.jsonl"), ("reparse", "01")])
def test_a_wrong_db_is_a_message_with_the_file_and_the_fix(tmp_path, case, command):
    make, says = BAD[case]
    path = make(tmp_path)
    out = cli(*command, "--db", path)
    assert out.code == 2, out.stdout + out.stderr
    assert says in out.stderr and str(path) in out.stderr and "fix:" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_unwritable_location_is_a_message(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "thread.started", "thread_id": "t"}\n')
    for db in ("/proc/benchtape-test/b.db", "/proc/b.db"):  # a folder nobody can create, a file nobody can write
        out = cli("import", "codex", transcript, "--db", db)
        assert out.code == 2 and db in out.stderr and "writ" in out.stderr, out.stderr


@pytest.mark.parametrize("command", READ_ONLY_COMMANDS)
def test_read_only_commands_leave_someone_elses_sqlite_file_as_it_was(tmp_path, command):
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (name TEXT)")
        con.execute("INSERT INTO people VALUES ('ada')")
    before = digest(path)
    out = cli(*command, "--db", path)
    assert out.code == 2 and "not a benchtape store" in out.stderr and "fix:" in out.stderr
    assert digest(path) == before
    assert [r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")] == ["people"]


def test_recording_commands_do_not_take_over_someone_elses_database_either(tmp_path):
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(BadInput, match="not a benchtape store"):
        Store(path)
    assert [r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")] == ["people"]


def test_a_read_only_open_never_creates_a_file(tmp_path):
    with pytest.raises(BadInput, match="no benchtape database here"):
        Store(tmp_path / "none.db", readonly=True)
    assert not (tmp_path / "none.db").exists()


def first_release_store(path) -> None:
    db = sqlite_utils.Database(path)
    store_module.MIGRATIONS[0](db)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('01RUN', 'run', 0)")
    db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES ('01SESSION', '01RUN', 'sc', 0)")
    db.conn.commit()
    db.conn.close()


def test_an_older_store_opened_read_only_asks_for_migrate_then_reads(tmp_path):
    path = tmp_path / "old.db"
    first_release_store(path)
    before = digest(path)
    out = cli("sessions", "--db", path)
    assert out.code == 2 and "older benchtape" in out.stderr and "benchtape migrate" in out.stderr
    assert digest(path) == before
    assert cli("migrate", "--db", path).code == 0
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    out = cli("sessions", "--db", path, "--json")
    assert out.code == 0 and [s["id"] for s in orjson.loads(out.stdout)] == ["01SESSION"]


def test_a_newer_store_is_refused_with_the_fix(tmp_path):
    path, _ = a_store(tmp_path)
    with sqlite3.connect(path) as con:
        con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    for readonly in (True, False):
        with pytest.raises(BadInput, match="newer benchtape"):
            Store(path, readonly=readonly)


def test_a_read_only_store_reads_and_refuses_writes(tmp_path):
    path, sid = a_store(tmp_path)
    store = Store(path, readonly=True)
    assert store.raw_lines(sid) == ['{"line": 1}'] and store.actions(sid)[0].data == {"text": "hi"}
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        store.append(sid, [Action("thinking", {"text": "no"})])


WRITE_AND_EXIT = "import sys; from benchtape.store.database import Store; s = Store(sys.argv[1]); s.new_run('from another process'); s.close()"


def test_opening_a_second_reader_keeps_the_first_readers_lock_so_a_writers_exit_leaves_the_wal(tmp_path):
    """On Linux, closing any descriptor of a file drops every POSIX lock the process holds on
    it. Opening a reader once read the header through open()/close(): the first reader's
    shared lock went, a writer's exit then believed it was alone and deleted the -wal and -shm
    under both, and their next reads said "database disk image is malformed" (issue 44)."""
    import subprocess
    import sys

    path, _ = a_store(tmp_path)
    first = Store(path, readonly=True, create=False)
    first.db.conn.execute("SELECT count(*) FROM runs").fetchone()
    second = Store(path, readonly=True, create=False)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", WRITE_AND_EXIT, str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert path.with_name(path.name + "-wal").exists(), "the writer deleted the -wal while this process read it"
    for reader in (first, second):
        assert reader.db.conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
    held = [os.readlink(f"/proc/self/fd/{n}") for n in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{n}")]
    assert not [h for h in held if "(deleted)" in h and str(path) in h]
    first.close()
    second.close()


def test_a_read_only_open_leaves_no_wal_or_shm_beside_a_store_that_had_none(tmp_path):
    path, _ = a_store(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir()), path.stat().st_mtime_ns, digest(path)
    readers = [Store(path, readonly=True, create=False) for _ in range(3)]
    for r in readers:
        r.db.conn.execute("SELECT count(*) FROM runs").fetchone()
    assert path.with_name(path.name + "-shm").exists()  # SQLite needs it while reading
    for r in readers:
        r.close()
    readers[0].close()  # a second close counts nothing twice
    assert (sorted(p.name for p in tmp_path.iterdir()), path.stat().st_mtime_ns, digest(path)) == before


def test_a_read_only_open_leaves_the_wal_of_a_writer_still_open(tmp_path):
    path, _ = a_store(tmp_path)
    writer = Store(path)
    writer.new_run("open writer")
    reader = Store(path, readonly=True, create=False)
    reader.close()
    assert path.with_name(path.name + "-wal").exists()
    writer.new_run("still writing")
    writer.close()


def test_a_read_only_store_dropped_unclosed_closes_its_connection_and_tidies(tmp_path):
    """Most commands never close their store; one that is collected closes its connection (as
    sqlite3 did before read-only connections were counted), and the last one tidies."""
    import gc

    path, _ = a_store(tmp_path)

    def on_store() -> int:
        return sum(1 for n in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{n}") and os.readlink(f"/proc/self/fd/{n}").startswith(str(path)))

    for _ in range(50):
        Store(path, readonly=True, create=False).db.conn.execute("SELECT count(*) FROM runs").fetchone()
    gc.collect()
    assert on_store() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_a_store_on_a_read_only_filesystem_is_read_by_every_reading_command(tmp_path):
    """A store on a read-only mount (a snapshot, a shared volume): SQLite reads a WAL store
    through a -shm index it creates beside it, which such a place refuses, and every reading
    command said "cannot write to the store". With no -wal there, nothing can change the file
    and it is read alone (immutable); the store is not touched."""
    import shutil
    import subprocess
    import sys

    if not shutil.which("unshare") or subprocess.run(["unshare", "-r", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("this host refuses user and mount namespaces (a read-only bind mount needs them)")
    folder = tmp_path / "ro"
    folder.mkdir()
    path, sid = a_store(folder)
    reader = Store(path, readonly=True)
    count = len(reader.actions(sid))
    reader.close()
    before = digest(path)
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    script = " && ".join(
        [f"mount --bind {folder} {folder}", f"mount -o remount,bind,ro {folder}"]
        + [f"{sys.executable} -m benchtape {c} --db {path} > {tmp_path / c.split()[0]}.out" for c in ("sessions", f"query 'length(actions)' --session {sid}", "verify")]
    )
    done = subprocess.run(["unshare", "-r", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert sid[:6] in (tmp_path / "sessions.out").read_text()
    assert orjson.loads((tmp_path / "query.out").read_text()) == count  # one session: its value alone
    assert "clean" in (tmp_path / "verify.out").read_text()
    assert digest(path) == before and sorted(p.name for p in folder.iterdir()) == [path.name]
