"""`benchtape export --format inspect`: a run as an Inspect AI `.eval` log, written with
Inspect's API and read back with it (`read_eval_log`): one sample per session, its messages
and tool events, subagents as agent spans, scores from the stored verdicts; and `inspect view`
(started on loopback) lists the log and serves its samples."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from formatskit import benchtape, write_mock_bench
from inspectview import inspect_view

from benchtape.replay.query import latest_verdicts
from benchtape.store.database import Store

inspect_log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed: pip install 'benchtape[inspect]'")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    """A mock run (nested subagents, a failing tool, passing and failing checks) and its Inspect log."""
    folder = tmp_path_factory.mktemp("inspect")
    db = folder / "r.db"
    assert benchtape("run", write_mock_bench(folder), "--db", db, cwd=folder).returncode == 1
    out = benchtape("export", "--format", "inspect", "--run", "latest", "-o", folder / "logs", "--db", db)
    assert out.returncode == 0 and "wrote an Inspect log of 2 sessions" in out.stdout, out.stderr
    (log,) = (folder / "logs").glob("*.eval")
    return db, log


def test_each_session_is_a_sample_with_its_messages_and_scores(exported: tuple[Path, Path]) -> None:
    db, path = exported
    log = inspect_log.read_eval_log(str(path))
    store = Store(db)
    rows = {r.scenario: r for r in store.session_rows()}
    assert log.status == "success" and log.eval.task == path.parent.parent.name and log.eval.run_id == next(iter(rows.values())).run_id
    assert path.name.endswith(f"_{log.eval.task}_{log.eval.task_id}.eval")  # Inspect's own naming: how `inspect view` lists it
    samples = {s.metadata["scenario"]: s for s in log.samples}
    assert sorted(s.id for s in log.samples) == ["delegates@attempt-1", "says-little@attempt-1"] and {s.epoch for s in log.samples} == {1}
    for scenario, sample in samples.items():
        verdicts = latest_verdicts(store, rows[scenario].id)
        assert {k: v.value for k, v in sample.scores.items() if k != "scenario"} == {v["metric"] or v["type"]: v["score"] for v in verdicts}
        assert sample.metadata["session_id"] == rows[scenario].id
    assert samples["delegates"].scores["scenario"].value == 1.0 and samples["says-little"].scores["scenario"].value == 0.0
    assert samples["says-little"].scores["contains"].explanation.startswith("FAIL")
    assert samples["says-little"].scores["scenario"].explanation.startswith("the scenario failed: not every counting check PASS or NA")  # it read "failed (every counting check PASS or NA)"
    d = samples["delegates"]
    assert d.input == "review the code and report" and d.output.completion == "All reviewed: no bugs."
    roles = [m.role for m in d.messages]
    assert roles[0] == "user" and roles[-1] == "assistant" and roles.count("tool") == 5  # Write, Read, the delegation, the skill's result, Lint
    asked = {c.id: c.function for m in d.messages if m.role == "assistant" for c in m.tool_calls or []}
    answered = {m.tool_call_id: m for m in d.messages if m.role == "tool"}
    assert {asked[i] for i in answered if i in asked} == {"Write", "Read", "Task", "Lint"}
    assert sorted(m.function for m in answered.values() if m.error) == ["Lint", "Read"]  # the failing tools, by their outcome
    assert next(m.error.message for m in answered.values() if m.function == "Lint") == "3 warnings"
    spans = [(e.name, e.type) for e in d.events if e.event == "span_begin"]
    assert spans == [("Explore", "agent"), ("Plan", "agent")]
    delegation = next(e for e in d.events if e.event == "tool" and e.function == "Task" and e.span_id is None)
    assert delegation.agent == "Explore" and delegation.agent_span_id == next(e.id for e in d.events if e.event == "span_begin" and e.name == "Explore")
    assert d.model_usage[log.eval.model].total_cost == 0.02 and d.model_usage[log.eval.model].input_tokens_cache_read == 300
    scores = {s.name: s.metrics for s in log.results.scores}
    assert scores["scenario"]["accuracy"].value == 0.5
    summaries = inspect_log.read_eval_log_sample_summaries(str(path))
    assert sorted(s.id for s in summaries) == sorted(s.id for s in log.samples)


def test_inspect_view_lists_the_log_and_serves_its_samples_with_their_scores(exported: tuple[Path, Path]) -> None:
    """The real `inspect view` on loopback: its log listing names our log, its header our run,
    and its sample list (read as its front end reads it) our sessions with their scores."""
    db, path = exported
    store = Store(db)
    rows = {r.scenario: r for r in store.session_rows()}
    with inspect_view(path.parent) as viewer:
        files = viewer.log_files()
        assert [Path(urllib.parse.urlparse(f["name"]).path).name for f in files] == [path.name]
        name = files[0]["name"]
        header = viewer.headers(name)
        assert header["status"] == "success" and header["eval"]["task"] == files[0]["task"] and header["eval"]["run_id"] == rows["delegates"].run_id
        summaries = {s["id"].split("@")[0]: s for s in viewer.sample_summaries(name)}
        assert sorted(s["id"] for s in viewer.sample_summaries(name)) == ["delegates@attempt-1", "says-little@attempt-1"]
        for scenario, summary in summaries.items():
            verdicts = latest_verdicts(store, rows[scenario].id)
            assert {k: v["value"] for k, v in summary["scores"].items() if k != "scenario"} == {v["metric"] or v["type"]: v["score"] for v in verdicts}
        assert summaries["delegates"]["scores"]["scenario"]["value"] == 1.0 and summaries["says-little"]["scores"]["scenario"]["value"] == 0.0
        one = viewer.sample(name, "delegates@attempt-1")
        assert one["metadata"]["session_id"] == rows["delegates"].id and one["output"]["completion"] == "All reviewed: no bugs."


def test_without_the_extra_the_export_names_the_install_command(exported: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = exported
    probe = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        f"sys.argv = ['benchtape', 'export', '--format', 'inspect', '--run', 'latest', '-o', {str(tmp_path / 'x.eval')!r}, '--db', {str(db)!r}]\n"
        "from benchtape.cli import main\nmain()\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert out.returncode == 2 and "pip install 'benchtape[inspect]'" in out.stderr, out.stderr
    assert not (tmp_path / "x.eval").exists()


def test_a_log_that_would_publish_the_answer_key_is_not_written(tmp_path: Path) -> None:
    """Scores carry the checks' reasons: as a report, the log is refused when one would publish
    a `generate:` value the agent did not say itself."""
    gen = tmp_path / "gen.py"
    gen.write_text(f"#!{sys.executable}\nprint('ANSWER=fixed-answer-4410')\n")
    gen.chmod(0o755)
    (tmp_path / "bench.yaml").write_text(
        "harness: mock\nscenarios:\n  - name: published\n    prompt: a\n    generate: gen.py\n"
        "    mock: {steps: [{say: \"I do not know\"}]}\n    checks:\n      - {type: contains, value: fixed-answer-4410}\n"
    )
    db = tmp_path / "x.db"
    assert benchtape("run", tmp_path / "bench.yaml", "--db", db, cwd=tmp_path).returncode == 1
    out = benchtape("export", "--format", "inspect", "--run", "latest", "-o", tmp_path / "x.eval", "--db", db)
    assert out.returncode == 1 and "was NOT written" in out.stderr and "fixed-answer-4410" not in out.stderr, out.stderr
    assert not (tmp_path / "x.eval").exists() and not list(tmp_path.glob(".x.eval*"))
    for args in (["latest", "-o", tmp_path / "one.json"], ["--run", "latest", "-o", tmp_path / "atif"]):  # ATIF carries the reasons too
        out = benchtape("export", "--format", "atif", *args, "--db", db)
        assert out.returncode == 1 and "was NOT written" in out.stderr and "fixed-answer-4410" not in out.stderr, out.stderr
    assert not (tmp_path / "one.json").exists() and not (tmp_path / "atif").exists()



def test_a_place_that_cannot_be_written_is_bad_input_not_a_traceback(exported: tuple[Path, Path]) -> None:
    db, _ = exported
    out = benchtape("export", "latest", "--format", "inspect", "-o", "/proc/benchtape-x.eval", "--db", db)
    assert out.returncode == 2 and "cannot write there" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_setup_whose_every_sample_errored_is_an_errored_log(tmp_path: Path) -> None:
    """benchtape runs past a sample's error as Inspect does with fail_on_error=False: a log with
    one errored sample is a success holding it; a log in which every sample errored measured
    nothing, and `inspect view` lists it as an error, not a success."""
    bench = tmp_path / "bench.yaml"
    bench.write_text(
        "description: errors\nharness: mock\nscenarios:\n"
        "  - name: broken\n    prompt: '!ERROR! fail here'\n    checks: [{type: contains, value: x}]\n"
        "  - name: fine\n    prompt: say fine\n    checks: [{type: contains, value: fine}]\n"
    )
    db = tmp_path / "r.db"
    benchtape("run", bench, "--db", db, cwd=tmp_path)
    logs = {}
    for name, sel in (("some", ["--run", "latest"]), ("all", ["latest/broken#1"])):
        out = benchtape("export", "--format", "inspect", *sel, "-o", tmp_path / f"{name}.eval", "--db", db)
        assert out.returncode == 0, out.stdout + out.stderr
        logs[name] = inspect_log.read_eval_log(str(tmp_path / f"{name}.eval"))
    some, every = logs["some"], logs["all"]
    assert some.status == "success" and some.error is None and some.eval.config.fail_on_error is False
    assert sorted(s.metadata["scenario"] for s in some.samples if s.error) == ["broken"]
    assert every.status == "error" and len(every.samples) == 1 and every.samples[0].error is not None
    assert every.error.message.startswith("every sample errored (1); the first: the harness ended error")


def test_an_imported_transcripts_log_begins_when_its_session_did(tmp_path: Path) -> None:
    """An import's run starts when the import ran, its session months before: the log was
    created (and named) at the import and completed at the session's end, ending before it
    began (itsdangerous' newcomer pass, on real transcripts). It begins with its earliest."""
    from datetime import datetime

    from realdatakit import REALDATA

    transcript = REALDATA / "claude-transcripts" / "spotter__short__tool-errors__v2.1.38.jsonl"
    db = tmp_path / "i.db"
    done = benchtape("import", "claude-code", transcript, "--db", db)
    assert done.returncode == 0, done.stdout + done.stderr
    out = benchtape("export", "--format", "inspect", "--run", "latest", "-o", tmp_path / "logs", "--db", db)
    assert out.returncode == 0, out.stdout + out.stderr
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = inspect_log.read_eval_log(str(path))
    created, started, completed = (datetime.fromisoformat(t) for t in (log.eval.created, log.stats.started_at, log.stats.completed_at))
    sample = datetime.fromisoformat(str(log.samples[0].started_at))
    assert created <= sample and started <= completed and sample.year < datetime.now().year + 1, (log.eval.created, log.stats, sample)
    assert (datetime.now(sample.tzinfo) - created).days > 30  # the session's time, not the import's
    assert path.name.startswith(log.eval.created.replace(":", "-")[:10])
