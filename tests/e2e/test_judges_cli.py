"""Judges and code checks as a user meets them at the command line: bad input named with
its file and line (exit 2), what is missing on this machine stopped by preflight before
anything runs (exit 3), and the catalog describing a judge type with its prompt."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from cli import benchtape

SCENARIO = """
scenarios:
  - name: judged
    prompt: Say which test fails.
    checks:
      - type: llm-rubric
        value: Names the failing test.
"""


def bench(tmp_path: Path, head: str, scenarios: str = SCENARIO) -> Path:
    p = tmp_path / "bench.yaml"
    p.write_text("harness: mock\n" + textwrap.dedent(head).lstrip() + scenarios)
    return p


def no_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def test_an_unset_key_for_the_explicit_default_stops_the_run_before_anything_runs(tmp_path):
    b = bench(tmp_path, "judges:\n  default: anthropic\n")
    env = no_keys()
    out = benchtape("preflight", b, env=env)
    assert out.returncode == 3
    assert "judges.default is 'anthropic', whose key variable ANTHROPIC_API_KEY is not set" in out.stdout + out.stderr
    run = benchtape("run", b, "--db", tmp_path / "x.db", env=env)
    assert run.returncode == 3 and "nothing was run" in run.stdout + run.stderr


def test_no_judge_at_all_is_named_with_the_fix(tmp_path):
    out = benchtape("preflight", bench(tmp_path, ""), env=no_keys())
    assert out.returncode == 3
    assert "llm-rubric needs a judge" in out.stdout + out.stderr and "declare judges:" in out.stdout + out.stderr


def test_a_keyless_local_judge_passes_preflight(tmp_path):
    out = benchtape("preflight", bench(tmp_path, "judges: {providers: {local: {endpoint: 'http://127.0.0.1:9/v1', model: m}}}\n"), env=no_keys())
    assert out.returncode == 0, out.stdout + out.stderr


def test_an_unknown_provider_is_bad_input_naming_the_check(tmp_path):
    b = bench(tmp_path, "judges: {providers: {local: {endpoint: 'http://127.0.0.1:9/v1', model: m}}}\n", SCENARIO.replace("value: Names the failing test.", "value: x\n        args: {judge: lcoal}"))
    out = benchtape("list", b)
    assert out.returncode == 1  # `list`: a load error is exit 1, as madbench's; elsewhere 2
    assert f"{b}:8: check llm-rubric: args.judge 'lcoal' names no judge provider" in out.stderr
    assert "did you mean 'local'?" in out.stderr and "Traceback" not in out.stderr


def test_missing_runtimes_are_named_with_their_install_command(tmp_path):
    (tmp_path / "g.go").write_text("package main\nfunc main() {}\n")
    scenarios = """
scenarios:
  - name: code
    prompt: hi
    checks:
      - {type: js, value: "output.length > 0"}
      - {type: custom:gosrc, value: g.go}
      - {type: custom:wasm, value: missing.wasm}
"""
    env = {**os.environ, "PATH": str(tmp_path)}  # neither node nor go on PATH
    out = benchtape("preflight", bench(tmp_path, "", scenarios), env=env)
    text = out.stdout + out.stderr
    assert out.returncode == 3
    assert "js checks run with node, which is not on PATH: apt-get install nodejs" in text
    assert "custom:gosrc needs the Go toolchain, which is not on PATH: apt-get install golang-go" in text
    assert "missing.wasm does not exist" in text


def test_checks_describes_a_judge_type_with_its_arguments(tmp_path):
    out = benchtape("checks", "llm-rubric")
    assert out.returncode == 0
    assert "(Judge, AI)" in out.stdout and "args.votes" in out.stdout and "args.judge" in out.stdout


def test_an_offline_judge_served_by_model_serve_as_the_docs_show_it(tmp_path):
    """The worked example of README and docs/judges-offline.md: a `chat:` script served by
    `benchtape model serve`, a bench whose `judges:` names it. Two AI checks, one reply: the
    first verdict comes from the script, and the second says in words what ran out and what
    to add (it was "the judge's reply is not JSON: '[benchtape scripted model] …'")."""
    import re
    import signal

    from cli import popen

    (tmp_path / "judge.yaml").write_text('chat:\n  - reply: \'{"reason": "it greets the user", "score": 1, "pass": true}\'\n')
    server = popen("model", "serve", tmp_path / "judge.yaml", "--port", "0", cwd=tmp_path)
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
        assert "1 chat reply(ies) for judges" in banner, banner
        url = re.search(r"on (http://127\.0\.0\.1:\d+)", banner).group(1)
        b = bench(tmp_path, f"judges:\n  default: local\n  providers:\n    local: {{endpoint: '{url}/v1', model: scripted}}\n", """
scenarios:
  - name: greets
    prompt: Say hello.
    mock: {steps: [{say: "Hello!"}]}
    checks: [{type: llm-rubric, value: The answer greets the user.}]
  - name: greets-again
    prompt: Say hello again.
    mock: {steps: [{say: "Hello again!"}]}
    checks: [{type: llm-rubric, value: The answer greets the user.}]
""")
        out = benchtape("run", b, "--db", tmp_path / "x.db", "--concurrency", "1", "--report-json", tmp_path / "r.json", env=no_keys())
        import json

        results = {r["scenario_id"]: {**r["checks"][0], **r["checks"][0]["result"]} for r in json.loads((tmp_path / "r.json").read_text())["results"]}
        assert results["greets"]["status"] == "PASS" and "it greets the user" in results["greets"]["reason"], out.stderr
        reason = results["greets-again"]["reason"]
        assert results["greets-again"]["status"] == "ERROR" and "No `chat:` reply of the script is left for this judge request: the script has 1" in reason
        assert "[benchtape scripted model]" not in reason and "not JSON" not in reason
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    assert "judge: chat reply 1/1" in err and "THE SCRIPT RAN OUT: a judge asked again, and all 1 chat reply(ies) are used" in err
