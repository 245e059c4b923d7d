"""A Rust crate's tasks: what a user with rustup's cargo and libtest's own lines meets.

- the verifier's fresh HOME hid rustup's toolchains: every Rust task read gold_still_fails,
  "runner not recognised" (`rustup could not choose a version of cargo to run`);
- a `#[should_panic]` test prints `test name - should panic ... ok`, which was read as no test;
- cargo stops at the first test binary that fails: the next binary's tests, passing at the
  base, read as absent there and became FAIL_TO_PASS.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchtape.sandbox.testreports import read_libtest, suite_command
from benchtape.sandbox.verifier import verify
from benchtape.sandbox.verifier_box import home_box, rustup_home
from benchtape.spec.task import Verify, load_task
from benchtape.tasks.infer import infer_command

LIBTEST = """
running 4 tests
test add_small ... ok
test div_by_zero_panics - should panic ... FAILED
test tests::later - should panic ... ignored
test doc_like - compile fail ... ok

failures:
"""


def test_a_should_panic_test_is_a_test():
    report = read_libtest(LIBTEST)
    assert report is not None
    assert report.outcomes() == {"add_small": "passed", "div_by_zero_panics": "failed", "tests::later": "skipped", "doc_like": "passed"}


def test_cargo_commands_do_not_stop_at_the_first_failing_binary(tmp_path: Path):
    inferred = infer_command({"tests/api.rs": b"", "tests/more.rs": b""}, lambda _: None)
    assert inferred.command == "cargo test --no-fail-fast --test api --test more"
    assert suite_command(inferred.command, "cargo", tmp_path) == "cargo test --no-fail-fast"
    # the command's own options stay: the suite is the same build, every target of it
    assert suite_command("cargo test --features serde -p core --test api -- --exact x", "cargo", tmp_path) == "cargo test --features serde -p core --no-fail-fast"
    assert suite_command("cargo test --lib parse_", "cargo", tmp_path) == "cargo test --no-fail-fast"


def test_rustup_home_is_the_hosts():
    assert rustup_home({"RUSTUP_HOME": "/opt/rustup", "HOME": "/root"}) == {"RUSTUP_HOME": "/opt/rustup"}
    assert rustup_home({"HOME": "/nonexistent-home"}) == {}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this host")
def test_cargo_runs_in_the_box_as_it_does_on_the_host(tmp_path: Path):
    subprocess.run(["cargo", "new", "--lib", "--quiet", "--vcs", "none", "adder"], cwd=tmp_path, check=True, env={**os.environ, "CARGO_NET_OFFLINE": "true"})
    crate = tmp_path / "adder"
    (crate / "src" / "lib.rs").write_text("pub fn div(a: u32, b: u32) -> u32 { a / b }\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn good() {}\n    #[test]\n    #[should_panic]\n    fn by_zero() { super::div(1, 0); }\n}\n")
    with home_box(crate, network=True) as box:
        ev = verify(crate, [], Verify(command="cargo test --offline"), box.run)
    assert ev.tests is not None and ev.tests.source == "libtest", ev.log[-2000:]
    assert ev.tests.outcomes() == {"tests::good": "passed", "tests::by_zero": "passed"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"})


def test_a_cargo_task_protects_what_decides_how_cargo_runs(tmp_path: Path):
    """A candidate's `.cargo/config.toml` with a `runner` that prints `test x ... ok` for every
    test of each binary passed every Rust task with no fix (minicalc: all of them)."""
    from e2e.cli import benchtape

    repo = tmp_path / "crate"
    (repo / "src").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "Cargo.toml").write_text('[package]\nname = "crate"\nversion = "0.1.0"\nedition = "2021"\n')
    (repo / "src" / "lib.rs").write_text("pub fn add(a: u8, b: u8) -> u8 { a.wrapping_add(b) }\n")
    (repo / "tests" / "api.rs").write_text("#[test]\nfn small() { assert_eq!(crate::add(1, 2), 3); }\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Initial commit")
    _git(repo, "checkout", "-qb", "sat")
    (repo / "src" / "lib.rs").write_text("pub fn add(a: u8, b: u8) -> u8 { a.saturating_add(b) }\n")
    (repo / "tests" / "api.rs").write_text("#[test]\nfn small() { assert_eq!(crate::add(1, 2), 3); }\n#[test]\nfn saturates() { assert_eq!(crate::add(200, 100), 255); }\n")
    _git(repo, "commit", "-qam", "Saturate on overflow in add")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "sat", "-m", "Merge pull request #1 from alice/sat")
    assert benchtape("init", "--tasks", cwd=repo).returncode == 0
    done = benchtape("task", "create", "1", cwd=repo)
    assert done.returncode == 0, done.stderr
    task = load_task(repo / ".benchtape" / "tasks" / "1")
    assert task.verify.command == "cargo test --no-fail-fast --test api"
    assert {"tests/", ".cargo/", "rust-toolchain.toml"} <= set(task.verify.protected_paths)
