"""kill -9 of a real `benchtape run`: the reproduction the unit tests and `make fuzz` share.

A mock agent makes many tool calls with small sleeps; each call appends its index to a
ledger outside the sandbox *after* the call was printed, so every index in the ledger is a
call the agent printed. benchtape is killed with SIGKILL at a random moment, then
`benchtape recover` runs (when the build has it), and the trial counts what a user would
find: printed calls missing from the store, processes still alive, containers still
present, sandbox folders left in the temp dir, and whether ~/.claude is as it was.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SETTINGS = '{"theme": "dark"}\n'


@dataclass
class Trial:
    killed_after: float
    ledger: int  # calls the agent printed (and then acted on)
    stored: int  # of those, calls found in the store
    lost: int
    processes: list[str] = field(default_factory=list)  # still alive after the grace period
    containers: list[str] = field(default_factory=list)
    temp_left: list[str] = field(default_factory=list)
    claude_restored: bool = True
    statuses: list[str | None] = field(default_factory=list)  # session.finished status per session
    recover: str = ""

    @property
    def clean(self) -> bool:
        return self.lost == 0 and not self.processes and not self.containers and not self.temp_left and self.claude_restored


def bench_text(level: str, calls: int, ledger: str, pause: float, final_sleep: float = 0) -> str:
    steps = ["        - tool: Bash\n          input: {command: \"mkdir -p $HOME/.claude && echo '{\\\"hijacked\\\": 1}' > $HOME/.claude/settings.json\"}"] if level == "workspace" else []
    steps += [f"        - tool: Bash\n          input: {{command: \"echo {i} >> {ledger}; sleep {pause}\"}}" for i in range(calls)]
    if final_sleep:  # a long quiet call: the agent prints nothing while benchtape dies
        steps.append(f"        - tool: Bash\n          input: {{command: \"sleep {final_sleep}\"}}")
    share = "{env: [KILLTAG]}" if level != "container" else "{env: [KILLTAG], paths: [{from: LEDGER_DIR, to: /ledger, access: rw}]}"
    return textwrap.dedent(
        f"""\
        harness: mock
        scenarios:
          - name: many-calls
            prompt: call tools
            timeout: 600s
            sandbox: {{level: {level}, share: {share}}}
            mock:
              steps:
        """
    ) + "\n".join(steps) + "\n"


def tagged_processes(tag: str) -> list[str]:
    """Live (non-zombie) processes whose environment carries KILLTAG=tag."""
    needle = f"KILLTAG={tag}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if needle not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                continue
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid} {cmdline[:120]}")
        except OSError:
            continue
    return found


def labelled_containers(tmp: Path) -> list[str]:
    try:
        import docker
    except ImportError:
        return []
    client = docker.from_env()
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": "benchtape"}, ignore_removed=True) if str(c.labels.get("benchtape.workspace", "")).startswith(str(tmp))]
    finally:
        client.close()


def run_trial(base: Path, *, level: str = "workspace", calls: int = 400, pause: float = 0.004, kill_window: tuple[float, float] = (0.0, 3.0), grace: float = 3.0, seed: int | None = None, final_sleep: float = 0) -> Trial:
    """One kill -9 of `benchtape run` at a random moment, then `benchtape recover`."""
    rnd = random.Random(seed)
    base.mkdir(parents=True, exist_ok=True)
    tmp, home, ledger_dir = base / "tmp", base / "home", base / "ledger"
    for d in (tmp, home / ".claude", ledger_dir):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(SETTINGS)
    ledger = "/ledger/calls" if level == "container" else str(ledger_dir / "calls")
    bench = base / "bench.yaml"
    bench.write_text(bench_text(level, calls, ledger, pause, final_sleep).replace("LEDGER_DIR", str(ledger_dir)))
    db = base / "bt.db"
    tag = uuid.uuid4().hex
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "KILLTAG": tag, "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=base)
    started = time.monotonic()
    while not (ledger_dir / "calls").exists() and proc.poll() is None and time.monotonic() - started < 60:
        time.sleep(0.01)  # recording has begun: the agent acted on its first call
    time.sleep(rnd.uniform(*kill_window))
    killed_after = time.monotonic() - started
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    recover = subprocess.run([sys.executable, "-m", "benchtape", "recover", "--db", str(db)], env=env, capture_output=True, text=True, cwd=base, timeout=300)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (tagged_processes(tag) or (level == "container" and labelled_containers(tmp))):
        time.sleep(0.1)
    printed = {int(x) for x in (ledger_dir / "calls").read_text().split()} if (ledger_dir / "calls").exists() else set()
    stored, statuses = _stored_calls(db)
    lost = sorted(printed - stored)
    return Trial(
        killed_after=round(killed_after, 2),
        ledger=len(printed),
        stored=len(printed & stored),
        lost=len(lost),
        processes=tagged_processes(tag),
        containers=labelled_containers(tmp) if level == "container" else [],
        temp_left=sorted(p.name for p in tmp.iterdir()) if tmp.exists() else [],
        claude_restored=(home / ".claude" / "settings.json").read_text() == SETTINGS if level == "workspace" else True,
        statuses=statuses,
        recover=(recover.stdout + recover.stderr).strip()[-400:],
    )


def _stored_calls(db: Path) -> tuple[set[int], list[str | None]]:
    import json

    if not db.exists():
        return set(), []
    con = sqlite3.connect(db)
    try:
        calls = set()
        for (data,) in con.execute("select data from actions where kind = 'tool.call'"):
            command = json.loads(data).get("input", {}).get("command", "")
            if command.startswith("echo ") and ">>" in command:
                calls.add(int(command.split()[1]))
        statuses = []
        for (sid,) in con.execute("select id from sessions"):
            row = con.execute("select data from actions where session_id = ? and kind = 'session.finished'", [sid]).fetchone()
            statuses.append(json.loads(row[0]).get("status") if row else None)
        return calls, statuses
    finally:
        con.close()


def summary(trials: list[Trial]) -> dict[str, Any]:
    return {
        "trials": len(trials),
        "kills_losing_calls": sum(t.lost > 0 for t in trials),
        "calls_lost": sum(t.lost for t in trials),
        "calls_printed": sum(t.ledger for t in trials),
        "with_orphan_processes": sum(bool(t.processes) for t in trials),
        "with_orphan_containers": sum(bool(t.containers) for t in trials),
        "with_temp_left": sum(bool(t.temp_left) for t in trials),
        "claude_not_restored": sum(not t.claude_restored for t in trials),
        "unfinished_sessions": sum(s is None for t in trials for s in t.statuses),
    }
