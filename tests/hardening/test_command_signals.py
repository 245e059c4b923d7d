"""A command run under the file-size limit or the process fence gets SIGPIPE and SIGXFSZ at their
defaults, as it would anywhere else: Python ignores both at start and an exec keeps ignored
signals, so `set -o pipefail; yes | head -1` ended in "Broken pipe", exit 1, at level home and
141 in a container (a test script could pass in one and fail in the other)."""

from __future__ import annotations

from benchtape.core.command_runner import run_local
from benchtape.sandbox.pidfence import fence

PIPE = ["bash", "-c", "set -o pipefail; yes | head -1 >/dev/null; echo $?"]
IGNORED = ["sh", "-c", "grep SigIgn /proc/self/status"]


def _ignored_mask(text: str) -> int:
    return int(text.split()[-1], 16)


def test_under_the_file_limit_a_broken_pipe_is_a_signal():
    assert run_local(PIPE, "/tmp", timeout=30, file_limit=1 << 30).output.strip() == "141"
    assert _ignored_mask(run_local(IGNORED, "/tmp", timeout=30, file_limit=1 << 30).output) & ((1 << 12) | (1 << 24)) == 0  # SIGPIPE (13) and SIGXFSZ (25) bits


def test_inside_the_process_fence_a_broken_pipe_is_a_signal():
    wrap = fence()
    if not wrap.confined:
        import pytest

        pytest.skip("no PID namespace here (unshare refused)")
    assert run_local(wrap.wrap(PIPE), "/tmp", timeout=30).output.strip() == "141"
