"""The store tells the truth or says it cannot: every command that opens a store refuses one
whose schema or guards are not benchtape's (a dropped trigger, table or view, a trigger it did
not make), damaged pages are a message naming the file and the fix on every command (never a
traceback, never "up to date"), and `benchtape verify` reads the whole store and says what
it found."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import orjson
import pytest
from storekit import cli, damage_pages, pages_of, store_at_schema

from benchtape.store import integrity
from benchtape.store.database import MIGRATIONS, Store

DEMO_BENCH = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"
TRANSCRIPT = '{"type": "thread.started", "thread_id": "t"}\n{"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "hi"}}\n'


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A real store: `benchtape demo`, twice (two runs, two gradings: diff has two to compare)."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    for _ in range(2):
        assert cli("demo", "--db", path).code == 0
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def store(demo, tmp_path) -> Path:
    copy = tmp_path / "s.db"
    copy.write_bytes(demo.read_bytes())
    return copy


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plain(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def commands(path: Path, tmp: Path) -> dict[str, tuple]:
    """Every kind of command that opens a store: the read-only ones and the recording ones."""
    transcript = tmp / "t.jsonl"
    transcript.write_text(TRANSCRIPT)
    store = Store(path, readonly=True, check_schema=False)
    gradings, session, run = [g["id"] for g in store.gradings()], store.newest_id("sessions"), store.newest_id("runs")
    store.close()  # no connection stays open: each command's is the only one
    return {
        "sessions": ("sessions",),
        "show": ("show", session),
        "query": ("query", "verdicts[].status", "--all"),
        "gradings": ("gradings",),
        "diff": ("diff", gradings[0], gradings[-1]),
        "report": ("report", run, "--html", tmp / "r.html"),
        "grade": ("grade", "--all"),
        "regrade": ("regrade", "--bench", DEMO_BENCH, "--all"),
        "demo": ("demo",),
        "run": ("run", DEMO_BENCH),
        "check": ("check", DEMO_BENCH),
        "import": ("import", "codex", transcript),
        "migrate": ("migrate",),
    }


def forged(path: Path) -> None:
    """What issue 31 did: drop the guard, rewrite a FAIL verdict to PASS."""
    conn = plain(path)
    conn.execute("DROP TRIGGER verdict_sets_no_update")
    changed = conn.execute("""UPDATE verdict_sets SET verdicts = replace(verdicts, '"FAIL",0', '"PASS",1') WHERE verdicts LIKE '%"FAIL",0%'""").rowcount
    assert changed > 0
    conn.close()


def test_the_fingerprint_an_open_compares_is_the_migrations_schema():
    made = integrity.fingerprint(integrity.expected_rows(len(MIGRATIONS)))
    assert integrity.CURRENT_FINGERPRINT == made, f"a migration changed the schema: set CURRENT_FINGERPRINT = {made!r} in store/integrity.py"


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS)))
def test_a_store_migrated_from_any_older_schema_holds_exactly_a_new_stores(tmp_path, version):
    """So the check on open never refuses a store benchtape itself brought forward."""
    db = store_at_schema(tmp_path / "old.db", version)
    db.conn.commit()
    db.conn.close()
    Store(tmp_path / "old.db").close()  # migrates, then checks: raises if anything differs
    assert integrity.differences(plain(tmp_path / "old.db"), len(MIGRATIONS)) == []


def test_a_forged_verdict_behind_a_dropped_guard_is_refused_by_every_command(store, tmp_path):
    run = commands(store, tmp_path)
    forged(store)
    before = digest(store)
    for name, args in run.items():
        out = cli(*args, "--db", store, cwd=tmp_path)
        assert out.code == 2, (name, out.stdout, out.stderr)
        assert str(store) in out.stderr and "trigger verdict_sets_no_update is missing" in out.stderr, (name, out.stderr)
        assert "fix:" in out.stderr and "benchtape migrate --db" in out.stderr and "--repair" in out.stderr
        assert digest(store) == before, name  # nothing written, recording commands included
    assert not (tmp_path / "r.html").exists()


def test_repair_puts_the_guards_back_and_verify_sample_finds_the_forgery(store, tmp_path):
    forged(store)
    conn = plain(store)
    conn.execute("CREATE TRIGGER quiet BEFORE INSERT ON verdict_sets BEGIN SELECT RAISE(IGNORE); END")  # would drop every new verdict
    conn.close()
    found = cli("verify", "--db", store, "--json")
    assert found.code == 1
    assert {(f["part"], f["what"]) for f in orjson.loads(found.stdout)["findings"]} == {("schema", "trigger verdict_sets_no_update is missing"), ("schema", "trigger quiet on verdict_sets is not one benchtape made")}
    out = cli("migrate", "--db", store, "--repair")
    assert out.code == 0, out.stderr
    assert "repaired: trigger verdict_sets_no_update is missing" in out.stdout and "repaired: trigger quiet" in out.stdout and "up to date" in out.stdout
    assert cli("sessions", "--db", store).code == 0
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        plain(store).execute("UPDATE verdict_sets SET verdicts = verdicts")
    sample = cli("verify", "--db", store, "--sample", "6", "--json")
    assert sample.code == 1
    diverged = [f["what"] for f in orjson.loads(sample.stdout)["findings"]]
    assert diverged and all(f.startswith("DIVERGED: session ") and "is stored PASS" in f and "re-graded FAIL" in f for f in diverged)


def test_a_dropped_table_is_a_message_not_a_traceback_and_cannot_be_repaired(store):
    conn = plain(store)
    conn.execute("DROP TABLE judgments")
    conn.close()
    before = digest(store)
    for args in (("sessions",), ("migrate", "--repair")):
        out = cli(*args, "--db", store)
        assert out.code == 2 and "table judgments is missing" in out.stderr and str(store) in out.stderr
        assert "restore the store from a copy" in out.stderr and "cannot be put back" in out.stderr
    assert digest(store) == before
    found = orjson.loads(cli("verify", "--db", store, "--json").stdout)
    assert ("schema", "table judgments is missing") in {(f["part"], f["what"]) for f in found["findings"]}


def test_damaged_pages_are_a_message_on_every_command_and_migrate_never_calls_them_up_to_date(store, tmp_path):
    run = commands(store, tmp_path)
    damage_pages(store, pages_of(store, "actions")[1:] + pages_of(store, "verdict_sets")[1:])  # roots kept: the schema still reads
    conn = plain(store)
    sessions_before = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    conn.close()
    for name, args in run.items():
        out = cli(*args, "--db", store, cwd=tmp_path)
        if name in ("gradings", "diff") and out.code == 0:
            continue  # they read gradings and verdict_sets' key index (none of them damaged) and may answer
        assert out.code == 2, (name, out.stdout, out.stderr)
        assert "damaged" in out.stderr and str(store) in out.stderr and "fix:" in out.stderr and ".recover" in out.stderr, (name, out.stderr)
        assert "up to date" not in out.stdout and "Traceback" not in out.stderr
        import shutil  # the salvage needs SQLite's command-line tool, which Python does not bring: where it is missing, how to get it

        assert ("apt-get install sqlite3" in out.stderr) == (shutil.which("sqlite3") is None), out.stderr
    conn = plain(store)
    assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] >= sessions_before
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE source IS NOT NULL").fetchone()[0] == 0  # the import wrote nothing: all or nothing
    found = cli("verify", "--db", store, "--json")
    assert found.code == 1
    parts = orjson.loads(found.stdout)["findings"]
    assert {"part": "pages", "what": "table actions cannot be read (database disk image is malformed)"} in parts
    assert any(f["part"] == "pages" and f["what"].startswith("table verdict_sets") for f in parts)


def test_verify_finds_tampered_blobs_raw_and_dangling_references_on_a_store_whose_schema_is_intact(store):
    conn = plain(store)
    guards = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE name IN ('blobs_no_update', 'raw_no_update')"))
    for name in guards:
        conn.execute(f"DROP TRIGGER {name}")
    (sha,) = conn.execute("SELECT sha256 FROM blobs ORDER BY sha256 LIMIT 1").fetchone()
    conn.execute("UPDATE blobs SET data = CAST('not the bytes' AS BLOB), size = 13, codec = NULL WHERE sha256 = ?", [sha])
    (raw_sid,) = conn.execute("SELECT session_id FROM raw ORDER BY session_id LIMIT 1").fetchone()
    conn.execute("UPDATE raw SET data = CAST('not zstd' AS BLOB) WHERE session_id = ?", [raw_sid])
    for sql in guards.values():
        conn.execute(sql)  # the guards back exactly: the schema check passes, the rows do not
    conn.execute("INSERT INTO verdict_sets (grading_id, session_id, first_check, created_at, verdicts) VALUES ('01NOGRADING', '01NOSESSION', 'checks[0]', 0, '[]')")
    conn.close()
    assert cli("sessions", "--db", store).code == 0  # an open checks the schema only: cheap
    out = cli("verify", "--db", store, "--json")
    assert out.code == 1
    found = {(f["part"], f["what"]) for f in orjson.loads(out.stdout)["findings"]}
    assert ("blobs", f"blob {sha[:12]}…: its bytes do not hash to its sha256 (changed after they were stored)") in found
    assert any(part == "raw" and what.startswith(f"session {raw_sid}: the chunk from line 1 does not decompress") for part, what in found)
    assert ("references", "verdict_sets 01NOGRADING/01NOSESSION names grading 01NOGRADING, which the store does not hold") in found
    assert ("references", "verdict_sets 01NOGRADING/01NOSESSION names session 01NOSESSION, which the store does not hold") in found
    assert not [f for f in found if f[0] in ("schema", "pages")]


def test_verify_a_clean_store_and_one_it_cannot_open(demo, tmp_path):
    before = digest(demo)
    out = cli("verify", "--db", demo, "--sample", "3", "--json")
    assert out.code == 0, out.stdout + out.stderr
    doc = orjson.loads(out.stdout)
    assert doc["clean"] and doc["findings"] == [] and doc["checked"]["blobs"] > 0 and doc["checked"]["re-graded sessions"] == 3
    assert digest(demo) == before  # read-only, the sample recorded nowhere
    text = cli("verify", "--db", demo)
    assert text.code == 0 and "clean: nothing found" in text.stdout
    for bad in (tmp_path / "none.db", DEMO_BENCH):
        out = cli("verify", "--db", bad)
        assert out.code == 2 and str(bad) in out.stderr and "fix:" in out.stderr
