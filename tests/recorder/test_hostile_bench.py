"""Hostile and malformed bench and Eval files (issue 15): each one a load error naming the
file, the line and the fix; from the CLI exit 2, no traceback, bounded time and memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.bench import load_bench
from benchtape.spec.evalfile import load_eval
from benchtape.spec.yamlsrc import MAX_DEPTH, MAX_SOURCE_BYTES

HEAD = "description: x\nharness: mock\nscenarios:\n  - name: s\n    prompt: p\n"  # the scenario is at line 4

LAUGHS = """\
description: x
harness: mock
scenarios:
  - name: s
    prompt: p
    vars:
      a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
      h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
      i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""

# name -> (bench text, what the error says, its line)
HOSTILE = {
    "nested-lists": ("a: " + "[" * 2000 + "]" * 2000 + "\n", f"nested more than {MAX_DEPTH} levels", 1),
    "nested-maps": ("a: " + "{a: " * 2000 + "1" + "}" * 2000 + "\n", f"nested more than {MAX_DEPTH} levels", 1),
    "billion-laughs": (LAUGHS, "expands to more than", 12),
    "alias-deepens": (
        "a: &a " + "[" * 60 + "1" + "]" * 60 + "\nb: &b " + "[" * 60 + "*a" + "]" * 60 + "\n" + HEAD,
        "levels deep (aliases expanded)",
        2,
    ),
    "alias-cycle": ("a: &a [1, *a]\n" + HEAD, "(a cycle)", 1),
    "checks-int": (HEAD + "    checks: 7\n", "`checks:` must be a list of checks, got int", 6),
    "checks-string": (HEAD + "    checks: exec\n", "`checks:` must be a list of checks, got string", 6),
    "sandbox-list": (HEAD + "    sandbox: [home]\n", "`sandbox:` must be a level", 6),
    "sandbox-level-list": (HEAD + "    sandbox: {level: [home]}\n", "level must be one of", 6),
    "share-env-int": (HEAD + "    sandbox: {level: home, share: {env: 7}}\n", "`share.env:` must be a list of variable names", 6),
    "share-env-ints": (HEAD + "    sandbox: {level: home, share: {env: [1, 2]}}\n", "`share.env:` must be a list of variable names", 6),
    "share-secret-int": (HEAD + "    sandbox: {level: home, share: {secret_env: 7}}\n", "`share.secret_env:`", 6),
    "share-paths-int": (HEAD + "    sandbox: {level: home, share: {paths: 7}}\n", "`share.paths:` must be a list", 6),
    "share-path-int": (HEAD + "    sandbox: {level: home, share: {paths: [7]}}\n", "a share path must be a mapping, got int", 6),
    "share-to-int": (HEAD + "    sandbox: {level: home, share: {paths: [{from: ., to: 8}]}}\n", "`to:` must be a path string, got int", 6),
    "metric-source-list": (HEAD.replace("scenarios:", "metrics:\n  - {name: m, source: [a]}\nscenarios:"), "unknown source", 4),
    "metric-aggregate-list": (HEAD.replace("scenarios:", "metrics:\n  - {name: m, source: session.cost, aggregate: [sum]}\nscenarios:"), "unknown aggregate", 4),
    "subagent-steps-int": (HEAD + "    mock: {steps: [{subagent: {agent: a, prompt: p, steps: 7}}]}\n", "subagent's `steps:` must be a list, got int", 6),
    "image-int": (HEAD + "    sandbox: {level: container, image: 7}\n", "`image` must be an image name", 6),
    "image-empty-list": (HEAD + "    sandbox: {level: container, image: []}\n", "`image` must be an image name", 6),
    "image-empty": (HEAD + "    sandbox: {level: container, image: ''}\n", "`image` must be an image name", 6),
    "testdata-too-long": (HEAD + "    testdata: " + "a/" * 3000 + "b\n", "longer than any path", 6),
    "testdata-name-too-long": (HEAD + "    testdata: " + "a" * 300 + "\n", "longer than a file name can be (255)", 6),
    "testdata-int": (HEAD + "    testdata: 7\n", "`testdata` must be a non-empty path string, got int", 6),
    "duplicate-key": (HEAD + "    prompt: q\n", "key `prompt` is set twice in one mapping: at line 5 and at line 6", 6),
    "duplicate-top-key": ("harness: mock\n" + HEAD, "key `harness` is set twice in one mapping: at line 1 and at line 3", 3),
    "duplicate-int-and-string-key": (HEAD + "    vars: {1: a, '1': b}\n", "key `1` is set twice", 6),
    "bad-date": (HEAD + "    vars: {when: 2021-02-30}\n", "cannot read the value '2021-02-30'", 6),
    "budget-string": ("budget: lots\n" + HEAD, "`budget:` must be a number, got string", 1),
    "token-estimate-float": ("token_estimate: 1.5\n" + HEAD, "`token_estimate:` must be a whole number", 1),
    "weight-huge": (HEAD + "    checks: [{type: contains, value: x, weight: " + "9" * 400 + "}]\n", "cannot read the value '9999", 6),
    "timeout-list": (HEAD + "    timeout: [1]\n", "`timeout:` must be a duration", 6),
    "follow-ups-int": (HEAD + "    follow_ups: 7\n", "`follow_ups:` must be a list of strings", 6),
    "transform-list": (HEAD + "    transform: [x]\n", "`transform:` must be a string", 6),
    "metadata-list": (HEAD + "    metadata: [x]\n", "`metadata:` must be a mapping, got list", 6),
    "scenario-int": ("description: x\nscenarios:\n  - 7\n", "scenario #1 must be a mapping, got int", 3),
}


