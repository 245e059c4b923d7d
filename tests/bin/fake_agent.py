"""What the stand-in agents (tests/bin/fake-claude, tests/bin/fake-codex) do: print a real transcript.

They replay a capture from realdata line by line, like a live agent, so the recorder
can be tested end to end (streaming, timeouts, kills, exit codes) without a model.
Environment: FAKE_TRANSCRIPT (a path; relative paths are looked up under the
realdata folder), FAKE_DELAY (seconds between lines), FAKE_EXIT (exit code),
FAKE_HANG=1 (sleep forever after printing, for timeout tests; `--version` alone is answered
first, as the real binary answers it, so the version probe never waits on a hang), FAKE_STOP_AFTER=N
(print only N lines), FAKE_CUT=N (then print the first N characters of the next
line with no newline: a killed process's last line), FAKE_ARGV=path (write argv,
stdin and cwd there as JSON, so a test can see how the agent was started).
"""

import json
import os
import sys
import time
from pathlib import Path


def realdata() -> Path:
    beside = Path(__file__).resolve().parents[2] / "../shared/realdata"
    env = os.environ.get("BENCHTAPE_REALDATA")
    return Path(env) if env and not beside.is_dir() else beside


def main(default: str, version: str | None = None) -> int:
    if version is not None and sys.argv[1:] == ["--version"]:  # as the real binary answers benchtape's version probe
        print(version)
        return 0
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    if os.environ.get("FAKE_ARGV"):
        Path(os.environ["FAKE_ARGV"]).write_text(json.dumps({"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd()}))
    name = os.environ.get("FAKE_TRANSCRIPT") or default
    path = Path(name) if Path(name).is_absolute() or Path(name).exists() else realdata() / name
    lines = path.read_text().splitlines()
    stop = int(os.environ.get("FAKE_STOP_AFTER") or len(lines))
    delay = float(os.environ.get("FAKE_DELAY") or 0)
    for line in lines[:stop]:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if delay:
            time.sleep(delay)
    cut = int(os.environ.get("FAKE_CUT") or 0)
    if cut and stop < len(lines):
        sys.stdout.write(lines[stop][:cut])
        sys.stdout.flush()
    if os.environ.get("FAKE_HANG") == "1":
        while True:
            time.sleep(3600)
    return int(os.environ.get("FAKE_EXIT") or 0)

