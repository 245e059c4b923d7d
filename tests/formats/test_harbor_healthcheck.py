"""A Harbor task's healthcheck (`[environment.healthcheck]`, a step's `healthcheck`), honoured as
Harbor honours it: run in the agent's environment until it passes before the agent (or the
oracle) starts, Docker's counting (a start period whose failures do not count, then `retries`
failures in a row). The counting is checked against the REAL Harbor's own loop
(`BaseEnvironment.run_healthcheck`, run in its venv); a service that starts slowly in a real
container is waited for, one that never comes up stops the cell before its agent, as staging's
fault; `task validate` waits the same way before solution/solve.sh. The step's healthcheck under
the real `harbor run` is tests/formats/test_harbor_steps.py's."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from formatskit import benchtape
from harborkit import claude_reported, harbor_script

from benchtape.core.errors import BadInput
from benchtape.sandbox.healthcheck import wait_healthy
from benchtape.spec.harbor_task import load_harbor_task
from benchtape.spec.task import Healthcheck
from benchtape.store.database import Store

TOML = """version = "1.0"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 120.0

[environment]
network_mode = "no-network"
{healthcheck}"""
# a service that comes up 3 s after the container starts (its image's ENTRYPOINT), as a database does
SLOW_SERVICE = 'RUN printf \'#!/bin/sh\\n(sleep 3; echo up > /tmp/service) &\\nexec "$@"\\n\' > /start.sh && chmod +x /start.sh\nENTRYPOINT ["/start.sh"]\n'
TEST_SH = '#!/bin/bash\nif [ "$(cat /app/answer.txt 2>/dev/null)" = up ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'


class _Ran:
    def __init__(self, code: int | None, timed_out: bool = False):
        self.exit_code, self.output, self.timed_out = code, f"attempt exited {code}", timed_out


def _ours(check: Healthcheck, codes: list[int]) -> tuple[bool, int]:
    """wait_healthy over a command whose attempts exit with `codes` in turn (the last repeats),
    on a clock that a sleep moves on: (passed, attempts)."""
    now = [0.0]
    seen: list[int] = []

    def run(command: str, timeout: float) -> _Ran:
        seen.append(1)
        return _Ran(codes[min(len(seen), len(codes)) - 1])

    def sleep(seconds: float) -> None:
        now[0] += seconds

    waited = wait_healthy(check, run, clock=lambda: now[0], sleep=sleep)
    assert waited.attempts == len(seen)
    return waited.ok, waited.attempts


HARBORS_LOOP = textwrap.dedent(
    """
    import asyncio, json, logging, sys
    from types import SimpleNamespace
    from harbor.environments.base import BaseEnvironment
    from harbor.models.task.config import HealthcheckConfig

    out = []
    for case in json.loads(sys.argv[1]):
        codes, seen = case["codes"], []

        async def exec(command, timeout_sec=None, **kw):
            seen.append(1)
            return SimpleNamespace(return_code=codes[min(len(seen), len(codes)) - 1], stdout="", stderr="")

        env = SimpleNamespace(task_env_config=SimpleNamespace(healthcheck=None), logger=logging.getLogger("hc"), exec=exec)
        try:
            asyncio.run(BaseEnvironment.run_healthcheck(env, HealthcheckConfig(**case["check"])))
            out.append([True, len(seen)])
        except Exception as exc:
            out.append([False, len(seen), type(exc).__name__])
    print(json.dumps(out))
    """
)


def test_the_wait_counts_failures_as_the_real_harbors_loop_does() -> None:
    """The same checks over the same attempts, through our loop and the real Harbor's: the same
    verdict after the same number of attempts. (Harbor's sleeps are real: the intervals here are
    short; a start period long enough that no attempt outlives it keeps its count exact.)"""
    cases = [
        ({"command": "probe", "retries": 3, "interval_sec": 0.01}, [1]),  # never: 3 failures in a row
        ({"command": "probe", "retries": 3, "interval_sec": 0.01}, [1, 1, 0]),  # the third attempt passes
        ({"command": "probe", "retries": 1, "interval_sec": 0.01}, [1, 0]),  # one failure is all it takes: the pass comes too late
        ({"command": "probe", "retries": 2, "start_period_sec": 60.0, "start_interval_sec": 0.01}, [1, 1, 1, 1, 0]),  # failures in the start period do not count
        ({"command": "probe", "retries": 5, "interval_sec": 0.01}, [2, 7, 0]),
    ]
    script = harbor_script().parent / "python"
    done = subprocess.run([str(script), "-c", HARBORS_LOOP, json.dumps([{"check": c, "codes": codes} for c, codes in cases])], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    assert [t[2] for t in theirs if not t[0]] == ["HealthcheckError"] * 2  # the two that fail for good fail as Harbor's own error
    for (check, codes), their in zip(cases, theirs):
        hc = Healthcheck(check["command"], check.get("interval_sec", 5.0), 30.0, check.get("start_period_sec", 0.0), check.get("start_interval_sec", 5.0), check["retries"])
        assert _ours(hc, codes) == (their[0], their[1]), (check, codes, their)
    # a start period that runs out part-way: its failures never count, the ones after it do
    assert _ours(Healthcheck("probe", interval=1.0, start_period=2.5, start_interval=1.0, retries=2), [1]) == (False, 5)  # at 0, 1, 2 (grace), then 3, 4
    # a run stopped meanwhile (Ctrl-C) ends the wait at once, neither healthy nor failed: an
    # Event's wait as the sleep, its flag as the stop
    import threading

    cancel = threading.Event()
    attempts: list[int] = []

    def run(command: str, timeout: float) -> _Ran:
        attempts.append(1)
        cancel.set()  # Ctrl-C during the first attempt: the hour's sleep after it returns at once
        return _Ran(1)

    stopped = wait_healthy(Healthcheck("probe", interval=3600.0, retries=100), run, sleep=cancel.wait, stop=cancel.is_set)
    assert (stopped.ok, stopped.stopped, stopped.attempts, stopped.to_dict()["stopped"]) == (False, True, 1, True)
    # an attempt that runs past its timeout_sec is a failure, whatever it exits with
    assert not wait_healthy(Healthcheck("probe", retries=1), lambda c, t: _Ran(0, timed_out=True), clock=lambda: 0.0, sleep=lambda s: None).ok


def _task(folder: Path, healthcheck: str, dockerfile: str = "") -> Path:
    from benchtape.sandbox.baseimage import BASE_IMAGE

    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(TOML.format(healthcheck=healthcheck))
    (folder / "instruction.md").write_text("Write what the service at /tmp/service says into /app/answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\n{dockerfile}")
    (folder / "tests" / "test.sh").write_text(TEST_SH)
    (folder / "solution" / "solve.sh").write_text("#!/bin/bash\n(cat /tmp/service 2>/dev/null || echo 'not up yet') > /app/answer.txt\n")
    return folder


def test_a_healthcheck_is_read_with_harbors_defaults_and_a_bad_one_is_refused_by_its_line(tmp_path: Path) -> None:
    folder = _task(tmp_path / "warm", '\n[environment.healthcheck]\ncommand = "test -f /tmp/service"\nstart_period_sec = 20\n')
    runtime = load_harbor_task(folder).runtime
    assert runtime is not None and runtime.healthcheck == Healthcheck("test -f /tmp/service", interval=5.0, timeout=30.0, start_period=20.0, start_interval=5.0, retries=3)
    toml = folder / "task.toml"
    for written, key, fix in (
        ('\n[environment.healthcheck]\ncommand = "true"\nretrys = 5\n', "retrys", "did you mean `retries`?"),
        ('\n[environment.healthcheck]\ncommand = "true"\nretries = 0\n', "retries", "retries = 3"),
        ('\n[environment.healthcheck]\ncommand = "true"\ninterval_sec = -1\n', "interval_sec", "interval_sec = 5"),
        ('\n[environment.healthcheck]\ninterval_sec = 1\n', "healthcheck", "exit 0: healthy"),  # no command: the table's own line
        ('healthcheck = { command = "true", timeout_sec = "30" }\n', "healthcheck", "timeout_sec = 30"),  # inline: its one line
        ('healthcheck = "curl localhost"\n', "healthcheck", "healthcheck = {"),
    ):
        text = TOML.format(healthcheck=written)
        toml.write_text(text)
        with pytest.raises(BadInput) as err:
            load_harbor_task(folder)
        assert err.value.file == str(toml) and fix in (err.value.fix or ""), (written, err.value)
        line = text.splitlines()[err.value.line - 1]
        assert line.split("=")[0].strip().strip("[]").split(".")[-1] == key, (written, line)


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_a_slow_service_is_waited_for_and_one_that_never_comes_up_stops_the_cell(tmp_path: Path) -> None:
    """Three tasks on one slow service (up 3 s after its container starts): `warm` waits for it
    (a healthcheck with a start period), `hasty` has none and its oracle reads nothing (so the wait
    is what made `warm` pass), `never` checks for what never appears: its cell stops before the
    oracle, on record as staging's failure with every attempt counted. `task validate` waits the
    same way before solution/solve.sh."""
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: the healthcheck in a container NOT RUN: {why}")
    tasks = tmp_path / "tasks"
    _task(tasks / "warm", '\n[environment.healthcheck]\ncommand = "test -f /tmp/service"\nstart_period_sec = 30\nstart_interval_sec = 0.5\n', SLOW_SERVICE)
    _task(tasks / "hasty", "", SLOW_SERVICE)
    _task(tasks / "never", '\n[environment.healthcheck]\ncommand = "test -f /tmp/never"\ninterval_sec = 0.2\nretries = 2\n', SLOW_SERVICE)
    db = tmp_path / "h.db"
    done = benchtape("run", tasks, "--harness", "oracle", "--sandbox", "container", "--yes", "--json", "--db", db, cwd=tmp_path, timeout=900)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    cells = _cells(db, json.loads(done.stdout)["run_id"])
    assert cells["warm"]["outcome"] == "passed" and cells["hasty"]["outcome"] == "failed", {k: v["outcome"] for k, v in cells.items()}
    warm = cells["warm"]["cell"]["healthcheck"]
    assert warm["ok"] and warm["attempts"] > 1 and warm["seconds"] >= 1.0, warm  # it was not up at first
    never = cells["never"]
    assert never["outcome"] == "infrastructure_error" and never["calls"] == 0, never  # the oracle never ran, and it is not the agent's failure
    assert (never["cell"]["healthcheck"]["ok"], never["cell"]["healthcheck"]["attempts"]) == (False, 2)
    assert any("`test -f /tmp/never` failed 2 time(s) in a row" in e and "the agent was not started" in e for e in never["errors"]), never["errors"]

    repo = tmp_path / "project"
    (repo / ".benchtape").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".benchtape" / "tasks").symlink_to(tasks)
    done = benchtape("task", "validate", "warm", "never", "--sandbox", "container", "--json", cwd=repo, timeout=900)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-3000:]
    reports = {t["id"]: t for t in json.loads(done.stdout)["tasks"]}
    assert reports["warm"]["validated"] and reports["warm"]["phases"]["reference"]["reward"] == 1.0, reports["warm"]
    assert not reports["never"]["validated"]
    assert "solution/solve.sh was not run" in Path(reports["never"]["phases"]["reference"]["log_path"]).read_text()


def _cells(db: Path, run_id: str) -> dict[str, dict[str, Any]]:
    store = Store(db, readonly=True)
    try:
        out: dict[str, dict[str, Any]] = {}
        for row in store.session_rows(run_id=run_id):
            session = store.load_session(row.id)
            errors = [a.data.get("message", "") for a in session.actions if a.kind == "error"]
            out[row.scenario] = {"outcome": store.outcomes([row.id])[row.id][-1]["outcome"], "cell": session.started.get("cell") or {}, "calls": len(session.calls), "errors": errors}
        return out
    finally:
        store.close()


# ---------------------------------------------------------------- skills_dir


SKILL = "---\nname: greeter\ndescription: Greets in the house style. Use when asked to greet.\n---\n\nSay `Hello, world!` and nothing else.\n"


def test_skills_dir_is_given_to_the_real_claude_code_and_said_for_a_harness_that_takes_none(tmp_path: Path) -> None:
    """`[environment] skills_dir = "/skills"`, made by the Dockerfile's `COPY skills/ /skills/`
    (Harbor's own layout): the real Claude Code finds the skill in its ~/.claude/skills/, as
    Harbor copies it there, and says so in its own init line (`environment.reported`); a
    harness benchtape gives no skills to is said before the run, and a skills_dir no COPY makes."""
    from benchtape.sandbox.harbor_env import skills_notes, skills_source

    tasks = tmp_path / "tasks"
    folder = _task(tasks / "skilled", "skills_dir = \"/skills\"\n", "COPY skills/ /skills/\n")
    (folder / "environment" / "skills" / "greeter").mkdir(parents=True)
    (folder / "environment" / "skills" / "greeter" / "SKILL.md").write_text(SKILL)
    task = load_harbor_task(folder)
    assert task.runtime is not None and task.runtime.skills_dir == "/skills" and skills_source(task) == folder / "environment" / "skills"
    assert skills_notes([task], ["claude-code", "oracle"]) == []
    assert any("codex run without them: skilled" in n for n in skills_notes([task], ["codex"]))
    (folder / "environment" / "Dockerfile").write_text((folder / "environment" / "Dockerfile").read_text().replace("COPY skills/ /skills/\n", "RUN git clone https://example.invalid/skills /skills\n"))
    assert skills_source(load_harbor_task(folder)) is None and "is no folder environment/Dockerfile copies" in skills_notes([load_harbor_task(folder)], ["claude-code"])[0]
    (folder / "environment" / "Dockerfile").write_text((folder / "environment" / "Dockerfile").read_text().replace("RUN git clone https://example.invalid/skills /skills\n", "COPY skills/ /skills/\n"))

    reported, outcome = claude_reported(tasks, tmp_path)
    assert reported and "greeter" in (reported[-1].get("skills") or []), reported  # (without the staging it is not there: checked by hand)
    assert outcome == "no_changes", outcome  # the scripted model only answers: the skills staged into HOME are benchtape's, never the agent's change