def write(folder: Path, text: str, name: str = "bench.yaml") -> Path:
    p = folder / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_bench_is_a_load_error_at_its_line(tmp_path, name):
    text, what, line = HOSTILE[name]
    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, text))
    err = info.value
    assert what in err.what, err.render()
    assert err.file.endswith("bench.yaml") and err.line == line, err.render()
    assert len(err.render()) < 2000  # a long value is shortened, not dumped


def test_a_merge_may_override_what_it_merges(tmp_path):
    """Duplicate keys are refused; a key overriding what `<<: *base` brought in is not a duplicate."""
    text = HEAD + "    vars:\n      base: &base {a: 1, b: 2}\n      mine:\n        <<: *base\n        b: 3\n"
    assert load_bench(write(tmp_path, text)).scenarios[0].vars["mine"] == {"a": 1, "b": 3}


def test_the_bench_file_is_read_once_and_bounded(tmp_path):
    big = tmp_path / "bench.yaml"
    with big.open("wb") as f:
        f.truncate(MAX_SOURCE_BYTES + 1)
    with pytest.raises(BadInput, match="larger than"):
        load_bench(big)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "folder"])
def test_an_eval_whose_bench_is_not_a_file_is_refused_at_its_line(tmp_path, target):
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")  # opening it for reading must not wait for a writer
    if target == "folder":
        (tmp_path / "folder").mkdir()
    ev = write(tmp_path, f"description: d\nbench: {target}\nruns: [{{}}]\n", "eval.yaml")
    with pytest.raises(BadInput) as info:
        load_eval(ev)
    assert info.value.file.endswith("eval.yaml") and info.value.line == 2
    assert "not a regular file" in info.value.what or "folder without assert.yaml" in info.value.what


# ---------------------------------------------------------------- staged paths stay in the bench's tree


def tree(tmp_path: Path) -> Path:
    """bench/ with its own testdata, and a sibling folder outside it."""
    (tmp_path / "bench" / "td").mkdir(parents=True)
    (tmp_path / "bench" / "td" / "a.txt").write_text("a")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "s.txt").write_text("s")
    return tmp_path / "bench"


