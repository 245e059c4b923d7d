"""`generate:` values reach re-grading too: kept once the run's sessions are over."""

from __future__ import annotations

from stagekit import run_bench, write_bench, write_program
from typer.testing import CliRunner


def cli(*argv: str):
    from benchtape.cli import build

    app = build()

    return CliRunner().invoke(app, list(argv), env={"NO_COLOR": "1"}, catch_exceptions=False)


def test_grade_and_regrade_see_the_generated_answer(tmp_path):
    (tmp_path / "td").mkdir()
    (tmp_path / "td" / "task.txt").write_text("compute the answer\n")
    write_program(tmp_path / "gen.py", "print('ANSWER=' + str(6 * 7))\n")
    bench = write_bench(tmp_path, """
        harness: mock
        defaults: {interactive: false}
        scenarios:
          - name: answer
            prompt: what is the answer?
            testdata: td
            generate: gen.py
            mock: {steps: [{say: "42"}]}
            checks:
              - type: python
                value: |
                  def evaluate(output, context):
                      return output.strip() == context["vars"]["ANSWER"]
        """)
    ran = run_bench(bench, report=False)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.rows("SELECT COUNT(*) FROM generated_vars")[0][0] == 1
    graded = cli("grade", "--all", "--db", str(ran.db))
    assert graded.exit_code == 0 and "DIVERGED" not in graded.stdout, graded.stdout
    regraded = cli("regrade", "--bench", str(bench), "--all", "--db", str(ran.db))
    assert regraded.exit_code == 0
    assert ran.rows("SELECT status FROM verdicts ORDER BY created_at DESC LIMIT 1")[0][0] == "PASS"
