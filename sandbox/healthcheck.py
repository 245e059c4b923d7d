"""A Harbor task's healthcheck, waited for as Harbor waits for it before the agent starts.

Harbor (environments/base.py `run_healthcheck`) follows Docker HEALTHCHECK: the command is run
in the agent's environment until it exits 0; within `start_period` a failure does not count and
the next attempt comes `start_interval` later; after it, `retries` consecutive failures fail the
check, `interval` apart. A task whose environment starts a service (its image's ENTRYPOINT, a
step's setup.sh) says this way when the service is up: without the wait the agent, or the
oracle, would meet a service still starting, and the verdict would blame it.

One loop for every caller: a cell's agent (recorder/cellrun.py, in the cell's sandbox) and
`task validate`'s oracle (sandbox/harbor_env.py run_solution, in the phase's sandbox). Each
passes its own `run(command, timeout)`; what came of the wait is kept on record (`to_dict`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from benchtape.spec.task import Healthcheck

OUTPUT_TAIL = 2000  # characters of the last attempt's output kept


class Ran(Protocol):
    """What one attempt gave: a cell's CommandRun and a phase box's CommandResult both are."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def output(self) -> str: ...
    @property
    def timed_out(self) -> bool: ...


@dataclass
class Waited:
    check: Healthcheck
    ok: bool
    attempts: int
    seconds: float
    exit_code: int | None  # the last attempt's
    timed_out: bool  # the last attempt ran past `timeout`
    output: str  # the last attempt's, its tail
    stopped: bool = False  # the run was stopped (Ctrl-C) while waiting: neither healthy nor failed

    def to_dict(self) -> dict[str, Any]:
        return {**self.check.to_dict(), "ok": self.ok, "attempts": self.attempts, "seconds": round(self.seconds, 3), "exit_code": self.exit_code, "timed_out": self.timed_out, "output": self.output, **({"stopped": True} if self.stopped else {})}

    def failure(self, what: str = "the environment's healthcheck", stopped: str = "the agent was not started") -> str:
        last = "ran past its timeout_sec" if self.timed_out else f"exited {self.exit_code}"
        tail = " / ".join(self.output.strip().splitlines()[-3:])
        return (
            f"{what} `{self.check.command}` failed {self.check.retries} time(s) in a row after its start period "
            f"({self.attempts} attempt(s) in {self.seconds:.1f}s; the last {last}{': ' + tail if tail else ''}): "
            f"{stopped}. Start the service in environment/Dockerfile's ENTRYPOINT or the step's setup.sh, "
            "or give it longer (start_period_sec, retries)"
        )


def wait_healthy(check: Healthcheck, run: Callable[[str, float], Ran], *, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = time.sleep, stop: Callable[[], bool] = lambda: False) -> Waited:
    """Run `check.command` until it passes or fails for good (Docker's and Harbor's counting),
    or `stop()` says the run is being stopped (a Ctrl-C: `sleep` may return early then, as an
    Event's wait does), checked before each attempt."""
    began = clock()
    start_period_ends = began + check.start_period
    failures = attempts = 0
    last: Ran | None = None
    while True:
        if stop():
            return Waited(check, False, attempts, clock() - began, last.exit_code if last else None, bool(last and last.timed_out), (last.output or "")[-OUTPUT_TAIL:] if last else "", stopped=True)
        in_start_period = clock() < start_period_ends
        ran = last = run(check.command, check.timeout)
        attempts += 1
        ok = ran.exit_code == 0 and not ran.timed_out
        if ok or (not in_start_period and failures + 1 >= check.retries):
            return Waited(check, ok, attempts, clock() - began, ran.exit_code, ran.timed_out, (ran.output or "")[-OUTPUT_TAIL:])
        if in_start_period:
            sleep(check.start_interval)
        else:
            failures += 1
            sleep(check.interval)
