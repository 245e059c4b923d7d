"""Workspace staging: repo → testdata → setup/generate, once per bench run, seeded fresh."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from stagekit import run_bench, write_bench, write_program

from benchtape.sandbox.staging import StagingFailed, stage_seeds
from benchtape.spec.bench import load_bench


def stage(bench_path: Path):
    bench = load_bench(bench_path)
    return bench, stage_seeds(bench, bench.scenarios)


# ---------------------------------------------------------------- repo:


def test_repo_is_checked_out_at_ref_without_git(tmp_path, repo):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: at-first
            prompt: look
            repo: {{url: {repo['path']}, ref: {repo['first']}}}
          - name: at-tag
            prompt: look
            repo: {{url: "file://{repo['path']}", ref: v1}}
          - name: at-branch
            prompt: look
            repo: {{url: {repo['path']}, ref: main}}
    """)
    _, seeds = stage(bench)
    try:
        first = seeds.get("at-first")
        assert (first / "a.txt").read_text() == "version one\n"
        assert not (first / "later.txt").exists()
        assert not (first / ".git").exists()
        assert sorted(p.name for p in first.iterdir()) == ["a.txt", "sub"]
        assert (seeds.get("at-tag") / "a.txt").read_text() == "version one\n"
        assert (seeds.get("at-branch") / "a.txt").read_text() == "version two\n"
    finally:
        seeds.cleanup()
    assert not first.exists()


def test_repo_path_takes_a_sub_folder(tmp_path, repo):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: sub
            prompt: look
            repo: {{url: {repo['path']}, ref: {repo['first']}, path: sub}}
    """)
    _, seeds = stage(bench)
    try:
        assert sorted(p.name for p in seeds.get("sub").iterdir()) == ["b.txt"]
    finally:
        seeds.cleanup()


def test_bad_ref_stops_the_run_naming_the_scenario(tmp_path, repo):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: nope
            prompt: look
            repo: {{url: {repo['path']}, ref: no-such-branch}}
    """)
    with pytest.raises(StagingFailed, match=r"scenario 'nope'.*no-such-branch"):
        stage(bench)


