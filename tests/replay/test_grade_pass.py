"""A grade pass over many sessions: each distinct stored spec is rebuilt once, verdicts are
written a batch of sessions at a time (all of them, the last partial batch included), and the
plain lines it prints are exactly what the plain rich console printed."""

from __future__ import annotations

import io

import pytest
from replaykit import write_bench
from rich.text import Text

import benchtape.replay.reproduce as reproduce
from benchtape.core.model import Action
from benchtape.render import PlainLines, console, plain_table
from benchtape.replay.regrade import regrade
from benchtape.replay.select import Selection
from benchtape.spec.bench import load_bench
from benchtape.store.database import Store

BENCH = """
description: many sessions
harness: mock
scenarios:
  - name: one
    prompt: "fix it"
    checks:
      - {type: contains, value: done}
      - {type: session:tool-used, value: Read, args: {gte: 1}}
      - {type: regex, value: "\\\\d+ files"}
"""


def _store(tmp_path, sessions: int) -> Store:
    store = Store(tmp_path / "s.db")
    run = store.new_run("run", bench_path=str(tmp_path / "bench.yaml"), harness="mock")
    for n in range(sessions):
        sid = store.new_session(run, "one", harness="mock")
        store.append(sid, [
            Action("session.started", {"scenario": "one", "harness": "mock", "prompt": "fix it"}),
            Action("tool.call", {"call_id": "c1", "tool": "Read" if n % 2 else "Grep", "input": {}}),
            Action("tool.result", {"call_id": "c1", "output": "x"}),
            Action("final_output", {"text": f"done: {n} files"}),
            Action("session.finished", {"status": "ok", "exit_code": 0}),
        ])
    return store


def test_each_distinct_spec_is_built_once_and_every_verdict_is_written(tmp_path, monkeypatch):
    store = _store(tmp_path, 7)
    bench = load_bench(write_bench(tmp_path, BENCH))
    regrade(store, bench, Selection(all=True))
    built: list[str] = []
    real_build = reproduce.build
    monkeypatch.setattr(reproduce, "build", lambda spec: built.append(spec.type) or real_build(spec))
    monkeypatch.setattr(reproduce, "VERDICT_BATCH", 3)  # 7 sessions: two full batches and a partial one
    seen = []
    rep = reproduce.reproduce_store(store, Selection(all=True), on_session=seen.append)
    assert sorted(built) == ["contains", "regex", "session:tool-used"]
    assert rep.counts["REPRODUCED"] == 21 and rep.sessions == 7 and len(seen) == 7
    written = store.verdicts(grading_id=rep.grading_id)
    assert len(written) == 21 and len({v["session_id"] for v in written}) == 7
    # the pass's verdicts are the fresh ones: half the sessions used Read, half did not
    tool_used = [v for v in written if v["type"] == "session:tool-used"]
    assert sum(v["status"] == "PASS" for v in tool_used) == 3


@pytest.mark.parametrize("text", ["a\tb\tc", "bell\x07 back\x08 cr\r", "two\nli\tnes", "  spaced  ", "[bold]not markup[/]", ":smile:", "wide 中文", "x" * 300, ""])
def test_plain_lines_print_what_the_plain_console_printed(text, capsys):
    rich_out = io.StringIO()
    plain = console(True)
    plain.file = rich_out
    plain.print(Text(text, style="bold red"), soft_wrap=True)
    PlainLines().say(text)
    assert capsys.readouterr().out == rich_out.getvalue()


TABLES = [
    ([("scenario", "left"), ("sessions", "right"), ("pass", "right"), ("fail", "right"), ("error", "right")], [["fixes-the-bug", "12", "10", "2", "0"], ["b", "1", "1", "0", "12345678"]]),
    ([("a", "left"), ("b", "left")], [["x", "y"], ["xxxx", ""]]),  # the last column is padded too: rich keeps trailing spaces
    ([("name", "right"), ("n", "left")], [["[bold]not markup[/]", ":smile:"]]),
    ([("only", "left")], []),
]


@pytest.mark.parametrize(("columns", "rows"), TABLES)
def test_a_plain_table_is_what_rich_printed(columns, rows, capsys):
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name, how in columns:
        table.add_column(name, justify=how)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    rich_out = io.StringIO()
    plain = console(True)
    plain.file = rich_out
    plain.print(table)
    drawn = plain_table(columns, rows)
    assert drawn is not None
    for line in drawn:
        PlainLines().say(line)
    assert capsys.readouterr().out == rich_out.getvalue()


@pytest.mark.parametrize("cell", ["wide 中文", "tab\there", "x" * 199])
def test_a_plain_table_leaves_to_rich_what_it_cannot_lay_out_as_rich_does(cell):
    """Wide characters (rich measures cells, not characters), control characters, and a table
    wider than the plain console (rich shrinks and wraps it)."""
    assert plain_table([("a", "left"), ("b", "right")], [[cell, "1"]]) is None