@pytest.mark.parametrize(
    "scenario_tail",
    [
        "    testdata: /etc\n",
        "    testdata: ../shared\n",
        "    testdata: td/../../shared\n",
        "    testdata: link-out\n",
        "    sandbox: {level: home, share: {paths: [{from: ../shared, to: s, access: copy}]}}\n",
        "    sandbox: {level: container, dockerfile: ../shared/s.txt}\n",
    ],
)
def test_a_staged_path_outside_the_bench_folder_is_refused(tmp_path, scenario_tail):
    bench = tree(tmp_path)
    (bench / "link-out").symlink_to(tmp_path / "shared")  # inside by name, outside once resolved
    with pytest.raises(BadInput) as info:
        load_bench(write(bench, HEAD + scenario_tail))
    err = info.value
    assert "outside the bench's folder" in err.what and err.line == 6
    assert "x-benchtape-allow-outside" in err.fix and str(bench) in err.fix


def test_a_local_repo_outside_is_refused_by_path_and_by_file_url(tmp_path):
    bench = tree(tmp_path)
    for url in ("../shared", f"file://{tmp_path / 'shared'}"):
        with pytest.raises(BadInput, match="outside the bench's folder"):
            load_bench(write(bench, HEAD + f"    repo: {url}\n"))


def test_the_bench_may_allow_a_named_outside_folder(tmp_path):
    bench = tree(tmp_path)
    text = "x-benchtape-allow-outside: [../shared]\n" + HEAD + "    testdata: ../shared\n"
    loaded = load_bench(write(bench, text))
    assert loaded.scenarios[0].testdata == tmp_path / "shared"
    with pytest.raises(BadInput, match="outside the bench's folder"):  # only the folder it names
        load_bench(write(bench, "x-benchtape-allow-outside: [../shared]\n" + HEAD + "    testdata: /etc\n"))
    with pytest.raises(BadInput, match="must be a list of folders"):
        load_bench(write(bench, "x-benchtape-allow-outside: true\n" + HEAD))


def test_links_and_mounts_are_not_copies(tmp_path):
    """An `rw` share links the host path on purpose; it is not staged, so it is not refused."""
    bench = tree(tmp_path)
    loaded = load_bench(write(bench, HEAD + "    sandbox: {level: home, share: {paths: [{from: ../shared, to: s, access: rw}]}}\n"))
    assert loaded.scenarios[0].sandbox.share_paths[0]["from"] == str(tmp_path / "shared")


def test_staging_refuses_a_link_swapped_after_loading(tmp_path):
    from benchtape.sandbox.staging import StagingFailed, stage_seeds

    bench = tree(tmp_path)
    (bench / "data").symlink_to(bench / "td")
    loaded = load_bench(write(bench, HEAD + "    testdata: data\n"))
    (bench / "data").unlink()
    (bench / "data").symlink_to(tmp_path / "shared")
    with pytest.raises(StagingFailed, match="outside the bench's folder"):
        stage_seeds(loaded, loaded.scenarios)


# ---------------------------------------------------------------- from the command line


