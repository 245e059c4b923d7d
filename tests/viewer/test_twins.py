"""Every page's JSON twin (`?format=json`) is what the CLI's `--json` prints for the same thing:
the viewer calls the functions the commands call, so the two can never drift apart."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from urllib.parse import quote

import orjson
import pytest
from scenes import serving
from typer.testing import CliRunner

from benchtape.cli import build

pytestmark = pytest.mark.xdist_group("viewer")
APP = build()


def cli_json(project, monkeypatch, *args: str):
    """`benchtape ARGS --json` in this process, from the project folder, as a user runs it there."""
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project.root / "xdg"))
    out = CliRunner().invoke(APP, [*args, "--json", "--db", str(project.db)], env={"NO_COLOR": "1"}, catch_exceptions=False)
    assert out.exit_code == 0, out.stderr
    return orjson.loads(out.stdout)


def get(base: str, path: str) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            assert r.headers["content-type"] == "application/json"
            return r.status, orjson.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, orjson.loads(exc.read())


def twin(base: str, path: str):
    status, value = get(base, path + ("&" if "?" in path else "?") + "format=json")
    assert status == 200, value
    return value


def test_the_session_list_and_a_run_are_sessions_json(rich, monkeypatch):
    with serving(rich) as base:
        listed = twin(base, "/")
        assert listed == cli_json(rich, monkeypatch, "sessions") and len(listed) == 4
        assert twin(base, "/?limit=2") == cli_json(rich, monkeypatch, "sessions", "--limit", "2")
        assert twin(base, "/?scenario=wrong-fix") == cli_json(rich, monkeypatch, "sessions", "--scenario", "wrong-fix")
        run = listed[-1]["run_handle"]
        assert twin(base, f"/run/{run}") == cli_json(rich, monkeypatch, "sessions", "--run", run)
        # the viewer's own filters: the same lines, fewer of them
        assert {s["scenario"] for s in twin(base, "/?harness=mock&outcome=fail")} == {"wrong-fix", "weakens-the-test"}
        first, last = (time.strftime("%Y-%m-%d", time.localtime(s["started_at"])) for s in (listed[-1], listed[0]))
        assert twin(base, f"/?since={first}&until={last}") == listed and twin(base, "/?until=2000-01-01") == []
        assert [s["scenario"] for s in twin(base, "/?bench=" + quote(str(rich.root / "rich.yaml")))] == ["delegates"]
        assert twin(base, f"/?limit=1&before={listed[0]['id']}") == listed[1:2]  # the next page starts below the last shown


def test_a_session_is_show_json_by_any_handle(rich, monkeypatch):
    with serving(rich) as base:
        for line in twin(base, "/"):
            assert twin(base, "/session/" + quote(line["handle"], safe="/")) == cli_json(rich, monkeypatch, "show", line["handle"])
        place = f"{line['run_id'][:10]}/{line['scenario']}#1"  # RUN/SCENARIO#N, its # quoted in the URL
        assert twin(base, "/session/" + quote(place, safe="/"))["session"]["id"] == line["id"]
        assert twin(base, "/session/latest") == cli_json(rich, monkeypatch, "show", "latest")
        assert twin(base, "/changes/latest") == cli_json(rich, monkeypatch, "show", "latest", "--diff")


def test_gradings_their_diff_and_an_evaluation_are_the_cli_json(evaluated, monkeypatch):
    with serving(evaluated) as base:
        gradings = twin(base, "/gradings")
        assert gradings == cli_json(evaluated, monkeypatch, "gradings") and len(gradings) == 2
        a, b = gradings[0]["id"], gradings[1]["id"]
        diffed = twin(base, f"/gradings/diff?a={a}&b={b}")
        assert diffed == cli_json(evaluated, monkeypatch, "diff", a, b) and len(diffed["flips"]) == 2
        assert twin(base, f"/gradings/diff?a={a[:10]}&b=latest") == diffed  # handles, as the CLI takes them
        compared = twin(base, "/evaluation/base")
        assert compared == cli_json(evaluated, monkeypatch, "compare", "base") and len(compared["ranked"]) == 1 and len(compared["controls"]) == 1  # the no-op is a control


def test_what_names_nothing_is_a_404_with_the_fix(rich):
    with serving(rich) as base:
        status, body = get(base, "/session/ZZZZ?format=json")
        assert status == 404 and "no session with id 'ZZZZ'" in body["error"] and "benchtape sessions" in body["fix"]
        status, body = get(base, "/gradings/diff?a=ZZZZ&b=latest&format=json")
        assert status == 404 and "no grading" in body["error"]
        status, body = get(base, "/gradings/diff?a=ZZZZ&format=json")  # nothing was looked up: the request lacks a part
        assert status == 400 and "name two gradings" in body["error"] and "b=GRADING_B" in body["fix"]
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(base + "/session/ZZZZ", timeout=30)
        assert page.value.code == 404 and "no session with id" in page.value.read().decode()
