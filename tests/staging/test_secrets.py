"""A secret the agent itself prints is [REDACTED] everywhere benchtape writes it down."""

from __future__ import annotations

from pathlib import Path

from stagekit import run_bench, write_bench

from benchtape.store.database import Store

TOKEN = "tok-live-5f1d9c2e77"  # MY_TOKEN: a *_TOKEN name, forwarded by share.env
PASSPHRASE = "pass-phrase-0a8b3c"  # MY_PASSPHRASE: secret only because share.secret_env names it


def test_a_secret_printed_by_the_agent_is_redacted_in_actions_raw_report_and_db_bytes(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: prints-token
            prompt: show me the token
            sandbox: {level: home, share: {env: [MY_TOKEN]}}
            mock:
              steps:
                - tool: Bash
                  input: {command: "echo the token is $MY_TOKEN"}
                - say: done
          - name: dies-saying-it
            prompt: show me the passphrase
            sandbox: {level: home, share: {secret_env: [MY_PASSPHRASE]}}
            mock:
              steps:
                - tool: Bash
                  input: {command: "echo $MY_PASSPHRASE"}
                # the harness's own stderr, then it dies: the stderr tail lands in an error action
                - tool: Bash
                  input: {command: "echo fatal: key $MY_PASSPHRASE rejected > /proc/$PPID/fd/2; kill -9 $PPID"}
    """)
    ran = run_bench(bench, env={"MY_TOKEN": TOKEN, "MY_PASSPHRASE": PASSPHRASE})
    assert ran.code == 1, ran.stderr  # the second scenario errored

    outputs = [a["output"] for a in ran.actions("tool.result")]
    assert "the token is [REDACTED]\n" in outputs and "[REDACTED]\n" in outputs
    [err] = [a for a in ran.actions("error") if "stderr_tail" in a]
    assert "fatal: key [REDACTED] rejected" in err["stderr_tail"]
    store = Store(ran.db, readonly=True)  # raw lines are stored compressed: read them back through the store
    raw = "\n".join(line for (sid,) in ran.rows("select id from sessions") for line in store.raw_lines(sid))
    assert raw.count("[REDACTED]") >= 2
    assert TOKEN not in raw and PASSPHRASE not in raw  # compressed raw bytes would hide a secret from the byte scan below

    report = ran.report.read_text()
    assert "[REDACTED]" in report
    for secret in (TOKEN, PASSPHRASE):
        assert secret not in report
        assert secret not in ran.stdout + ran.stderr
        for f in Path(ran.db).parent.glob(ran.db.name + "*"):  # the db, its -wal and -shm
            assert secret.encode() not in f.read_bytes(), f"{secret} in clear in {f.name}"


def test_check_evidence_in_the_report_is_redacted(tmp_path):
    """An exec check runs with a scrubbed environment: agent-written code it runs never sees a host secret."""
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: grader-prints-it
            prompt: a
            sandbox: {level: home, share: {env: [MY_TOKEN]}}
            mock: {steps: [{say: done}]}
            checks:
              - type: exec
                args: {cmd: [sh, -c, 'echo grader sees $MY_TOKEN; exit 1']}
    """)
    ran = run_bench(bench, env={"MY_TOKEN": TOKEN})
    assert ran.code == 1
    report = ran.report.read_text()
    assert TOKEN not in report and "grader sees\\n" in report
