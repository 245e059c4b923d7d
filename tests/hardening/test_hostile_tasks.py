"""A task is someone else's code: what its verifier, its folder or its files contain must never
have the host read a file of its own, hang past the task's timeout, or leave work behind
(issue 44, items 2, 3, 5, 7). Real boxes: level home through unshare, level container through
the real Docker engine (skipped loudly without one, failed in CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchtape.spec.harbor_task import load_harbor_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"
SECRET = "host-secret-3f9c1d: the host read this file"


@pytest.fixture(scope="module")
def engine() -> None:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: hostile tasks at level container NOT RUN: {why}")


def hostile(tmp_path: Path, test_sh: str, name: str = "hostile") -> Path:
    folder = shutil.copytree(FIXTURES / "hello-file", tmp_path / name)
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\n" + test_sh)
    return folder


def run_verifier(folder: Path, level: str, tmp_path: Path) -> Any:
    from benchtape.sandbox import harbor_env

    env = harbor_env.prepare(load_harbor_task(folder), level)
    work = harbor_env.starting_workspace(env, tmp_path / "work")
    return harbor_env.run_verifier(env, work, tmp_path / "scratch")


def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host-only" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


LINKS = {
    "reward.txt": 'ln -s {secret} /logs/verifier/reward.txt\n',
    "reward.json": 'ln -s {secret} /logs/verifier/reward.json\n',
}


def _check_not_followed(ev: Any, secret: Path) -> None:
    assert ev.status == "failed" and ev.reward is None, ev
    assert SECRET not in ev.detail and "3f9c1d" not in ev.detail and "3f9c1d" not in str(ev.to_dict())
    assert "symbolic link" in ev.detail, ev.detail


@pytest.mark.parametrize("which", ["reward.txt", "reward.json"])
def test_a_reward_linked_to_a_host_file_is_not_followed_at_home(tmp_path: Path, which: str):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    secret = host_secret(tmp_path)
    ev = run_verifier(hostile(tmp_path, LINKS[which].format(secret=secret)), "home", tmp_path)
    _check_not_followed(ev, secret)


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
@pytest.mark.parametrize("which", ["reward.txt", "reward.json"])
def test_a_reward_linked_to_a_host_file_is_not_followed_in_a_container(engine: None, tmp_path: Path, which: str):
    secret = host_secret(tmp_path)
    ev = run_verifier(hostile(tmp_path, LINKS[which].format(secret=secret)), "container", tmp_path)
    _check_not_followed(ev, secret)


def test_a_reward_file_is_read_bounded_and_only_as_a_regular_file(tmp_path: Path):
    from benchtape.sandbox.verifier import REWARD_LIMIT, read_reward

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").write_text("1" + " " * REWARD_LIMIT)
    with pytest.raises(ValueError, match="larger than"):
        read_reward(logs)
    (logs / "reward.txt").unlink()
    os.mkfifo(logs / "reward.txt")  # a FIFO nobody writes: opening it to read would block forever
    with pytest.raises(ValueError, match="no regular file"):
        read_reward(logs)
    (logs / "reward.txt").unlink()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "reward.txt").write_text("1\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "logs").symlink_to(tmp_path / "elsewhere")  # a link on the way, not only at the end
    with pytest.raises(ValueError, match="symbolic link"):
        read_reward(tmp_path / "tree", "logs")


@pytest.mark.parametrize("written", ["1e309", "inf", "nan", "-inf", '{"reward": 1e309}'])
def test_only_a_finite_reward_counts(tmp_path: Path, written: str):
    from benchtape.sandbox.verifier import read_reward

    name = "reward.json" if written.startswith("{") else "reward.txt"
    (tmp_path / name).write_text(written + "\n")
    with pytest.raises(ValueError, match="no finite number|infinity"):  # orjson itself refuses 1e309
        read_reward(tmp_path)


def test_a_reward_json_naming_its_reward_twice_is_no_reward(tmp_path: Path):
    from benchtape.sandbox.verifier import read_reward

    (tmp_path / "reward.json").write_text('{"reward": 1,\n "reward": 0}\n')
    with pytest.raises(ValueError, match="names 'reward' twice \\(line 2\\)"):
        read_reward(tmp_path)


def test_an_infinite_reward_does_not_pass_the_verifier(tmp_path: Path):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    ev = run_verifier(hostile(tmp_path, "echo 1e309 > /logs/verifier/reward.txt\n"), "home", tmp_path)
    assert ev.status == "failed" and ev.reward is None and "no finite number" in ev.detail, ev


# ---------------------------------------------------------------- item 5: the timeout is the whole budget; nothing outlives the verifier


def test_a_setsid_child_ignoring_term_does_not_hold_the_runner_past_its_timeout(tmp_path: Path):
    import time

    from benchtape.core.command_runner import DRAIN_S, run_local

    started = time.monotonic()
    done = run_local(["/bin/sh", "-c", "setsid sh -c 'trap \"\" TERM; sleep 40' & sleep 40"], tmp_path, 2.0)
    elapsed = time.monotonic() - started
    assert done.timed_out and elapsed < 2.0 + DRAIN_S + 3, elapsed


def test_a_command_that_exits_leaving_a_child_on_the_pipe_ends_when_it_exits(tmp_path: Path):
    import time

    from benchtape.core.command_runner import run_local

    started = time.monotonic()
    done = run_local(["/bin/sh", "-c", "echo hi; sleep 30 & exit 3"], tmp_path, 20.0)
    assert (done.exit_code, done.timed_out, done.output) == (3, False, "hi\n") and time.monotonic() - started < 5


def test_output_past_the_limit_keeps_its_head_and_its_last_lines(tmp_path: Path):
    from benchtape.core.command_runner import run_local

    done = run_local(["/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo the-summary-line"], tmp_path, 60, max_output=100_000)
    assert done.exit_code == 0 and len(done.output) < 120_000
    assert done.output.startswith("xxxx") and done.output.rstrip().endswith("the-summary-line") and "bytes of output not kept" in done.output


def mined_verify(tmp_path: Path, command: str, timeout: float) -> Any:
    from benchtape.sandbox.verifier import verify
    from benchtape.sandbox.verifier_box import verifier_box
    from benchtape.spec.task import Verify

    tree = tmp_path / "box" / "tree"
    tree.mkdir(parents=True)
    with verifier_box("home", tree) as box:
        return verify(tree, [], Verify(command=command, timeout=timeout), box.run)


@pytest.mark.parametrize("how", ["sleep &", "setsid", "nohup setsid, TERM ignored"])
def test_nothing_the_verifier_started_writes_on_the_host_after_it(tmp_path: Path, how: str):
    import time

    marker = tmp_path / "written-after"
    later = f"sleep 2; echo late > {marker}"
    start = {"sleep &": f"({later}) &", "setsid": f"setsid sh -c '{later}' &", "nohup setsid, TERM ignored": f"nohup setsid sh -c 'trap \"\" TERM HUP; {later}' >/dev/null 2>&1 &"}[how]
    ev = mined_verify(tmp_path, f"{start} echo started; exit 0", 30)
    assert ev.status == "passed", ev
    time.sleep(3.5)
    assert not marker.exists(), f"a process the verifier started ({how}) wrote on the host after it ended"


def test_a_verifier_past_its_timeout_ends_with_everything_it_started(tmp_path: Path):
    import time

    marker = tmp_path / "written-after"
    started = time.monotonic()
    ev = mined_verify(tmp_path, f"setsid sh -c 'trap \"\" TERM; sleep 3; echo late > {marker}' & sleep 60", 2)
    assert ev.status == "timeout" and time.monotonic() - started < 8
    time.sleep(3)
    assert not marker.exists()


def test_a_verifier_cannot_write_a_file_past_the_box_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BENCHTAPE_MAX_BOX_FILE", "8m")
    ev = mined_verify(tmp_path, "head -c 64000000 /dev/zero > big", 60)
    big = tmp_path / "box" / "tree" / "big"
    assert ev.status == "failed" and big.stat().st_size <= 8 << 20, (ev, big.stat().st_size)


def test_a_verifier_at_home_cannot_take_the_hosts_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A test that allocates without end (structlog's base recursed to 23 GB, and the kernel's
    OOM killer chose from the whole host): past BENCHTAPE_MAX_BOX_MEMORY its allocation fails
    in its own process, and the run is diagnosed for what it was."""
    from benchtape.sandbox.verifier import judge_base

    monkeypatch.setenv("BENCHTAPE_MAX_BOX_MEMORY", "256m")
    ev = mined_verify(tmp_path, "python3 -c 'b = bytearray(1 << 30); print(\"took\", \"it\")'", 60)
    assert ev.status == "failed" and "MemoryError" in ev.log and "took it" not in ev.log, ev.log
    fine = mined_verify(tmp_path / "fine", "python3 -c 'b = bytearray(64 << 20); print(\"took\", \"it\")'", 60)
    assert "took it" in fine.log, fine.log  # under the limit, as anywhere
    crashed = judge_base(mined_verify(tmp_path / "segv", "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'", 60))
    assert crashed.diagnosis == "runner_crashed" and "SIGSEGV" in crashed.detail and "BENCHTAPE_MAX_BOX_MEMORY" in crashed.remedy
    # a test runner that crashes at the base (structlog 739: a recursion without end, then an
    # abort) fails there as a whole; one killed (137: the memory, or the host) proves nothing
    runner = judge_base(mined_verify(tmp_path / "abort", "python3 -m pytest -q --version >/dev/null; python3 -c 'import os; os.abort()'", 60))
    assert runner.held and "SIGABRT" in runner.detail, runner
    killed = judge_base(mined_verify(tmp_path / "kill", "python3 -m pytest -q --version >/dev/null; python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'", 60))
    assert not killed.held and killed.diagnosis == "runner_crashed"


