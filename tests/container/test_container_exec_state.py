"""When a `docker exec` has ended, as ContainerProcess tells it from Docker's answers.

Docker says "not running, no exit code" of an exec it has not started yet; under load that was
the first answer, and the command counted as ended with exit -1 (a check FAILed, `grade` saw a
DIVERGED verdict). These drive ContainerProcess with a scripted API and a real socket pair as the
exec's stream: no engine is needed to say which answers end a command."""

from __future__ import annotations

import socket
import time
from typing import Any

import docker.errors
import pytest

from benchtape.sandbox.container import ContainerProcess


class _Api:
    """exec_inspect's answers, in order (the last repeats); an exception instance is raised."""

    def __init__(self, answers: list[Any]):
        self.answers = answers
        self.asked = 0

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        answer = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        if isinstance(answer, BaseException):
            raise answer
        return answer


class _Client:
    def __init__(self, answers: list[Any]):
        self.api = _Api(answers)


def _process(answers: list[Any]) -> tuple[ContainerProcess, socket.socket]:
    ours, theirs = socket.socketpair()
    return ContainerProcess(_Client(answers), None, "exec-1", ours, b""), theirs


NOT_STARTED = {"Running": False, "ExitCode": None}
RUNNING = {"Running": True, "ExitCode": None}


def test_an_exec_not_started_yet_is_waited_for_and_its_exit_code_is_the_one_docker_gives():
    proc, theirs = _process([NOT_STARTED, NOT_STARTED, RUNNING, RUNNING, {"Running": False, "ExitCode": 0}])
    try:
        assert proc.returncode is None  # not started: still to come, not an exit
        theirs.close()  # its output ends as it exits
        assert proc.wait(10) == 0
    finally:
        theirs.close()


def test_a_failed_look_is_asked_again_and_a_gone_exec_ends_it():
    proc, theirs = _process([TimeoutError("the API timed out under load"), RUNNING, {"Running": False, "ExitCode": 3}])
    try:
        theirs.close()
        assert proc.wait(10) == 3
    finally:
        theirs.close()
    gone, theirs = _process([docker.errors.NotFound("no such exec")])
    try:
        assert gone.wait(10) == -1  # the container went with it: nothing runs
    finally:
        theirs.close()


def test_an_api_that_never_answers_ends_the_wait_after_a_few_looks():
    proc, theirs = _process([ConnectionError("no engine")])
    try:
        assert proc.wait(30) == -1
        assert proc._client.api.asked >= ContainerProcess.UNANSWERED  # (the stream's reader looks too, when it is quiet)
    finally:
        theirs.close()


def test_output_ended_with_no_exit_code_ends_after_the_grace(monkeypatch):
    monkeypatch.setattr(ContainerProcess, "GRACE", 0.3)
    proc, theirs = _process([NOT_STARTED])
    theirs.close()  # the stream ends; Docker never gives a code
    started = time.monotonic()
    assert proc.wait(10) == -1
    assert time.monotonic() - started >= 0.3


def test_a_command_still_running_times_out_rather_than_ending():
    proc, theirs = _process([NOT_STARTED])
    try:
        with pytest.raises(TimeoutError):
            proc.wait(0.3)
    finally:
        theirs.close()
