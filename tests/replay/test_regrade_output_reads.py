"""A regrade whose checks read only the output and the prompt reads sessions without their calls
(core/model.py BULK_KINDS), and grades them exactly as it grades the whole session: on every
real transcript, the parts such a grading reads are the whole session's, a session with a
subagent (whose answer may come through the calls' results) and a task cell are read whole,
and a bench with any check that reads more reads every row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))

from adapterkit import realdata_params, session_of  # noqa: E402

from benchtape.adapters.transcripts import open_transcripts  # noqa: E402
from benchtape.core.model import BULK_KINDS, Action, Session, output_complete  # noqa: E402
from benchtape.replay import regrade as regrade_module  # noqa: E402
from benchtape.replay.regrade import regrade  # noqa: E402
from benchtape.replay.reproduce import reproduce_store  # noqa: E402
from benchtape.replay.select import Selection  # noqa: E402
from benchtape.spec.bench import load_bench  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

REAL = realdata_params("**/*.jsonl")
# one check of each output family: strings, structured, numbers in the output, NLP; and the prompt's
OUTPUT_CHECKS = (
    '{type: contains, value: "the"}',
    '{type: not-contains, value: "Traceback"}',
    '{type: regex, value: "\\\\w+"}',
    "{type: is-json}",
    "{type: contains-json}",
    "{type: rouge-n, value: 'the change is done', threshold: 0.0}",
    "{type: cost, threshold: 100.0}",  # the reported cost and latency: folded from metrics and session.finished rows
    "{type: latency, threshold: 3600000}",
)


def _actions(path: Path) -> list[Action]:
    out: list[Action] = []
    for transcript in open_transcripts(path):
        out += [a for _line, got in transcript.lines() for a in got]
    return out


def _frame(s: Session) -> tuple:
    """What a grading of output checks reads of a session, and what it reads to decide its status."""
    return (s.final_output, s.prompt, s.status, s.finished, s.exit_code, s.timed_out, s.records_calls, s.task, s.scenario, s.harness, s.model, s.provider, s.work_dir, s.snapshot, s.environment, s.warnings, s.errors, s.metrics.cost_usd, s.metrics.latency_ms, s.metrics.duration_ms)


@pytest.mark.parametrize("path", REAL)
def test_without_its_calls_a_real_session_has_the_output_and_frame_the_whole_one_has(path: Path) -> None:
    actions = _actions(path)
    whole = session_of(actions)
    partial = session_of([a for a in actions if a.kind not in BULK_KINDS])
    if output_complete(partial):
        assert _frame(partial) == _frame(whole)
    else:
        assert whole.subagents  # the one reason to read it whole


def test_some_real_sessions_are_read_whole_for_their_subagents() -> None:
    """The fallback is exercised by the real data, not only by a fixture."""
    assert REAL and not any(p.values[0] is None for p in REAL)
    whole_reads = [p for p in REAL if not output_complete(session_of([a for a in _actions(p.values[0]) if a.kind not in BULK_KINDS]))]
    assert whole_reads and len(whole_reads) < len(REAL)


def _store_of_real_sessions(tmp_path: Path) -> tuple[Store, list[str]]:
    store = Store(tmp_path / "real.db")
    run_id = store.new_run("run", bench_path="bench.yaml", harness="claude-code")
    ids = []
    for p in REAL:
        sid = store.new_session(run_id, "real", harness="claude-code")
        store.append(sid, _actions(p.values[0]))
        ids.append(sid)
    return store, ids


def _bench(tmp_path: Path, checks: tuple[str, ...]) -> Path:
    lines = ["description: output checks over real sessions", "harness: claude-code", "scenarios:", "  - name: real", '    prompt: "whatever they were asked"', "    checks:"]
    (tmp_path / "bench.yaml").write_text("\n".join([*lines, *(f"      - {c}" for c in checks)]) + "\n")
    return tmp_path / "bench.yaml"


def _verdicts(store: Store, grading_id: str) -> list[tuple]:
    return sorted((v["session_id"], v["check_path"], v["status"], v["score"], v["reason"], str(v["evidence"])) for v in store.verdicts(grading_id=grading_id))


def _reads(monkeypatch: pytest.MonkeyPatch, store: Store) -> list[tuple[str, object]]:
    """Every action read the store is asked for: (session, the kinds it skipped)."""
    asked: list[tuple[str, object]] = []
    real = store.action_rows

    def recording(session_id: str, kinds=None, skip=None):  # noqa: ANN001, ANN202
        asked.append((session_id, None if skip is None else tuple(skip)))
        return real(session_id, kinds, skip)

    monkeypatch.setattr(store, "action_rows", recording)
    return asked


def test_a_regrade_of_output_checks_reads_no_calls_and_gives_the_verdicts_of_whole_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ids = _store_of_real_sessions(tmp_path)
    bench = load_bench(_bench(tmp_path, OUTPUT_CHECKS))
    asked = _reads(monkeypatch, store)
    partial = regrade(store, bench, Selection(all=True))
    whole_after_partial = [sid for sid, skip in asked if skip is None]
    assert {sid for sid, skip in asked if skip == BULK_KINDS} == set(ids)  # every session tried without its calls first
    assert 0 < len(whole_after_partial) < len(ids)  # those with a subagent read again, whole
    monkeypatch.setattr(regrade_module, "stored_session", lambda st, row, output_only: st.load_session(row.id, row))
    whole = regrade(store, bench, Selection(all=True))
    assert partial.graded == whole.graded == len(ids)
    assert _verdicts(store, partial.grading_id) == _verdicts(store, whole.grading_id)
    store.close()


def test_grade_reproduces_an_output_grading_reading_no_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The positive control reads sessions as the regrade it reproduces did (the stored checks'
    types decide), and every verdict reproduces."""
    store, ids = _store_of_real_sessions(tmp_path)
    graded = regrade(store, load_bench(_bench(tmp_path, OUTPUT_CHECKS)), Selection(all=True))
    asked = _reads(monkeypatch, store)
    rep = reproduce_store(store, Selection(all=True), grading=graded.grading_id)
    assert rep.sessions == len(ids) and rep.counts["DIVERGED"] == 0 and rep.counts["COULD NOT RE-GRADE"] == 0, rep.counts
    assert {sid for sid, skip in asked if skip == BULK_KINDS} == set(ids)
    assert 0 < len([sid for sid, skip in asked if skip is None]) < len(ids)  # the subagents' sessions, read again whole
    assert _verdicts(store, rep.grading_id) == _verdicts(store, graded.grading_id)
    store.close()


def test_grade_of_a_grading_that_read_calls_reads_whole_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ids = _store_of_real_sessions(tmp_path)
    graded = regrade(store, load_bench(_bench(tmp_path, (OUTPUT_CHECKS[0], "{type: session:tool-used, value: Read, args: {gte: 0}}"))), Selection(all=True))
    asked = _reads(monkeypatch, store)
    rep = reproduce_store(store, Selection(all=True), grading=graded.grading_id)
    assert rep.counts["DIVERGED"] == 0 and sorted(asked) == sorted((sid, None) for sid in ids)
    store.close()


@pytest.mark.parametrize("more", ["{type: session:tool-used, value: Read, args: {gte: 0}}", "{type: session:step-count, args: {gte: 0}}"])
def test_one_check_that_reads_more_than_the_output_makes_every_session_read_whole(more: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ids = _store_of_real_sessions(tmp_path)
    asked = _reads(monkeypatch, store)
    regrade(store, load_bench(_bench(tmp_path, (OUTPUT_CHECKS[0], more))), Selection(all=True))
    assert sorted(asked) == sorted((sid, None) for sid in ids)
    store.close()