def test_testdata_is_copied_over_the_checkout(tmp_path, repo):
    td = tmp_path / "td"
    td.mkdir()
    (td / "a.txt").write_text("from testdata\n")
    (td / "CLAUDE.md").write_text("be careful\n")
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: layered
            prompt: look
            repo: {{url: {repo['path']}, ref: {repo['first']}}}
            testdata: td
    """)
    _, seeds = stage(bench)
    try:
        tree = seeds.get("layered")
        assert (tree / "a.txt").read_text() == "from testdata\n"
        assert (tree / "CLAUDE.md").is_file() and (tree / "sub" / "b.txt").is_file()
        assert (td / "a.txt").read_text() == "from testdata\n"  # the bench's testdata is untouched
    finally:
        seeds.cleanup()


# ---------------------------------------------------------------- setup:


def test_setup_runs_once_in_the_staged_tree_with_a_scrubbed_env(tmp_path, monkeypatch):
    log = tmp_path / "setup-ran.log"
    td = tmp_path / "td"
    td.mkdir()
    (td / "given.txt").write_text("x\n")
    write_program(tmp_path / "setup.py", f"""
        import json, os
        with open({str(log)!r}, "a") as f:
            f.write("ran\\n")
        assert os.path.isfile("given.txt"), "cwd is the staged tree, testdata already copied"
        open("made-by-setup.txt", "w").write("made\\n")
        json.dump(dict(os.environ), open(os.path.join(os.environ["BENCHTAPE_IMAGE_DIR"], "env.json"), "w"))
        print("setup says hello on stdout")  # diagnostics, not vars
    """)
    monkeypatch.setenv("SOME_API_KEY", "sk-must-not-reach-setup")
    monkeypatch.setenv("UNRELATED", "scrubbed")
    bench = write_bench(tmp_path, """
        harness: mock
        defaultScenario:
          testdata: td
          setup: setup.py
          sandbox: home
          mock: {steps: [{tool: Read, input: {file_path: made-by-setup.txt}}, {say: done}]}
        scenarios:
          - {name: one, prompt: a}
          - {name: two, prompt: b}
    """)
    ran = run_bench(bench, "--repeat", "2")
    assert ran.code == 0, ran.stderr
    assert log.read_text() == "ran\n"  # once per bench run: 2 scenarios x 2 attempts share it
    reads = list(ran.actions("tool.result"))
    assert len(reads) == 4 and all("made" in a["output"] for a in reads)
    # the env the program saw: PATH, HOME, LANG, TMPDIR (those set) + the three BENCHTAPE names
    # (the image dir is gone with the staged tree; re-stage to read it)
    _, seeds = stage(bench)
    try:
        env = json.loads((seeds.get("one").parent / "images" / "env.json").read_text())
        expected = {k for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ} | {"BENCHTAPE", "BENCHTAPE_TESTDATA_DIR", "BENCHTAPE_IMAGE_DIR"}
        expected |= {"MADBENCH", "MADBENCH_TESTDATA_DIR", "MADBENCH_IMAGE_DIR"}  # a program written for madbench reads these
        assert set(env) == expected
        assert env["BENCHTAPE_TESTDATA_DIR"] == env["MADBENCH_TESTDATA_DIR"] == str(seeds.get("one"))
        assert env["MADBENCH"] == "1" and env["MADBENCH_IMAGE_DIR"] == env["BENCHTAPE_IMAGE_DIR"]
        assert Path(env["BENCHTAPE_IMAGE_DIR"]).parent == seeds.get("one").parent  # a sibling, never seeded
        assert not (seeds.get("one") / "env.json").exists()
    finally:
        seeds.cleanup()


def test_a_failing_setup_stops_the_run_before_any_session(tmp_path):
    write_program(tmp_path / "setup.py", """
        import sys
        print("compiling...", file=sys.stderr)
        print("error: the toolchain is missing", file=sys.stderr)
        sys.exit(4)
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: doomed, prompt: a, setup: setup.py}
    """)
    ran = run_bench(bench)
    assert ran.code == 3
    assert "scenario 'doomed'" in ran.stderr and "setup.py" in ran.stderr
    assert "exited with code 4" in ran.stderr and "the toolchain is missing" in ran.stderr
    assert ran.rows("select count(*) from sessions") == [(0,)]
    assert not ran.report.exists()


def test_a_setup_that_leaves_a_fifo_stops_the_run_before_any_session(tmp_path):
    """The staged tree is copied into each session's workspace: a FIFO the setup made there was
    a shutil traceback at the first session's copy, after the run had started."""
    write_program(tmp_path / "setup.py", """
        import os
        os.mkfifo("pipe")
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: piped, prompt: a, setup: setup.py}
    """)
    ran = run_bench(bench)
    assert ran.code == 3 and "Traceback" not in ran.stderr, ran.stderr
    assert "scenario 'piped'" in ran.stderr and "left a named pipe (FIFO) in the tree it prepares (pipe)" in ran.stderr and "fix: have the program remove it" in ran.stderr
    assert ran.rows("select count(*) from sessions") == [(0,)]


def test_staging_timeout_kills_the_program(tmp_path):
    write_program(tmp_path / "slow.py", """
        import subprocess, time
        subprocess.Popen(["sleep", "60"])  # a grandchild holding the pipes: the whole group is killed
        time.sleep(60)
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: slow, prompt: a, setup: slow.py, staging_timeout: 1s}
    """)
    ran = run_bench(bench)
    assert ran.code == 3
    assert "timed out after 1s" in ran.stderr and "scenario 'slow'" in ran.stderr
    assert ran.rows("select count(*) from sessions") == [(0,)]


# ---------------------------------------------------------------- generate:

