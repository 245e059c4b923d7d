"""`benchtape check`, the negative control: every gradable check must fail on a no-op agent."""

from __future__ import annotations

from replaykit import DEMO, cli, write_bench

from benchtape.store.database import Store

HOLDS = """
description: a bench whose checks all need real work
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: edits
    prompt: "Fix calc.py"
    mock:            # ignored by the control: the no-op agent runs no script
      steps:
        - tool: Write
          input: {file_path: out.txt, content: "fixed"}
        - say: "fixed it"
      metrics: {cost_usd: 0.01, duration_ms: 500}
    checks:
      - {type: contains, value: "fixed"}
      - {type: session:tool-used, value: Write}
      - {type: cost, threshold: 0.05}
      - {type: latency, threshold: 60000, readout: true}
      - type: any-of                 # made only of latency and cost: not applicable
        checks:
          - {type: cost, threshold: 0.05}
          - {type: latency, threshold: 60000}
"""

BROKEN = """
description: a fence with no activity partner, a needle the prompt already holds, and a check that grades nothing
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: fenced
    prompt: "Read the README and summarise it"
    checks:
      - {type: session:tools-only, value: [Read, Grep]}
      - {type: contains, value: "README"}
      - {type: environment:tool-available, value: Skill}   # errors under the mock, as under madbench (no system:init roster)
      - {type: session:tool-used, value: Read}
"""

NOTHING = """
description: only metrics checks
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: metrics-only
    prompt: "anything"
    checks:
      - {type: cost, threshold: 0.05}
      - {type: latency, threshold: 60000}
"""


def test_control_holds_exit_0_with_not_applicable_bucket(tmp_path):
    bench = write_bench(tmp_path, HOLDS)
    out = cli("check", bench, "--db", tmp_path / "c.db", "-v")
    assert out.code == 0, out.stdout + out.stderr
    assert "edits #1  [holds]  2 failed as required · 0 WRONGLY PASSED · 0 ERRORED · 3 NOT APPLICABLE" in out.stdout
    assert out.lines[-1] == "2/2 checks failed as required · 0 errored · 0 wrongly passed"
    # -v lists every check with its bucket; the composite of latency/cost is NA, the readout not counted
    assert "NOT APPLICABLE     checks[4]  any-of: NA" in out.stdout
    assert "NOT APPLICABLE     checks[3]  latency (readout): NA" in out.stdout
    assert "failed as required checks[1]  session:tool-used: FAIL" in out.stdout


def test_control_breaks_exit_1_wrongly_passed_and_errored(tmp_path):
    bench = write_bench(tmp_path, BROKEN)
    out = cli("check", bench, "--db", tmp_path / "c.db")
    assert out.code == 1
    assert "[DOES NOT HOLD]  1 failed as required · 2 WRONGLY PASSED · 1 ERRORED · 0 NOT APPLICABLE" in out.stdout
    # without -v only the checks that break the control are listed
    assert "WRONGLY PASSED     checks[0]  session:tools-only: PASS" in out.stdout
    assert "WRONGLY PASSED     checks[1]  contains: PASS" in out.stdout
    assert "ERRORED            checks[2]  environment:tool-available: ERROR" in out.stdout
    assert "checks[3]" not in out.stdout
    assert out.lines[-1] == "1/4 checks failed as required · 1 errored · 2 wrongly passed"