def test_a_base_whose_tests_take_the_memory_fails_as_a_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """marko #261's base loops appending without end: its test fails with MemoryError at the
    box's cap, then pytest itself raises MemoryError before its summary, from its own frames. That
    was read as a runner that cannot start (`runner_broken`, "set env.python"); it is the bug
    reproduced, and the base fails as a whole (the reference must still pass with a report)."""
    from benchtape.sandbox.verifier import judge_base, judge_reference

    monkeypatch.setenv("BENCHTAPE_MAX_BOX_MEMORY", "384m")
    test = "def test_grow():\n    x = []\n    while True:\n        x.append('a' * 100000)\n\ndef test_other():\n    assert True\n"
    ev = mined_verify(tmp_path, f"printf \"{test}\" > test_grow.py; python3 -m pytest -q -p no:cacheprovider test_grow.py", 120)
    assert ev.status == "failed" and "MemoryError" in ev.log, ev.log[-2000:]
    judged = judge_base(ev)
    # pytest may still print its summary (a test failed) or die before it (marko's: the base
    # fails as a whole); either way the base reproduced, and never as a runner that cannot start
    assert judged.held and judged.diagnosis != "runner_broken", (judged, ev.counts, ev.log[-1500:])
    assert ev.counts.failed >= 1 or "ran out of memory" in judged.detail, (judged, ev.counts)
    assert not judge_reference(ev).held  # the same run as a reference proves nothing


