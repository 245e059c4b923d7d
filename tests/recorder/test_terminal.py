"""The terminal host (tmux on a private socket): start a command with exactly the given
environment, read its screen, type, paste, and read its exit status."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchtape.sandbox.terminal import PaneCommand, Terminal, tmux_problem, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")


def test_a_command_in_a_pane_is_typed_into_and_read_back(tmp_path: Path):
    assert tmux_problem() is None
    # The pause before exiting: tmux 3.3a, under load, can take the exit before reading the
    # last output from the terminal, and that output is then never drawn (CI met it once:
    # the screen had the echoed input and "Pane is dead", no "[one|two]").
    script = 'echo "ready $SECRET_ONLY_HERE"; read a; read b; echo "[$a|$b]"; sleep 1; exit 7'
    term = Terminal(PaneCommand(["/bin/sh", "-c", script], tmp_path, {"PATH": "/usr/bin:/bin", "SECRET_ONLY_HERE": "pane-env"})).start()
    try:
        assert wait_for(lambda: "ready pane-env" in term.screen(), 30)
        term.type("one")
        term.keys("Enter")
        term.paste("two")
        term.keys("Enter")
        assert wait_for(lambda: "[one|two]" in term.screen(), 30)
        assert wait_for(lambda: term.exit_status() is not None, 30)
        assert term.exit_status() == 7
    finally:
        term.close()
    assert not term.folder.exists()


def test_kill_ends_the_pane_and_its_group(tmp_path: Path):
    term = Terminal(PaneCommand(["/bin/sh", "-c", "sleep 30 & sleep 30"], tmp_path, {"PATH": "/usr/bin:/bin"})).start()
    try:
        assert term.pane_pid is not None
        term.kill()
        assert wait_for(lambda: term.exit_status() is not None, 30)
        assert term.exit_status() == -9
    finally:
        term.close()


def test_kill_right_after_start_ends_a_pane_not_yet_in_its_own_group(tmp_path: Path):
    """tmux forks the pane's process, which then makes its own session: a kill landing in
    between finds no process group by that id, and must still kill the process (this test,
    once under load, saw `sleep 30` outlive the kill)."""
    import signal
    import subprocess

    child = subprocess.Popen(["sleep", "30"])  # in this process's group, as a just-forked pane is in tmux's
    term = Terminal(PaneCommand(["/bin/true"], tmp_path, {"PATH": "/usr/bin:/bin"}))
    try:
        term.pane_pid = child.pid
        term._pane_running = lambda: True  # what tmux says of a pane whose process runs
        term.kill()
        assert child.wait(10) == -signal.SIGKILL
    finally:
        child.kill()
        term.close()


def test_kill_after_the_pane_exited_signals_nothing(tmp_path: Path, monkeypatch):
    """Once tmux has reaped the pane's process its id is free for another process's group:
    closing a finished session must not signal it."""
    import os

    term = Terminal(PaneCommand(["/bin/sh", "-c", "exit 3"], tmp_path, {"PATH": "/usr/bin:/bin"})).start()
    try:
        assert wait_for(lambda: term.exit_status() is not None, 30) and term.exit_status() == 3
        sent: list[tuple] = []
        monkeypatch.setattr(os, "killpg", lambda *a: sent.append(("killpg", *a)))
        monkeypatch.setattr(os, "kill", lambda *a: sent.append(("kill", *a)))
        term.kill()
        assert sent == []
    finally:
        monkeypatch.undo()
        term.close()


def test_a_deep_tmpdir_still_gets_a_socket_tmux_can_bind(tmp_path, monkeypatch):
    """Under a test runner's or a CI's deep TMPDIR the socket path passed sun_path's 107 bytes and
    tmux refused to start ("File name too long"): the socket then goes under /tmp, still private."""
    import tempfile

    from benchtape.sandbox import terminal

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = terminal._socket_folder()
    try:
        assert len(str(folder / "tmux.sock").encode()) <= terminal.SOCKET_PATH_MAX
        assert folder.stat().st_mode & 0o777 == 0o700
    finally:
        folder.rmdir()
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    near = terminal._socket_folder()  # a TMPDIR short enough keeps the socket there
    assert near.parent == Path("/tmp")
    near.rmdir()
