"""`benchtape view` in a real browser (headless Chromium from Debian, driven by Playwright):
the index, a session with its subagent and diff, keyboard navigation, a run watched live as
another process records it, an evaluation's matrix and side by side, a grading diff, search.
Each test leaves a screenshot of the page it checked in the `shots` folder."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest
import scenes
from scenes import serving

pytestmark = pytest.mark.xdist_group("viewer")  # one browser, the stores built once


def expect(locator):
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def test_index_follow_a_session_expand_its_subagent_open_its_diff(page, rich, shots):
    with serving(rich) as base:
        page.goto(base + "/")
        expect(page.locator("#live")).to_have_text("live")  # the event stream is open
        rows = page.locator("#sessions tbody tr")
        expect(rows).to_have_count(4)
        expect(page.locator("#runs tbody tr")).to_have_count(2)
        page.screenshot(path=shots / "index.png", full_page=True)

        page.locator("#sessions tr", has_text="delegates").locator("a").first.click()
        expect(page).to_have_url(re.compile(r"/session/"))
        expect(page.locator("section.session h2")).to_contain_text("delegates")
        expect(page.locator("table.verdicts")).to_contain_text("exec: python3")

        nested = page.locator("details.subagent tr", has_text="Grep")
        expect(nested).to_be_hidden()  # collapsed until asked
        page.locator("details.subagent > summary").click()
        expect(nested).to_be_visible()
        expect(page.locator("details.subagent")).to_contain_text("add() subtracts")  # the subagent's answer
        page.screenshot(path=shots / "session.png", full_page=True)

        page.get_by_role("link", name="changes as a patch").click()
        expect(page).to_have_url(re.compile(r"/changes/"))
        removed, added = page.locator("pre.diff span.del"), page.locator("pre.diff span.add")
        expect(removed).to_have_text(["-    return a - b"])
        expect(added).to_have_text(["+    return a + b"])
        page.wait_for_load_state("load")  # the text can be there before /static/view.css is applied (a CI run read both black)
        assert added.evaluate("e => getComputedStyle(e).color") != removed.evaluate("e => getComputedStyle(e).color")
        page.screenshot(path=shots / "changes.png", full_page=True)


def test_j_and_k_move_between_calls_opening_the_subagent_a_call_is_in(page, rich):
    with serving(rich) as base:
        page.goto(base + "/session/latest")
        calls = page.locator("[data-call]")
        count = calls.count()
        assert count >= 5  # the spawn, the subagent's Read and Grep, Edit, WebFetch, Bash
        expect(page.locator("details.subagent")).not_to_have_attribute("open", "")
        page.keyboard.press("j")
        page.keyboard.press("j")
        current = page.locator(".current")
        expect(current).to_have_count(1)
        expect(current).to_contain_text("Read")  # the subagent's first call: its details were opened
        assert page.locator("details.subagent").evaluate("d => d.open")
        for _ in range(count + 2):
            page.keyboard.press("j")
        expect(current).to_contain_text("python3 -c")  # the last call, and no further
        page.keyboard.press("k")
        expect(current).to_contain_text("WebFetch")


def test_a_run_in_progress_appears_live(page, tmp_path, shots):
    from benchtape.store.database import Store

    project = scenes.Project(tmp_path)
    Store(project.db).close()  # an empty store, as a first `benchtape view` finds it
    bench = scenes.slow_bench(tmp_path, scenarios=3, sleep=3.0)
    with serving(project) as base:
        page.goto(base + "/")
        expect(page.locator("#live")).to_have_text("live")
        expect(page.locator("#runs")).to_contain_text("no runs recorded yet")
        run = scenes.popen("run", bench, "--db", project.db, "--concurrency", "1", "--plain", cwd=tmp_path)
        try:
            first = page.locator("#sessions tr", has_text="slow-1")
            expect(first).to_be_visible(timeout=15000)  # the run's first session, while it runs
            expect(page.locator("#runs tbody tr")).to_contain_text("running")
            expect(first.locator(".badge")).to_have_text("incomplete")
            expect(first.locator(".badge")).to_have_text("pass", timeout=10000)  # and then finished, graded
            second = page.locator("#sessions tr", has_text="slow-2")
            expect(second.locator(".badge")).to_have_text("incomplete", timeout=10000)
            page.screenshot(path=shots / "live-index.png", full_page=True)

            second.locator("a").first.click()  # a session still being recorded: its page is live too
            expect(page.locator("section.session h2 .badge")).to_have_text("incomplete")
            expect(page.locator("#live")).to_have_text("live")
            expect(page.locator("section.session h2 .badge")).to_have_text("pass", timeout=10000)
            expect(page.locator("pre.output")).to_have_text("done 2")
            expect(page.locator("#live")).to_have_text("finished")  # a finished session changes no more
            page.go_back()
            expect(page.locator("#runs tbody tr").first).to_contain_text("3/3", timeout=15000)
            assert run.wait(timeout=30) == 0, run.stderr.read() if run.stderr else ""
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        with sqlite3.connect(project.db) as db:
            assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 3


def test_an_evaluation_matrix_links_each_cell_and_sets_two_setups_side_by_side(page, evaluated, shots):
    with serving(evaluated) as base:
        page.goto(base + "/evaluations")
        page.get_by_role("link", name="base").click()
        matrix = page.locator("table.matrix")
        expect(matrix.locator("td.task")).to_have_text(["fix-add", "fix-sub", "explain"])
        expect(matrix.locator("tr").first).to_contain_text("scripted")
        expect(matrix.locator("tr").first).to_contain_text("noop")
        expect(matrix.locator("td:not(.task) a")).to_have_count(12)  # 3 tasks × 2 setups × 2 attempts, each a link
        expect(page.locator("table.compare").first).to_contain_text("ci95")  # the ranking with its intervals
        # and what it shows, in words: the no-op is the tasks' control, never a contender (issue 46), and a
        # comparison of scripts says at its top that it measured the pipeline
        expect(page.locator("ul.controls")).to_contain_text("noop")
        expect(page.locator("p.headline")).not_to_be_empty()
        expect(page.locator("#live")).to_have_text("live")  # it follows the cells an evaluation run measures
        page.screenshot(path=shots / "evaluation.png", full_page=True)

        cell = matrix.locator("tr", has_text="fix-add").locator("a:has(span.pass)").first
        cell.click()
        expect(page).to_have_url(re.compile(r"/session/"))
        expect(page.locator("section.session h2")).to_contain_text("fix-add")
        page.go_back()

        matrix.get_by_role("link", name="fix-sub").click()
        sides = page.locator("div.side")
        expect(sides).to_have_count(2)
        expect(sides.nth(0).locator("h2").first).to_contain_text("scripted")
        expect(sides.nth(1).locator("h2").first).to_contain_text("noop")
        expect(sides.nth(0).locator("section.session")).to_have_count(2)  # both attempts
        page.screenshot(path=shots / "side-by-side.png", full_page=True)


def test_two_gradings_diffed_verdict_by_verdict_with_flips_marked(page, evaluated, shots):
    with serving(evaluated) as base:
        page.goto(base + "/gradings")
        expect(page.locator("table.gradings tr")).to_have_count(3)  # the run's live grading, the regrade
        page.get_by_role("button", name="diff A → B").click()
        expect(page).to_have_url(re.compile(r"/gradings/diff\?(?=.*\ba=\w+)(?=.*\bb=\w+)"))
        flips = page.locator("tr.change.flip")
        expect(flips).to_have_count(2)  # explain under the no-op setup (it says the prompt back): both attempts
        expect(flips.first).to_contain_text("PASS→FAIL")
        expect(flips.first.locator("td").first).to_have_css("color", "rgb(207, 34, 46)")  # retried: a read before the stylesheet applied gave rgb(0, 0, 0) once, in CI
        expect(page.locator("tr.moved")).to_contain_text("explain")
        expect(page.locator("ul.changed")).to_contain_text('"value":"subtracts"')
        page.screenshot(path=shots / "grading-diff.png", full_page=True)


def test_search_finds_a_tool_output_and_links_to_its_row(page, rich, shots):
    with serving(rich) as base:
        page.goto(base + "/")
        box = page.locator("form.search input")
        page.keyboard.press("/")
        expect(box).to_be_focused()
        box.fill("add() subtracts")
        box.press("Enter")
        found = page.locator("ol.found > li")
        expect(found).to_have_count(1)
        expect(found.locator("mark").first).to_have_text("add() subtracts")
        page.screenshot(path=shots / "search.png", full_page=True)
        found.locator("ul.hits a").first.click()
        expect(page).to_have_url(re.compile(r"/session/.+#a-\d+$"))
        expect(page.locator(":target")).to_be_visible()


def test_agent_output_is_shown_as_text_never_run(page, rich):
    """A `<script>` and an `<img onerror>` planted in a prompt and a tool's result are shown as
    text on every page they reach; none runs, none becomes an element."""
    with serving(rich) as base:
        for path in ("/session/latest", "/", "/search?q=" + "%3Cscript", "/raw/latest", "/session/latest?format=json"):
            page.goto(base + path)
            page.wait_for_load_state("load")
            if "format=json" not in path:
                assert page.locator("script").count() == 1, path  # the viewer's own, nothing planted
                assert page.locator("img").count() == 0, path
            assert page.evaluate("window.__xss") is None, path
        page.goto(base + "/session/latest")
        expect(page.locator("tr.k-message-user").first).to_contain_text(scenes.HOSTILE)  # the prompt
        expect(page.locator("tr", has_text="WebFetch").locator("div.result")).to_contain_text(scenes.HOSTILE_IMG)
        time.sleep(0.2)  # a late onerror or timer would have fired by now
        assert page.evaluate("window.__xss") is None
