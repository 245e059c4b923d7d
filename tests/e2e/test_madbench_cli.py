"""The CLI a madbench user types, with a bench written as they write it: exit codes where the
spec is definite, bare-file invocation, `.env`, the MADBENCH_* variables, retired flags."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cli import benchtape


def write(folder: Path, text: str, name: str = "madbench.yaml") -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def test_list_exits_1_on_a_load_error_and_a_missing_file_grader_is_preflights_block(tmp_path):
    broken = write(tmp_path, """
        description: a retired level
        scenarios:
          - {name: a, prompt: hi, sandbox: process}
        """, "broken.yaml")
    out = benchtape("list", broken)
    assert out.returncode == 1 and 'sandbox: level "process" was renamed to "home"' in out.stderr and "Traceback" not in out.stderr
    assert benchtape("preflight", broken).returncode == 2  # every other command: bad input, exit 2
    grader = write(tmp_path, """
        description: a grader that is not written yet
        harness: mock
        scenarios:
          - name: a
            prompt: hi
            interactive: false
            checks:
              - {type: ts, value: "file://graders/score.ts"}
        """)
    listed = benchtape("list", grader)
    assert listed.returncode == 0, listed.stderr  # list parses only: the grader is preflight's
    for command in ("preflight", "run"):
        out = benchtape(command, grader, *(["--db", str(tmp_path / "x.db")] if command == "run" else []))
        assert out.returncode == 3, (command, out.stdout + out.stderr)
        assert f"grader ts: stat {tmp_path / 'graders' / 'score.ts'}: no such file or directory" in out.stderr


BENCH = """
    description: fix the greeting
    harness: mock
    defaults: {interactive: false, timeout: 60s}
    scenarios:
      - name: greets
        prompt: "Say PASS."
        checks:
          - {type: contains, value: PASS}
    """


def test_a_bare_file_and_a_bare_folder_run_as_madbench_does_and_help_still_helps(tmp_path):
    bench = write(tmp_path, BENCH)
    out = benchtape(bench.name, "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)  # `madbench madbench.yaml --report-json r.json`
    assert out.returncode == 0 and "1 passed, 0 failed" in out.stdout, out.stdout + out.stderr
    assert (tmp_path / "r.json").is_file()
    bare = benchtape(cwd=tmp_path, env={"BENCHTAPE_DB": str(tmp_path / "x.db")})  # bare `madbench` runs ./madbench.yaml
    assert bare.returncode == 0 and "1 passed, 0 failed" in bare.stdout, bare.stdout + bare.stderr
    flags_first = benchtape("--db", "x.db", "--repeat", "2", cwd=tmp_path)
    assert flags_first.returncode == 0 and "2 passed, 0 failed" in flags_first.stdout, flags_first.stderr
    helped = benchtape("--help", cwd=tmp_path)
    assert helped.returncode == 0 and "Commands:" in helped.stdout and "1 passed" not in helped.stdout
    asked = benchtape("help", cwd=tmp_path)  # `help` as git and pip take it: never a run of ./madbench.yaml
    assert asked.returncode == 0 and asked.stdout == helped.stdout
    sub = benchtape("help", "task", "validate", cwd=tmp_path)
    assert sub.returncode == 0 and sub.stdout == benchtape("task", "validate", "--help", cwd=tmp_path).stdout and "task validate [OPTIONS]" in sub.stdout
    unknown = benchtape("help", "nosuch", cwd=tmp_path)
    assert unknown.returncode == 2 and "No such command 'nosuch'" in unknown.stderr
    assert benchtape("list", bench.name, cwd=tmp_path).returncode == 0  # a command is still a command
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    nothing = benchtape(cwd=elsewhere)
    assert nothing.returncode == 2 and "Commands:" in nothing.stderr  # no madbench.yaml here: the help, as before
    missing = benchtape("nope.yaml", cwd=elsewhere)
    assert missing.returncode == 2 and "nope.yaml: no such file or directory" in missing.stderr


def test_dotenv_is_read_as_madbench_reads_it_and_its_secrets_are_redacted(tmp_path):
    write(tmp_path, """
        description: a key from .env reaches the agent by share.env, and never the store in clear
        harness: mock
        defaults: {interactive: false, timeout: 60s}
        scenarios:
          - name: uses-the-key
            prompt: "Use the service."
            sandbox: {level: home, share: {env: [SERVICE_TOKEN, GREETING]}}
            checks:
              - {type: contains, value: done}
            mock:
              steps:
                - {tool: Bash, input: {command: 'echo "$GREETING token=$SERVICE_TOKEN"'}}
                - {say: done}
        """)
    token = "tok-0a1b2c3d4e5f6a7b8c9d"
    (tmp_path / ".env").write_text(f"# the service\nexport SERVICE_TOKEN={token}\nGREETING='hello there'\n")
    out = benchtape("madbench.yaml", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    report = (tmp_path / "r.json").read_text()
    assert "hello there token=[REDACTED]" in report  # read from ./.env; the *_TOKEN value redacted like the host env's
    assert token not in report and token.encode() not in (tmp_path / "x.db").read_bytes()
    no_env = benchtape("madbench.yaml", "--db", "y.db", "--report-json", "n.json", "--no-env", cwd=tmp_path)
    assert no_env.returncode == 0 and "hello there" not in (tmp_path / "n.json").read_text()
    other = tmp_path / "ci.env"
    other.write_text("GREETING=from ci\n")
    chosen = benchtape("madbench.yaml", "--db", "z.db", "--report-json", "c.json", "--env-file", "ci.env", cwd=tmp_path)
    assert chosen.returncode == 0 and "from ci token=" in (tmp_path / "c.json").read_text()
    gone = benchtape("madbench.yaml", "--db", "z.db", "--env-file", "missing.env", cwd=tmp_path)
    assert gone.returncode == 2 and "missing.env: --env-file: no such file" in gone.stderr
    (tmp_path / "bad.env").write_text("GREETING=ok\nthis is not a pair\n")
    bad = benchtape("madbench.yaml", "--db", "z.db", "--env-file", "bad.env", cwd=tmp_path)
    assert bad.returncode == 2 and "bad.env:2: not a NAME=VALUE line" in bad.stderr
    benchtape("madbench.yaml", "--db", "w.db", "--report-json", "s.json", cwd=tmp_path, env={"GREETING": "from the shell"})
    assert "from the shell token=" in (tmp_path / "s.json").read_text()  # the shell's value wins over .env's


def test_retired_and_madbench_flags_and_the_madbench_switches(tmp_path):
    write(tmp_path, BENCH)
    # madbench v0.23.0 still loads --runs (deprecated) and its update/keychain switches: a CI line runs unchanged
    runs = benchtape("madbench.yaml", "--runs", "2", "--no-update-check", "--no-keychain", "--db", "x.db", cwd=tmp_path)
    assert runs.returncode == 0 and "--runs is madbench's deprecated spelling of --repeat" in runs.stderr and "2 passed, 0 failed" in runs.stdout
    errs = write(tmp_path, BENCH.replace('prompt: "Say PASS."', 'prompt: "Say PASS."\n      - name: breaks\n        prompt: "!ERROR! now"'), "errs.yaml")
    errored = benchtape(errs.name, "--db", "x.db", cwd=tmp_path)  # the summary counts an error apart, as the report's summary does
    assert errored.returncode == 1 and "1 passed, 0 failed, 1 errored" in errored.stdout, errored.stdout + errored.stderr
    clash = benchtape("madbench.yaml", "--runs", "2", "--repeat", "3", "--db", "x.db", cwd=tmp_path)
    assert clash.returncode == 2 and "--runs 2 and --repeat 3 disagree" in clash.stderr
    manual = benchtape("madbench.yaml", "--manual", "--db", "x.db", cwd=tmp_path)
    assert manual.returncode == 2 and "--manual is not supported" in manual.stderr and "benchtape import claude-code" in manual.stderr
    failing = write(tmp_path, BENCH.replace("value: PASS", "value: NEVER"), "failing.yaml")
    out = benchtape(failing.name, "--fail-on-failure", "--db", "x.db", cwd=tmp_path)
    assert out.returncode == 1 and "0 passed, 1 failed" in out.stdout
    host = write(tmp_path, BENCH.replace("defaults: {interactive: false, timeout: 60s}", "defaults: {interactive: false, timeout: 60s, sandbox: none}"), "host.yaml")
    blocked = benchtape("preflight", host.name, cwd=tmp_path)
    assert blocked.returncode == 3 and "MADBENCH_ALLOW_HOST_WRITES=1" in blocked.stderr
    assert benchtape("preflight", host.name, cwd=tmp_path, env={"MADBENCH_ALLOW_HOST_WRITES": "1"}).returncode == 0
    gated = benchtape(host.name, "--skip-preflight", "--db", "x.db", cwd=tmp_path)
    assert gated.returncode == 3 and "writes to your real directory" in gated.stderr  # a gate that protects the machine is never skipped


def test_skip_preflight_skips_what_only_saves_spend(tmp_path):
    bench = write(tmp_path, BENCH.replace("- {type: contains, value: PASS}", "- {type: contains, value: PASS}\n          - {type: js, value: 'file://graders/score.js'}"))
    assert benchtape(bench.name, "--db", "x.db", cwd=tmp_path).returncode == 3
    out = benchtape(bench.name, "--skip-preflight", "--db", "x.db", "--report-json", "r.json", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # it ran; the grader it could not find is that check's ERROR
    assert "--skip-preflight: not checked, the run may fail on it" in out.stderr and "grader js: stat" in out.stderr
    import json

    checks = json.loads((tmp_path / "r.json").read_text())["results"][0]["checks"]
    assert [c["status"] for c in checks] == ["PASS", "ERROR"]
