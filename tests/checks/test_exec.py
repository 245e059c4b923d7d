"""`exec` against the workspace a real mock agent left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog
from benchtape.core.command_runner import CommandResult


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    steps = [
        {"tool": "Write", "input": {"file_path": "out.txt", "content": "fizzbuzz\n"}},
        {"tool": "Write", "input": {"file_path": "sub/inner.txt", "content": "x"}},
        {"say": "wrote the files"},
    ]
    session = mock_session(root, steps)
    return session, CheckContext(work_dir=Path(session.work_dir))


def test_pass_and_fail(workspace):
    s, ctx = workspace
    r = grade({"type": "exec", "args": {"cmd": ["grep", "-q", "fizzbuzz", "out.txt"]}}, s, ctx)
    assert r.passed and r.status == "PASS"
    assert r.evidence == {"argv": ["grep", "-q", "fizzbuzz", "out.txt"], "cwd": str(Path(s.work_dir).resolve()), "exit_code": 0, "expected_exit": 0, "timed_out": False, "output_tail": ""}
    r = grade({"type": "exec", "value": "test -f missing.txt"}, s, ctx)
    assert not r.passed and r.evidence["exit_code"] == 1 and "exited 1, expected 0" in r.reason


def test_expected_exit_and_shell_through_cmd(workspace):
    s, ctx = workspace
    assert grade({"type": "exec", "value": "false", "args": {"expected_exit": 1}}, s, ctx).passed
    r = grade({"type": "exec", "args": {"cmd": ["sh", "-c", "cat out.txt | tr a-z A-Z; exit 3"]}}, s, ctx)
    assert not r.passed and r.evidence["exit_code"] == 3 and "FIZZBUZZ" in r.reason and "FIZZBUZZ" in r.evidence["output_tail"]


def test_cwd_inside_the_workspace(workspace, tmp_path):
    s, ctx = workspace
    assert grade({"type": "exec", "value": "test -f inner.txt", "args": {"cwd": "sub"}}, s, ctx).passed
    assert grade({"type": "exec", "value": "test -f out.txt", "args": {"cwd": str(Path(s.work_dir))}}, s, CheckContext()).passed
    # a symlink that leads out of the workspace is caught after resolution
    link = Path(s.work_dir) / "escape"
    if not link.exists():
        os.symlink(tmp_path, link)
    r = grade({"type": "exec", "value": "true", "args": {"cwd": "escape"}}, s, ctx)
    assert r.status == "ERROR" and "resolves outside the workspace" in r.reason


def test_no_workspace_is_an_error(workspace):
    s, _ = workspace
    r = grade({"type": "exec", "value": "true"}, s, CheckContext())
    assert r.status == "ERROR" and r.reason.startswith("exec: no workspace to run in")


def test_an_imported_session_says_it_never_had_a_workspace(workspace):
    """An imported transcript's session has no workspace because benchtape never saw one, not
    because restoring it failed: the reason says which (still an ERROR, counted as before)."""
    from benchtape.core.model import Action, project

    imported = project([Action("session.started", {"scenario": "s", "imported_from": ["/home/u/.claude/projects/p/s.jsonl"]}), Action("session.finished", {"status": "ok"})])
    r = grade({"type": "exec", "value": "true"}, imported, CheckContext())
    assert r.status == "ERROR" and r.reason.startswith("exec: no workspace to run in (the session was imported from a transcript")
    s, _ = workspace
    assert "no restored work_dir" in grade({"type": "exec", "value": "true"}, s, CheckContext()).reason


def test_timeout_fails_with_the_evidence(workspace):
    s, ctx = workspace
    r = grade({"type": "exec", "args": {"cmd": ["sh", "-c", "echo started; sleep 5"], "timeout": "300ms"}}, s, ctx)
    assert not r.passed and r.status == "FAIL" and r.evidence["timed_out"] is True and r.evidence["exit_code"] is None
    assert "timed out after 0.3s" in r.reason


def test_output_tail_is_bounded(workspace):
    s, ctx = workspace
    r = grade({"type": "exec", "args": {"cmd": ["sh", "-c", "i=0; while [ $i -lt 400 ]; do echo line$i; i=$((i+1)); done; exit 2"]}}, s, ctx)
    tail = r.evidence["output_tail"]
    assert "line399" in tail and "line0\n" not in tail and len(tail.encode()) <= 2048 + 3
    assert "line399" in r.reason


def test_missing_program_is_an_error(workspace):
    s, ctx = workspace
    r = grade({"type": "exec", "value": "no-such-program-xyz --flag"}, s, ctx)
    assert r.status == "ERROR" and "cannot start 'no-such-program-xyz'" in r.reason


def test_runs_through_the_context_runner(workspace):
    s, _ = workspace
    seen = []

    def runner(argv, cwd, timeout, env=None, stdin=None):
        seen.append((argv, Path(cwd), timeout))
        return CommandResult(7, "from the sandbox")

    r = grade({"type": "exec", "value": "make test", "args": {"expected_exit": 7, "timeout": "2m"}}, s, CheckContext(work_dir=Path(s.work_dir), run_command=runner))
    assert r.passed and seen == [(["make", "test"], Path(s.work_dir).resolve(), 120.0)]


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "exec"}, "exec: 'cmd' (string slice) or 'value' (string) is required"),
        ({"type": "exec", "value": "   "}, "exec: 'cmd' (string slice) or 'value' (string) is required"),
        ({"type": "exec", "args": {"cmd": "make test"}}, "exec: 'cmd' (string slice) or 'value' (string) is required"),
        ({"type": "exec", "args": {"cmd": []}}, "exec: 'cmd' (string slice) or 'value' (string) is required"),
        ({"type": "exec", "value": "true", "args": {"timeout": 30}}, 'exec: args.timeout 30 has no unit: write it with one, e.g. "30s"'),
        ({"type": "exec", "value": "true", "args": {"timeout": "30"}}, 'exec: args.timeout "30" has no unit'),
        ({"type": "exec", "value": "true", "args": {"timeout": "soon"}}, 'exec: args.timeout "soon" is not a duration'),
        ({"type": "exec", "value": "true", "args": {"cwd": "../elsewhere"}}, "exec: args.cwd '../elsewhere' leaves the workspace"),
        ({"type": "exec", "value": "true", "args": {"expected_exit": "0"}}, "exec: args.expected_exit must be a whole number"),
        ({"type": "exec", "value": "go test ./... | tee log"}, "exec: value 'go test ./... | tee log' looks like shell syntax (|), but exec runs no shell: write args.cmd: [sh, -c,"),
        ({"type": "exec", "value": "grep -q 'a b' f"}, "looks like shell syntax"),
        ({"type": "exec", "value": "echo $HOME"}, "looks like shell syntax"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


def test_durations():
    from benchtape.checks.common import parse_duration

    assert parse_duration("300s", type="t", default="1s") == 300
    assert parse_duration("2m", type="t", default="1s") == 120
    assert parse_duration("1500ms", type="t", default="1s") == 1.5
    assert parse_duration("1m30s", type="t", default="1s") == 90
    assert parse_duration(None, type="t", default="60s") == 60


def test_registration():
    info = catalog()["exec"]
    assert info.kind == "Code" and info.reads_workspace


def test_run_local_timeout_kills_the_whole_process_group(tmp_path):
    """A timed-out `sh -c` leaves no grandchild behind to finish its work later."""
    import time

    from benchtape.core.command_runner import run_local

    marker = tmp_path / "late.txt"
    result = run_local(["sh", "-c", f"sleep 1.5; echo late > {marker}"], tmp_path, timeout=0.3)
    assert result.timed_out and result.exit_code is None
    time.sleep(2)
    assert not marker.exists()