def test_a_harbor_verifier_at_home_cannot_fill_tmp_or_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    monkeypatch.setenv("BENCHTAPE_MAX_BOX_FILE", "8m")
    script = "head -c 64000000 /dev/zero > /tmp/big; ls -l /tmp/big; head -c 64000000 /dev/zero > /app/big; echo 1 > /logs/verifier/reward.txt\n"
    ev = run_verifier(hostile(tmp_path, script), "home", tmp_path)
    assert (tmp_path / "work" / "big").stat().st_size <= 8 << 20
    # /tmp's file as `ls -l` saw it (the shell's "File size limit exceeded" line names the command, 64000000 included)
    sizes = [int(line.split()[4]) for line in ev.log.splitlines() if line.startswith("-") and line.rstrip().endswith("/tmp/big")]
    assert sizes and max(sizes) <= 8 << 20, ev.log


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_a_container_verifier_cannot_write_a_file_past_the_box_limit(engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BENCHTAPE_MAX_BOX_FILE", "8m")
    ev = run_verifier(hostile(tmp_path, "head -c 64000000 /dev/zero > /app/big\necho 1 > /logs/verifier/reward.txt\n"), "container", tmp_path)
    assert (tmp_path / "work" / "big").stat().st_size <= 8 << 20, ev.log


def test_a_task_path_cannot_replace_the_boxs_own_tools(tmp_path: Path):
    """[verifier.env] PATH puts a folder of decoys first: the box still finds its own unshare,
    mount and chroot by absolute path, and the decoys never run (a task's PATH is its command's)."""
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    decoys = tmp_path / "decoys"
    decoys.mkdir()
    ran = tmp_path / "decoy-ran"
    for tool in ("unshare", "mount", "chroot", "mkdir", "sh", "python3"):
        (decoys / tool).write_text(f"#!/bin/sh\necho {tool} >> {ran}\nexit 1\n")
        (decoys / tool).chmod(0o755)
    folder = hostile(tmp_path, "echo 1 > /logs/verifier/reward.txt\n")
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", f'[verifier]\nenv = {{ PATH = "{decoys}:/usr/local/bin:/usr/bin:/bin" }}\n'))
    ev = run_verifier(folder, "home", tmp_path)
    assert not ran.exists(), ran.read_text()
    assert (ev.status, ev.reward) == ("passed", 1.0), ev


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_a_container_verifier_printing_without_end_is_kept_bounded(engine: None, tmp_path: Path):
    """A test that prints 300 MB: the verifier keeps its head and last lines (at most
    MAX_OUTPUT), not all of it in benchtape's memory."""
    from benchtape.core.command_runner import MAX_OUTPUT

    ev = run_verifier(hostile(tmp_path, "head -c 300000000 /dev/zero | tr '\\\\0' y; echo; echo the-last-line\necho 0 > /logs/verifier/reward.txt\n"), "container", tmp_path)
    assert len(ev.log) <= MAX_OUTPUT + 1000 and "the-last-line" in ev.log and "bytes of output not kept" in ev.log, len(ev.log)


def test_a_verifiers_tmpdir_at_home_is_bounded_and_gone_when_it_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.sandbox.verifier_box import can_private_tmp

    if not can_private_tmp():
        pytest.skip("this host refuses unprivileged mount namespaces")
    monkeypatch.setenv("BENCHTAPE_MAX_BOX_FILE", "8m")
    ev = mined_verify(tmp_path, 'for i in 1 2 3 4; do head -c 4000000 /dev/zero > "$TMPDIR/part$i" || exit 9; done', 60)
    assert ev.status == "failed" and ev.exit == 9, ev  # four files of 4 MB fill a TMPDIR of 8 MiB
    assert list((tmp_path / "box" / "tmp").iterdir()) == []  # and nothing of it is on the host's disk
    ev = mined_verify(tmp_path / "again", 'echo kept > "$TMPDIR/x" && cat "$TMPDIR/x"', 60)
    assert ev.status == "passed" and "kept" in ev.log
