"""`benchtape report --html`: a run or one session as one static, self-contained, escaped page."""

from __future__ import annotations

from replaykit import cli, write_bench

from benchtape.store.database import Store


def test_run_and_session_pages(demo_db, tmp_path):
    store = Store(demo_db)
    run_id = next(r["id"] for r in store.runs() if r["kind"] == "demo")
    out = cli("report", run_id[:12].lower(), "--html", tmp_path / "run.html", "--db", demo_db)
    assert out.code == 0, out.stderr
    assert out.stdout.strip() == str(tmp_path / "run.html")
    page = (tmp_path / "run.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page.split("<body>")[0]
    assert run_id in page and "<th>harness</th><td>mock</td>" in page
    for scenario, status in (("fixes-the-bug", "pass"), ("wrong-fix", "fail"), ("weakens-the-test", "fail")):
        assert f'{scenario} <small>attempt 1</small> <span class="badge {status}">{status}</span>' in page, scenario
    assert '<span class="badge pass">pass</span> 1 <span class="badge fail">fail</span> 2' in page
    assert "output contains &#x27;tests pass&#x27;" in page  # a check's reason
    assert 'class="child"' in page and "Write: invoked 0 times" in page  # a composite's children
    assert "<details" in page and "<td>Edit</td>" in page  # the timeline, with its tool names
    assert "model</th><td>unknown" in page

    sid = next(r.id for r in store.session_rows(run_id=run_id) if r.scenario == "wrong-fix")
    out = cli("report", "--session", sid, "--html", tmp_path / "one.html", "--db", demo_db)
    assert out.code == 0, out.stderr
    one = (tmp_path / "one.html").read_text()
    assert "wrong-fix" in one and "fixes-the-bug" not in one and '<span class="badge fail">fail</span>' in one
    assert "Changed add(); should be fine now." in one


def test_agent_text_is_escaped(tmp_path):
    bench = write_bench(
        tmp_path / "b",
        """
        harness: mock
        scenarios:
          - name: xss
            prompt: "say it"
            sandbox: workspace
            mock:
              steps:
                - tool: Bash
                  input: {command: "echo '<script>alert(2)</script>'"}
                - say: "<script>alert(1)</script>"
            checks:
              - {type: contains, value: "<script>"}
        """,
    )
    db = tmp_path / "x.db"
    assert cli("run", bench, "--db", db, "--plain").code in (0, 1)
    [run] = Store(db).runs()
    out = cli("report", run["id"], "--html", tmp_path / "x.html", "--db", db)
    assert out.code == 0, out.stderr
    page = (tmp_path / "x.html").read_text()
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the final output
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page  # a tool's output


def test_bad_ids_exit_2(demo_db, tmp_path):
    out = cli("report", "ZZZZ", "--html", tmp_path / "r.html", "--db", demo_db)
    assert out.code == 2 and "no run with id 'ZZZZ'" in out.stderr
    out = cli("report", "--session", "ZZZZ", "--html", tmp_path / "r.html", "--db", demo_db)
    assert out.code == 2 and "no session with id 'ZZZZ'" in out.stderr
    assert cli("report", "--html", tmp_path / "r.html", "--db", demo_db).code == 2
    assert not (tmp_path / "r.html").exists()
