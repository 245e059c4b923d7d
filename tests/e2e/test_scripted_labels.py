"""A session whose model was a script is labelled so everywhere a user reads it: `sessions`,
`show` (text and JSON), `compare` (which says at its top that it measured the pipeline) and
the viewer's pages. Runs the real mock agent (scripted and no-op) through `benchtape run`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import CALC, MOCK_BENCH, MOCK_EVALUATION, write


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scripted") / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", MOCK_BENCH)
    write(root / ".benchtape" / "evaluations" / "base.yaml", MOCK_EVALUATION.replace("attempts: 2", "attempts: 1"))
    done = bt(root, "run", "base", "--yes")
    assert done.returncode == 0, done.stderr
    return root


def bt(root: Path, *args: str):
    return benchtape(*args, cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg"), "COLUMNS": "250"}, timeout=300)


def test_sessions_and_show_name_the_script(project):
    listed = bt(project, "sessions")
    assert listed.returncode == 0, listed.stderr
    assert "[scripted]" in listed.stdout and "[control: no-op]" in listed.stdout
    rows = orjson.loads(bt(project, "sessions", "--json").stdout)
    kinds = {r["model"]: r["agent_kind"] for r in (rows["sessions"] if isinstance(rows, dict) else rows)}
    assert kinds == {"mock": "scripted", "mock-noop": "no-op"}
    shown = bt(project, "show", "latest")
    assert "this session measured the pipeline, not an agent" in shown.stdout
    doc = orjson.loads(bt(project, "show", "latest", "--json").stdout)
    assert doc["session"]["agent_kind"] in ("scripted", "no-op")


def test_compare_says_it_measured_the_pipeline_and_keeps_controls_apart(project):
    text = bt(project, "compare", "base", "--plain")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("MEASURED THE PIPELINE")
    assert "controls (they check the tasks; never ranked):" in text.stdout
    doc = orjson.loads(bt(project, "compare", "base", "--json").stdout)
    assert doc["measured"] == "pipeline" and [r["kind"] for r in doc["ranked"]] == ["scripted"] and [r["kind"] for r in doc["controls"]] == ["no-op"]
    html = bt(project, "compare", "base", "--html", str(project / "c.html"))
    assert html.returncode == 0, html.stderr
    page = (project / "c.html").read_text()
    assert "measured the pipeline, not agents" in page and "Controls (they check the tasks; never ranked)" in page


def test_the_viewer_tags_scripts_and_shows_the_evaluation_as_compare_does(project):
    import urllib.request

    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    def get(base: str, path: str) -> str:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            return r.read().decode()

    with running(Viewer(project / ".benchtape" / "benchtape.db", project)) as base:
        listed = get(base, "/")
        assert '<span class="tag">scripted</span>' in listed and '<span class="tag">control: no-op</span>' in listed
        page = get(base, "/evaluation/base")
        assert '<p class="headline">this comparison measured the pipeline, not agents' in page
        assert "Controls (they check the tasks; never ranked)" in page and "[scripted]" in page


def test_a_bench_run_report_names_the_script(project):
    report = project / "report.json"
    done = bt(project, "run", "madbench.yaml", "--scenario", "explain", "--report-json", str(report))
    assert done.returncode == 0, done.stderr
    rows = orjson.loads(report.read_bytes())["results"]
    assert rows and all(r["agent_kind"] == "scripted" for r in rows)