GENERATOR = """
    import random
    numbers = [random.randint(1000, 9999) for _ in range(5)]
    open("numbers.txt", "w").write("\\n".join(map(str, numbers)) + "\\n")
    print(f"TOTAL=sum{sum(numbers)}x")
    print("KIND=additive-puzzle")
"""


def test_generate_vars_reach_seeds_and_live_grading(tmp_path):
    from benchtape.checks.registry import REGISTRY, register
    from benchtape.core.results import Result

    if "test:var-seen" not in REGISTRY:

        @register("test:var-seen", family="Test", summary="a var's value was printed by a tool", reads="calls, vars")
        def _build(spec):
            def evaluate(session, ctx):
                want = str(ctx.vars.get(spec.value, ""))
                seen = bool(want) and any(want in str(c.output) for c in session.calls)
                return Result.of(seen, f"{spec.value} {'seen' if seen else 'not seen'}", {"declared": dict(ctx.vars).get("DECLARED")})

            return evaluate

    write_program(tmp_path / "gen.py", GENERATOR)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: add-them
            prompt: "Add up the numbers in numbers.txt and print sum<total>x."
            generate: gen.py
            vars: {DECLARED: kept}
            mock:
              steps:
                - tool: Bash
                  input: {command: "python3 -c \\"print('sum%dx' % sum(int(l) for l in open('numbers.txt')))\\""}
                - say: done
            checks:
              - {type: "test:var-seen", value: TOTAL}
    """)
    _, seeds = stage(bench)
    try:
        found = seeds.vars("add-them")
        assert set(found) == {"TOTAL", "KIND"} and found["KIND"] == "additive-puzzle"
        numbers = [int(x) for x in (seeds.get("add-them") / "numbers.txt").read_text().split()]
        assert found["TOTAL"] == f"sum{sum(numbers)}x"
    finally:
        seeds.cleanup()
    ran = run_bench(bench)
    assert ran.code == 0, ran.stdout + ran.stderr
    doc = ran.report_doc()
    check = doc["results"][0]["checks"][0]
    assert check["status"] == "PASS", check
    assert check["result"]["evidence"] == {"declared": "kept"}  # declared vars and generated vars both reached grading
    # the agent printed the answer: that is in its session, and is no report leak


@pytest.mark.parametrize(
    "leak, where",
    [
        ("open('hint.txt', 'w').write('the answer is ' + VALUE)", "in the content of 'hint.txt'"),
        ("open('answer-' + VALUE + '.txt', 'w').write('')", "in the path name"),
        ("import os; os.symlink('/nowhere/' + VALUE, 'link')", "in the target of the symlink 'link'"),
        ("pass", "in the prompt of scenario 'leaky'"),
    ],
    ids=["file-content", "file-name", "symlink-target", "prompt"],
)
def test_a_findable_generated_value_refuses_the_run(tmp_path, leak, where):
    write_program(tmp_path / "gen.py", f"""
        VALUE = "k7q-answer-93"
        {leak}
        print("SECRET=" + VALUE)
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: leaky
            prompt: "Find the code (psst: k7q-answer-93)."
            generate: gen.py
    """.replace("(psst: k7q-answer-93)", "(psst: k7q-answer-93)" if "prompt" in where else ""))
    ran = run_bench(bench)
    assert ran.code == 3, ran.stderr
    assert "refused" in ran.stderr and f"SECRET {where}" in ran.stderr
    assert "scenario 'leaky'" in ran.stderr
    assert ran.rows("select count(*) from sessions") == [(0,)]


def test_a_stray_stdout_line_is_refused_naming_it(tmp_path):
    write_program(tmp_path / "gen.py", """
        print("ANSWER=17")
        print("computing the rest...")
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: chatty, prompt: a, generate: gen.py}
    """)
    ran = run_bench(bench)
    assert ran.code == 3
    assert "stray line 2" in ran.stderr and "'computing the rest...'" in ran.stderr


def test_generate_stderr_is_redacted_when_it_fails(tmp_path):
    write_program(tmp_path / "gen.py", """
        import sys
        print("ANSWER=zq-9931-secret")
        print("debug: the answer is zq-9931-secret", file=sys.stderr)
        sys.exit(2)
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: oops, prompt: a, generate: gen.py}
    """)
    ran = run_bench(bench)
    assert ran.code == 3
    assert "exited with code 2" in ran.stderr
    assert "debug: the answer is [REDACTED]" in ran.stderr
    assert "zq-9931-secret" not in ran.stderr + ran.stdout


def test_generate_stderr_is_redacted_in_the_staging_event(tmp_path):
    write_program(tmp_path / "gen.py", """
        import sys
        print("ANSWER=zq-5511-secret")
        print("debug: the answer is zq-5511-secret", file=sys.stderr)
    """)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: fine, prompt: a, generate: gen.py}
    """)
    events = []
    b = load_bench(bench)
    seeds = stage_seeds(b, b.scenarios, on_event=lambda kind, data: events.append((kind, data)))
    seeds.cleanup()
    [(kind, data)] = events
    assert kind == "staging.finished" and data["kind"] == "generate" and data["vars"] == ["ANSWER"]
    assert data["stderr"] == "debug: the answer is [REDACTED]\n"


