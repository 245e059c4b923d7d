"""Values nobody meant, refused where they are read with file, line and fix (exit 2), never a
traceback, an infrastructure error later, or a figure that reads wrong (issue 44, item 10)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from e2e.cli import benchtape

from benchtape.core.errors import BadInput
from benchtape.spec.harbor_task import load_harbor_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"


def project(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    folder = shutil.copytree(FIXTURES / "hello-file", repo / ".benchtape" / "tasks" / "hostile")
    return repo, folder


NESTED = "x = " + "[" * 3000 + "]" * 3000 + "\n"


@pytest.mark.parametrize(
    "case, toml, said, line",
    [
        ("nested 3000 deep", "[metadata]\n" + NESTED, "nests arrays or inline tables 3000 levels deep", 2),
        ("nested tables", "[metadata]\ny = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "levels deep", 2),
        ("not UTF-8", None, "is not UTF-8 text", 3),
        ("timeout inf", "[verifier]\ntimeout_sec = inf\n", "must be a positive number of seconds, at most 604800", 2),
        ("timeout nan", "[verifier]\ntimeout_sec = nan\n", "must be a positive number of seconds", 2),
        ("timeout 1e308", "[verifier]\ntimeout_sec = 1e308\n", "must be a positive number of seconds", 2),
        ("agent timeout inf", "[agent]\ntimeout_sec = inf\n", "`agent.timeout_sec` must be a positive number of seconds", 2),
        ("build timeout nan", "[environment]\nbuild_timeout_sec = nan\n", "`environment.build_timeout_sec` must be", 2),
        ("cpus inf", "[environment]\ncpus = inf\n", "`environment.cpus` must be a positive number", 2),
        ("network_mode a list", "[verifier]\nnetwork_mode = []\n", "`verifier.network_mode = []` is not supported", 2),  # found by `make fuzz`
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 and "\n" not in v else "",
)
def test_a_hostile_task_toml_is_refused_at_load_with_file_line_and_exit_2(tmp_path: Path, case: str, toml: str | None, said: str, line: int):
    repo, folder = project(tmp_path)
    path = folder / "task.toml"
    if toml is None:
        path.write_bytes(b'version = "1.0"\n[metadata]\nauthor_name = "caf\xe9 latin-1"\n')
    else:
        path.write_text('version = "1.0"\n' + toml)
    with pytest.raises(BadInput) as raised:
        load_harbor_task(folder)
    assert said in str(raised.value) and raised.value.file == str(path) and raised.value.line == line + (0 if toml is None else 1), (str(raised.value), raised.value.line)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = benchtape("task", "validate", "hostile", "--sandbox", "home", cwd=repo, timeout=120, env={"TMPDIR": str(tmp)})
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and f"{path}:{raised.value.line}" in done.stderr and said in done.stderr, done.stderr[-2000:]
    assert list(tmp.iterdir()) == []  # nothing half-made left behind


def test_deep_brackets_inside_strings_and_comments_are_text(tmp_path: Path):
    _, folder = project(tmp_path)
    path = folder / "task.toml"
    deep = "[" * 200
    path.write_text(path.read_text().replace("[metadata]\n", f'[metadata]\n# {deep}\nnote = "{deep}"\nlong = """\n{deep}\n"""\nraw = \'{deep}\'\n'))
    assert load_harbor_task(folder).id == "hostile"


MINIMAL_ATIF = """{
  "schema_version": "ATIF-v1.7",
  "session_id": "trial-1",
  "agent": {"name": "terminus-2", "version": "1.0"},
  "steps": [
    {"step_id": 1, "source": "user", "message": "hello"},
    {"step_id": 2, "source": "agent", "message": "hi"%s}
  ]
}
"""


def test_an_atif_document_with_a_duplicate_key_is_refused_before_anything_is_written(tmp_path: Path):
    db = tmp_path / "i.db"
    good = tmp_path / "good.json"
    good.write_text(MINIMAL_ATIF % "")
    done = benchtape("import", "atif", good, "--db", db)
    assert done.returncode == 0, done.stderr
    dup = tmp_path / "dup.json"
    dup.write_text(MINIMAL_ATIF % ', "message": "a different answer"')
    done = benchtape("import", "atif", dup, "--db", db)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{dup}" in done.stderr and "line 7" in done.stderr and "'message' appears twice" in done.stderr, done.stderr
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


def test_a_key_in_two_different_objects_is_no_duplicate():
    from benchtape.core.jsonkeys import duplicate_key

    assert duplicate_key(MINIMAL_ATIF % "") is None
    assert duplicate_key('{"a": {"b": 1}, "c": {"b": 2}, "d": [{"b": 1}, {"b": 2}], "e": "\\"a\\": 1"}') is None
    assert duplicate_key('{"a": 1, "\\u0061": 2}') == ("a", 1)  # the same key however it is escaped


@pytest.mark.parametrize(
    "passes, n, shown",
    [(0, 10000, "0%–0.04%"), (10000, 10000, "99.96%–100%"), (5, 10, "24%–76%"), (0, 10, "0%–28%"), (9999, 10000, "99.9%–99.998%")],
)
def test_a_wilson_interval_never_reads_as_a_point_it_is_not(passes: int, n: int, shown: str):
    from benchtape.replay.compare import SetupRow, display
    from benchtape.replay.stats import wilson

    row = SetupRow(arm="a", label="a", cells=n, passes=passes, pass_rate=passes / n, ci=wilson(passes, n))
    assert display(row, 1)["ci95"] == shown
    assert display(row, 1)["pass"].startswith(f"{passes}/{n} (")
    if passes not in (0, n):
        assert display(row, 1)["pass"] not in (f"{passes}/{n} (0%)", f"{passes}/{n} (100%)")


@pytest.mark.parametrize("timeout", ['"1e308s"', '"999999h"', ".inf", '"nan s"'])
def test_a_mined_tasks_absurd_verify_timeout_is_refused_at_its_line(tmp_path: Path, timeout: str):
    from benchtape.spec.task import TaskSource, Verify, load_task, render_task

    folder = tmp_path / "tasks" / "17"
    folder.mkdir(parents=True)
    text = render_task(TaskSource(remote=None, pull_request=None, base_commit="a" * 40, fix_commit=None), Verify(command="pytest -q"))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("command:"))
    lines.insert(at + 1, lines[at][: len(lines[at]) - len(lines[at].lstrip())] + f"timeout: {timeout}")
    (folder / "task.yaml").write_text("\n".join(lines) + "\n")
    (folder / "prompt.md").write_text("fix it\n")
    for name in ("tests.patch", "reference.patch"):
        (folder / name).write_text("")
    with pytest.raises(BadInput) as raised:
        load_task(folder)
    assert raised.value.line == at + 2 and "timeout" in str(raised.value) and "tests.patch" not in str(raised.value), str(raised.value)


@pytest.mark.parametrize("timeout", ['"99999h"', '"169h"', '"20000m"'])
def test_a_benchs_duration_past_a_week_is_refused_at_its_line_as_a_tasks_is(tmp_path: Path, timeout: str):
    """`timeout: 99999h` loaded (shown as 3.59996e+08s), where a task's verify.timeout past a
    week was refused: every duration a bench or task gives goes through one reader with one bound."""
    from benchtape.spec.bench import load_bench

    bench = tmp_path / "bench.yaml"
    bench.write_text(f"harness: mock\nscenarios:\n  - name: s\n    prompt: p\n    timeout: {timeout}\n")
    with pytest.raises(BadInput) as raised:
        load_bench(bench)
    assert raised.value.line == 5 and "is more than a week" in raised.value.what
    bench.write_text("harness: mock\nscenarios:\n  - name: s\n    prompt: p\n    timeout: 167h\n")
    assert load_bench(bench).scenarios[0].timeout == 167 * 3600