def _limited() -> None:
    """The child gets 1 GiB of address space: a bomb that would need more fails the test."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def benchtape_bounded(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "benchtape", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, preexec_fn=_limited)


CLI_CASES = ["nested-lists", "billion-laughs", "checks-int", "share-env-int", "metric-source-list", "image-int", "testdata-too-long", "duplicate-key"]


@pytest.mark.parametrize("name", CLI_CASES)
def test_cli_exits_2_without_a_traceback(tmp_path, name):
    write(tmp_path, HOSTILE[name][0])
    done = benchtape_bounded("preflight", "bench.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and f"bench.yaml:{HOSTILE[name][2]}:" in done.stderr and "fix:" in done.stderr


def test_cli_eval_on_dev_zero_is_a_load_error(tmp_path):
    write(tmp_path, "bench: /dev/zero\nruns: [{}]\n", "eval.yaml")
    done = benchtape_bounded("list", "eval.yaml", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr  # `list` exits 1 on a load error, as madbench's does
    assert "eval.yaml:1: `bench:` /dev/zero is not a regular file" in done.stderr


def test_cli_testdata_outside_exits_2_and_names_the_opt_in(tmp_path):
    write(tmp_path, textwrap.dedent(HEAD) + "    testdata: /etc\n")
    done = benchtape_bounded("run", "bench.yaml", "--db", str(tmp_path / "t.db"), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "outside the bench's folder" in done.stderr and "x-benchtape-allow-outside" in done.stderr
    assert not (tmp_path / "t.db").exists()  # nothing was written


@pytest.mark.parametrize("target", ["bench.yaml", "eval.yaml"])
def test_cli_a_fifo_in_testdata_exits_2_before_the_store_is_made(tmp_path, target):
    """A FIFO in testdata was a `shutil.Error` traceback at each session's copy, exit 1, after
    the run and its grading were stored; an Eval file's control audit waited on it for ever."""
    (tmp_path / "td").mkdir()
    (tmp_path / "td" / "a.txt").write_text("a\n")
    os.mkfifo(tmp_path / "td" / "pipe")
    write(tmp_path, textwrap.dedent(HEAD) + "    testdata: td\n")
    write(tmp_path, "bench: bench.yaml\nruns: [{}, {name: b}]\n", "eval.yaml")
    for command in (["run", target, "--db", str(tmp_path / "t.db")], ["preflight", target]):  # preflight said "ok" where run refused
        done = benchtape_bounded(*command, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (command, done.stdout, done.stderr)
        assert f"{tmp_path / 'td' / 'pipe'}: the `testdata` of scenario 's' ({tmp_path / 'td'}) holds a named pipe (FIFO)" in done.stderr
        assert "fix: remove it from the folder" in done.stderr
    assert not (tmp_path / "t.db").exists()  # nothing was written


# ---------------------------------------------------------------- large and unreadable input (issue 31)


def _scenarios(n: int) -> str:
    return "harness: mock\nscenarios:\n" + "".join(f"  - {{name: s{i}, prompt: p}}\n" for i in range(n))


def _runs(n: int) -> str:
    return "bench: bench.yaml\nruns:\n" + "".join(f"  - {{name: r{i}, params: {{k: v{i}}}}}\n" for i in range(n))


def test_a_file_of_more_values_than_any_bench_stops_where_it_gets_there(tmp_path):
    """100,000 scenarios: refused once 250,000 values are read (it took 30 s and was called an alias bomb)."""
    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, _scenarios(100_000)))
    assert "holds more than 250,000 YAML values; no bench or Eval file is this large" in info.value.what
    assert 40_000 < (info.value.line or 0) < 60_000 and "split it" in (info.value.fix or "")


def test_a_bench_of_more_scenarios_than_the_limit_is_refused_before_any_is_built(tmp_path):
    from benchtape.spec.bench import MAX_SCENARIOS

    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, _scenarios(MAX_SCENARIOS + 1)))
    assert f"lists {MAX_SCENARIOS + 1:,} scenarios, more than the {MAX_SCENARIOS:,} one bench may hold" in info.value.what and info.value.line == 2
    assert len(load_bench(write(tmp_path, _scenarios(50))).scenarios) == 50


def test_a_hundred_thousand_duplicate_keys_name_the_first_two(tmp_path):
    text = "harness: mock\nscenarios:\n  - name: s\n    prompt: p\n" + "    prompt: p\n" * 100_000
    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, text))
    assert info.value.what == "key `prompt` is set twice in one mapping: at line 4 and at line 5" and info.value.line == 5