def test_generated_values_never_reach_the_sandbox_env(tmp_path):
    write_program(tmp_path / "gen.py", 'print("ANSWER=env-probe-7781")\n')
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: probe
            prompt: a
            generate: gen.py
            mock: {steps: [{tool: Bash, input: {command: "env; ls -a"}}, {say: done}]}
    """)
    ran = run_bench(bench)
    assert ran.code == 0, ran.stderr
    [out] = ran.actions("tool.result")
    assert "env-probe-7781" not in out["output"] and "BENCHTAPE_TESTDATA_DIR" not in out["output"]


def test_a_generated_value_in_a_check_spec_refuses_the_report(tmp_path):
    write_program(tmp_path / "gen.py", 'print("ANSWER=fixed-answer-4410")\n')
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: published
            prompt: a
            generate: gen.py
            mock: {steps: [{say: "I do not know"}]}
            checks:
              - {type: contains, value: fixed-answer-4410}
    """)
    ran = run_bench(bench)
    assert ran.code == 1
    assert "was NOT written" in ran.stderr and "ANSWER at results[0].checks[0].spec.value" in ran.stderr
    assert not ran.report.exists()
    assert ran.rows("select count(*) from sessions") == [(1,)]  # recorded all the same


def test_end_to_end_the_agent_sees_the_checkout_and_testdata_but_no_git(tmp_path, repo):
    td = tmp_path / "td"
    td.mkdir()
    (td / "NOTES.md").write_text("added by the bench\n")
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: look-around
            prompt: look
            repo: {{url: {repo['path']}, ref: {repo['first']}}}
            testdata: td
            cwd: sub
            mock:
              steps:
                - tool: Bash
                  input: {{command: "ls -A ..; cat ../a.txt"}}
                - say: done
    """)
    ran = run_bench(bench)
    assert ran.code == 0, ran.stderr
    [listing] = ran.actions("tool.result")
    assert listing["output"] == "NOTES.md\na.txt\nsub\nversion one\n"  # the agent starts in cwd (sub/), inside the staged root
    assert (repo["path"] / ".git").is_dir()  # the upstream is untouched


def test_a_generated_value_in_the_system_prompt_refuses_the_run(tmp_path):
    write_program(tmp_path / "gen.py", 'print("SECRET=k7q-answer-93")\n')
    bench = write_bench(tmp_path, """
        harness: mock
        harness_config: {system_prompt: "the code is k7q-answer-93"}
        scenarios:
          - {name: told, prompt: a, generate: gen.py}
    """)
    ran = run_bench(bench)
    assert ran.code == 3 and "SECRET in harness_config" in ran.stderr