def test_a_no_op_session_that_errored_is_a_scenario_that_could_not_be_graded(tmp_path):
    """madbench's `check` exits 1 when a scenario could not be graded: a no-op session that
    ended in error (here the prompt makes the mock fail) said `[holds]`, exit 0."""
    bench = write_bench(tmp_path, HOLDS.replace('prompt: "Fix calc.py"', 'prompt: "Fix calc.py !ERROR!"'))
    out = cli("check", bench, "--db", tmp_path / "c.db", "--json")
    assert out.code == 1, out.stdout + out.stderr
    import json

    doc = json.loads(out.stdout)
    assert doc["unfinished_sessions"] == 1 and doc["totals"]["WRONGLY PASSED"] == 0 and doc["exit_code"] == 1
    plain = cli("check", bench, "--db", tmp_path / "c.db")
    assert "edits #1  [DOES NOT HOLD]" in plain.stdout and "the no-op session ended error" in plain.stdout
    assert "a no-op session did not run to its end, so its scenario could not be graded" in plain.stdout
    assert plain.lines[-1] == "2/2 checks failed as required · 0 errored · 0 wrongly passed · 1 no-op session(s) did not run to their end"


def test_nothing_gradable_exit_3(tmp_path):
    out = cli("check", write_bench(tmp_path, NOTHING), "--db", tmp_path / "c.db")
    assert out.code == 3
    assert "0 gradable checks" in out.stdout
    assert out.lines[-1] == "0/0 checks failed as required · 0 errored · 0 wrongly passed"


def test_control_sessions_are_recorded_as_a_control_run(tmp_path):
    db = tmp_path / "c.db"
    out = cli("check", write_bench(tmp_path, HOLDS), "--db", db, "--json")
    assert out.code == 0
    doc = out.json()
    store = Store(db)
    [run] = store.runs()
    assert run["kind"] == "control" and doc["runs"] == [run["id"]]
    [grading] = store.gradings()
    assert grading["source"] == "control" and grading["checkset_sha256"] and grading["catalog_version"]
    [row] = list(store.session_rows())
    session = store.load_session(row.id)
    # the no-op agent: the prompt echoed as the final output, no tool calls, the script ignored
    assert session.final_output == "Fix calc.py" and session.calls == [] and session.finished
    assert doc["cells"][0]["tally"]["failed as required"] == 2


def test_sandbox_none_still_needs_allow_host_writes(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    bench = write_bench(tmp_path, f"""
        description: runs in a real directory
        harness: mock
        defaults: {{timeout: 30s}}
        scenarios:
          - name: here
            prompt: "do it"
            sandbox: {{level: none, workdir: {real}}}
            checks:
              - {{type: session:tool-used, value: Edit}}
        """)
    blocked = cli("check", bench, "--db", tmp_path / "c.db")
    assert blocked.code == 3
    assert "--allow-host-writes" in blocked.stderr
    assert not (tmp_path / "c.db").exists() or not list(Store(tmp_path / "c.db").session_rows())
    ok = cli("check", bench, "--db", tmp_path / "c.db", "--allow-host-writes")
    assert ok.code == 0, ok.stdout + ok.stderr
    assert ok.lines[-1] == "1/1 checks failed as required · 0 errored · 0 wrongly passed"


def test_demo_bench_holds_its_negative_control(tmp_path):
    """The demo keeps its anti-cheat guard inside an assert-set with the test run, so a
    no-op agent fails every gradable check (a lone guard would be WRONGLY PASSED)."""
    out = cli("check", DEMO, "--db", tmp_path / "c.db")
    assert out.code == 0, out.stdout + out.stderr
    assert "WRONGLY PASSED" not in out.stdout.replace("0 WRONGLY PASSED", "")
    assert "NOT APPLICABLE" in out.stdout  # the cost check of fixes-the-bug
    assert out.lines[-1] == "7/7 checks failed as required · 0 errored · 0 wrongly passed"


def test_an_image_bench_cannot_be_negative_controlled(tmp_path):
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)  # a PNG by its bytes: `image:` is checked at load
    bench = write_bench(tmp_path, """
        description: the mock cannot deliver an image
        harness: mock
        scenarios:
          - name: pic
            prompt: "what is this"
            image: img.png
            checks:
              - {type: contains, value: cat}
        """)
    out = cli("check", bench, "--db", tmp_path / "c.db")
    assert out.code == 3
    assert "cannot be negative-controlled" in out.stderr
    assert not (tmp_path / "c.db").exists()
