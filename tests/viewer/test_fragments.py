"""The read side's fragments the viewer (and the static report) draw with: a patch's lines
classed hunk by hunk, the timeline's tree (a call with its result, subagents nested), a long
timeline a page at a time."""

from __future__ import annotations

from benchtape.core.model import Action, project
from benchtape.replay.changes import line_classes
from benchtape.replay.html import Window, timeline
from benchtape.replay.timeline import tree


def test_a_removed_line_that_reads_like_a_file_header_is_a_removal():
    patch = [
        "diff --git a/q.sql b/q.sql",
        "--- a/q.sql",
        "+++ b/q.sql",
        "@@ -1,3 +1,3 @@",
        " SELECT 1;",
        "--- old comment",
        "+++ new comment",
        " SELECT 2;",
        "\\ No newline at end of file",
        "diff --git a/b.py b/b.py",
        "--- a/b.py",
    ]
    assert [c for c, _ in line_classes(patch)] == ["hd", "hd", "hd", "hunk", "", "del", "add", "", "meta", "hd", "hd"]


def _session():
    return project(
        [
            Action("session.started", {"scenario": "s", "prompt": "p"}, seq=1),
            Action("tool.call", {"call_id": "t1", "tool": "Task", "input": {"prompt": "look"}}, seq=2),
            Action("subagent.spawned", {"thread": "sub-1", "call_id": "t1", "agent": "Explore", "prompt": "look"}, seq=3),
            Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {"file_path": "a.py"}}, thread="sub-1", seq=4),
            Action("message.assistant", {"text": "still the parent"}, seq=5),  # interleaved with the subagent
            Action("tool.result", {"call_id": "c1", "output": "1 x = 1", "is_error": False}, thread="sub-1", seq=6),
            Action("tool.result", {"call_id": "t1", "output": "found it", "is_error": False}, seq=7),
            Action("tool.call", {"call_id": "c2", "tool": "Grep", "input": {"pattern": "x"}}, thread="ghost", seq=8),  # a thread never spawned
            Action("session.finished", {"status": "ok"}, seq=9),
        ]
    )


def test_the_tree_pairs_each_call_with_its_result_and_nests_each_subagent():
    nodes = tree(_session())
    assert [(n.step.seq, n.step.kind) for n in nodes] == [(1, "session.started"), (2, "tool.call"), (3, "subagent.spawned"), (5, "message.assistant"), (9, "session.finished"), (None, "subagent")]
    task, spawn = nodes[1], nodes[2]
    assert task.result is not None and task.result.seq == 7  # the Task call gets the subagent's answer
    assert spawn.sub_thread == "sub-1" and spawn.agent == "Explore"
    [read] = spawn.children
    assert (read.step.tool, read.result.seq if read.result else None) == ("Read", 6)
    assert [c.step.tool for c in nodes[-1].children or []] == ["Grep"]  # the orphan thread, kept
    counted = sum(n.actions for n in nodes)
    assert counted == 9  # nothing left out


def test_a_long_timeline_is_shown_a_page_of_rows_at_a_time():
    page = timeline(_session(), anchored=True, window=Window(2, 2, lambda first: f"/s?rows={first + 1}"))
    assert "rows 3–4 of 6" in page and 'href="/s?rows=1"' in page and 'href="/s?rows=5"' in page
    assert 'id="a-3"' in page and 'id="a-1"' not in page and 'id="a-9"' not in page
    assert 'id="a-1"' in timeline(_session(), anchored=True)  # one page: no pager