def test_an_eval_of_more_runs_than_the_limit_is_refused_before_any_bench_loads(tmp_path):
    from benchtape.spec.evalfile import MAX_PLANNED, MAX_RUNS

    write(tmp_path, "harness: mock\nparams: {k: {default: a}}\nscenarios:\n  - {name: s, prompt: 'p {{k}}'}\n")
    with pytest.raises(BadInput) as info:
        load_eval(write(tmp_path, _runs(MAX_RUNS + 1), "eval.yaml"))
    assert f"`runs:` lists {MAX_RUNS + 1:,} runs, more than the {MAX_RUNS:,} one Eval may hold" in info.value.what and info.value.line == 2
    write(tmp_path, _scenarios(MAX_PLANNED // 20 + 1))
    with pytest.raises(BadInput, match=f"more than the {MAX_PLANNED:,} one Eval may plan"):
        load_eval(write(tmp_path, "bench: bench.yaml\nruns:\n" + "".join(f"  - {{name: r{i}}}\n" for i in range(20)), "eval.yaml"))


def test_an_integer_wider_than_json_in_a_mock_step_is_the_float_madbench_reads(tmp_path):
    """YAML past 64 bits is a float, as madbench's Go decoder reads it (spec/yamlsrc); a script
    built in code (no YAML) with such an integer is refused, naming it."""
    text = HEAD + "    mock:\n      steps:\n        - {tool: mcp__tickets__open, input: {command: ls, n: 123456789012345678901234567890}}\n"
    [step] = load_bench(write(tmp_path, text)).scenarios[0].mock["steps"]
    assert step["input"] == {"command": "ls", "n": 1.2345678901234568e29}
    from benchtape.spec.script import script_from

    with pytest.raises(BadInput, match="larger than JSON carries"):
        script_from({"chat": [{"reply": {"n": -(1 << 70)}}]})
    assert script_from({"steps": [{"tool": "Bash", "input": {"n": (1 << 64) - 1}}]}).turns  # the widest JSON integer is fine


def test_cli_on_a_file_the_kernel_cannot_read_is_a_load_error(tmp_path):
    done = benchtape_bounded("list", "/proc/self/mem", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "/proc/self/mem: cannot be read: Input/output error" in done.stderr


def test_cli_run_of_a_bench_with_a_wide_integer_runs_as_madbench_runs_it(tmp_path):
    """A 30-digit ticket number in metadata passed preflight, then stopped the run with
    orjson's 'Integer exceeds 64-bit range' after its session was recorded."""
    write(tmp_path, "harness: mock\ndefaults: {interactive: false}\nscenarios:\n  - name: a\n    prompt: p\n    metadata: {ticket: 123456789012345678901234567890}\n    mock: {steps: [{tool: mcp__tickets__open, input: {n: 99999999999999999999999}}]}\n    checks: [{type: session:tool-used, value: mcp__tickets__open}]\n")
    done = benchtape_bounded("run", "bench.yaml", "--plain", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "1 passed, 0 failed" in done.stdout


def test_cli_list_of_an_eval_of_50000_runs_is_a_load_error_within_a_gib(tmp_path):
    """It took over 120 s and 700 MB."""
    write(tmp_path, "harness: mock\nscenarios: [{name: s, prompt: p}]\n")
    write(tmp_path, _runs(50_000), "eval.yaml")
    done = benchtape_bounded("list", "eval.yaml", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "no bench or Eval file is this large" in done.stderr, done.stderr  # `list`: 1 on a load error


TERMINAL_BENCH_TASK = """instruction: |-
  Create a file called hello.txt in the current directory. Write "Hello, world!" to it.
author_email: someone@example.com
difficulty: easy
parser_name: pytest
max_agent_timeout_sec: 360.0
max_test_timeout_sec: 60.0
"""


def test_a_terminal_bench_task_is_named_as_one_with_harbors_converter(tmp_path):
    """A Terminal-Bench task.yaml (the format before Harbor's) is said as what it is, with the
    command that converts it, wherever it is read: as a bench (`run DIR`) and as a task folder
    (`task list`), never `unknown key 'instruction'` or `no apiVersion:`."""
    from benchtape.spec.documents import DocLoader
    from benchtape.spec.yamlsrc import load_yaml_text

    task = tmp_path / "hello-world" / "task.yaml"
    task.parent.mkdir()
    task.write_text(TERMINAL_BENCH_TASK)
    with pytest.raises(BadInput) as as_bench:
        load_bench(task)
    with pytest.raises(BadInput) as as_document:
        DocLoader(task).header(load_yaml_text(TERMINAL_BENCH_TASK, str(task)), ("Task",))
    for exc in (as_bench.value, as_document.value):
        assert "Terminal-Bench task" in exc.what and exc.line == 1 and exc.file == str(task)
        assert f"harbor task migrate -i {task.parent} -o" in exc.fix and "benchtape run" in exc.fix
    (tmp_path / "bench.yaml").write_text("harness: mock\ninstruction: not a terminal-bench task\nscenarios: []\n")  # `instruction` alone stays a bench's unknown key
    with pytest.raises(BadInput) as plain:
        load_bench(tmp_path / "bench.yaml")
    assert "Terminal-Bench" not in plain.value.what
