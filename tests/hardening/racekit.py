"""The snapshot race: after the agent exits, a process it left inside the container keeps
swapping workspace folders with symlinks to /etc. A snapshot that follows such a link (on
the host side, where /etc is the host's) stores host files. Shared by the test (a few
trials) and `make fuzz` (100)."""

from __future__ import annotations

import io
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

from benchtape.store.database import inflate_blob

FOLDERS = 8
# Our files carry the names of host files, so a read that follows a swapped link stores the host's.
NAMES = ("passwd", "group", "hosts", "hostname", "fstab", "shells", "profile", "os-release", "resolv.conf", "issue")
OURS = b"ours\n"

# Inside the container: folders of our own files, then a detached swapper that outlives the agent.
SWAPPER = (
    f"for d in $(seq {FOLDERS}); do mkdir -p d$d; for f in {' '.join(NAMES)}; do echo ours > d$d/$f; done; done; "
    "setsid sh -c 'while true; do for d in $(seq " + str(FOLDERS) + "); do mv d$d d$d.real && ln -s /etc d$d; done; "
    "for d in $(seq " + str(FOLDERS) + "); do rm -f d$d && mv d$d.real d$d; done; done' >/dev/null 2>&1 < /dev/null & "
    "sleep 0.3; echo swapping"
)


def bench_text(trials: int) -> str:
    return textwrap.dedent(
        f"""\
        harness: mock
        scenarios:
          - name: swap-to-etc
            prompt: leave a swapper behind
            sandbox: {{level: container}}
            mock:
              steps:
                - tool: Bash
                  input: {{command: "{SWAPPER}"}}
                - say: done
        """
    )


def host_files(snapshot: bytes) -> list[str]:
    """Snapshot entries that are not the workspace's own: files we did not write (a folder
    followed into /etc) and files of ours whose content is not ours (a read through a link)."""
    found = []
    with tarfile.open(fileobj=io.BytesIO(snapshot)) as tar:
        for m in tar.getmembers():
            leaf = m.name.rsplit("/", 1)[-1]
            if m.isdir() or m.issym():
                continue
            if leaf not in NAMES or tar.extractfile(m).read() != OURS:
                found.append(m.name)
    return found


def run_trials(base: Path, trials: int, concurrency: int = 2) -> dict[str, object]:
    """Sessions snapshotted, host files stored in all of them, sessions storing any, a sample."""
    base.mkdir(parents=True, exist_ok=True)
    bench = base / "bench.yaml"
    bench.write_text(bench_text(trials))
    db = base / "race.db"
    subprocess.run([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain", "--repeat", str(trials), "--concurrency", str(concurrency)], capture_output=True, text=True, timeout=60 + 20 * trials, cwd=base)
    con = sqlite3.connect(db)
    try:
        shas = [row[0] for row in con.execute("select json_extract(data, '$.sha256') from actions where kind = 'workspace.snapshot' and json_extract(data, '$.stage') is null")]  # the final ones (the staged tree is the bench's)
        stored, hit = [], 0
        for sha in shas:
            blob, codec, size = con.execute("select data, codec, size from blobs where sha256 = ?", [sha]).fetchone()
            found = host_files(bytes(blob) if codec is None else inflate_blob(bytes(blob), codec, size, db, sha))
            stored.extend(found)
            hit += bool(found)
        sessions = con.execute("select count(*) from sessions").fetchone()[0]
    finally:
        con.close()
    return {"sessions": sessions, "snapshots": len(shas), "host_files": len(stored), "sessions_with_host_files": hit, "sample": stored[:10]}
