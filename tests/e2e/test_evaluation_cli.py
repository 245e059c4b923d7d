"""`benchtape evaluation create|validate` and `benchtape compare`, run as a user runs them."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import evaluation, make_project

from benchtape.spec.evaluation import load_evaluation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from cellkit import record_all  # noqa: E402


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def user_env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_create_writes_a_template_that_validates_and_never_replaces_it(project, tmp_path):
    env = user_env(tmp_path)
    out = benchtape("evaluation", "create", "baseline", cwd=project, env=env)
    assert out.returncode == 0, out.stderr
    path = project / ".benchtape" / "evaluations" / "baseline.yaml"
    text = path.read_text()
    assert text.startswith("# benchtape evaluation baseline") and "kind: Evaluation" in text
    out = benchtape("evaluation", "validate", "baseline", cwd=project, env=env)
    assert out.returncode == 0, out.stderr
    assert "cells per task: 12 (4 arm(s) × 3 attempt(s))" in out.stdout
    assert "cells: 36 (12 × 3 task(s))" in out.stdout
    assert "claude-code@latest sonnet-4.6/medium" in out.stdout and "codex@latest gpt-5.5/high" in out.stdout
    again = benchtape("evaluation", "create", "baseline", cwd=project, env=env)
    assert again.returncode == 2 and "never replaced" in again.stderr and "Traceback" not in again.stderr
    assert path.read_text() == text
    assert benchtape("evaluation", "create", "../escape", cwd=project, env=env).returncode == 2
    # berbench's folder counts too: a new benchtape file of its name would hide it
    ber = project / ".ber" / "bench" / "evaluations" / "tasks.yaml"
    ber.parent.mkdir(parents=True)
    ber.write_text("apiVersion: bench.ber.run/v1alpha1\nkind: Evaluation\ntools: [{tool: mock, model: scripted}]\n")
    hidden = benchtape("evaluation", "create", "tasks", cwd=project, env=env)
    assert hidden.returncode == 2 and str(ber) in hidden.stderr and not (project / ".benchtape" / "evaluations" / "tasks.yaml").exists()


def test_create_asks_on_a_terminal(project, tmp_path):
    """A real pseudo-terminal: every answer is checked, a typo is asked again."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtape", "evaluation", "create", "asked"],
        cwd=project,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env={**os.environ, **user_env(tmp_path), "NO_COLOR": "1", "COLUMNS": "200"},
    )
    os.close(secondary)
    answers = ["mock,claude-code", "scripted,noop", "low", "sonet-4.6", "sonnet-4.6", "high", "2"]
    seen = b""
    try:
        for answer in answers:
            seen += _read_until(main, b": ")
            os.write(main, answer.encode() + b"\r")
        seen += _read_until(main, b"next:")
    finally:
        proc.wait(timeout=30)
        os.close(main)
    assert proc.returncode == 0, seen.decode(errors="replace")
    assert b"unknown: 'sonet-4.6' (did you mean 'sonnet-4.6'?)" in seen
    ev = load_evaluation("asked", project, user=tmp_path / "xdg" / "benchtape")
    assert [a.label for a in ev.arms] == ["mock@latest scripted/low", "mock@latest noop/low", "claude-code@latest sonnet-4.6/high"]
    assert ev.attempts == 2


def _read_until(fd: int, marker: bytes, timeout: float = 20.0) -> bytes:
    buf = b""
    end = time.monotonic() + timeout
    while marker not in buf and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def test_validate_refuses_bad_input_with_file_line_and_fix(project, tmp_path):
    path = evaluation(project, "typo", "tools:\n  - tool: claude-code\n    model: sonet-5\n")
    out = benchtape("eval", "validate", "typo", cwd=project, env=user_env(tmp_path))
    assert out.returncode == 2
    assert f"{path}:5: unknown model 'sonet-5' for claude-code" in out.stderr and "fix: did you mean 'sonnet-5'?" in out.stderr
    assert "Traceback" not in out.stderr
    missing = benchtape("evaluation", "validate", "nope", cwd=project, env=user_env(tmp_path))
    assert missing.returncode == 2 and "no evaluation named 'nope'" in missing.stderr


def test_a_model_named_by_its_id_is_the_setup_of_its_key(project, tmp_path):
    """`model: scripted-solver` (the id `run DIR --model` takes, and the run's notes name) was
    refused with "did you mean 'scripted'?", the no-op: it is the `solver` setup."""
    evaluation(project, "byid", "tools:\n  - {tool: claude-code, model: [scripted-solver, sonnet-4.6]}\n")
    out = benchtape("evaluation", "validate", "byid", "--json", cwd=project, env=user_env(tmp_path))
    assert out.returncode == 0, out.stderr
    arms = orjson.loads(out.stdout)["arms"]
    assert [a["label"] for a in arms] == ["claude-code@latest solver", "claude-code@latest sonnet-4.6"] and arms[0]["steps"][0]["model_id"] == "scripted-solver", arms
    path = evaluation(project, "twice", "tools:\n  - {tool: claude-code, model: [solver, scripted-solver]}\n")
    twice = benchtape("evaluation", "validate", "twice", cwd=project, env=user_env(tmp_path))
    assert twice.returncode == 2 and f"{path}:4" in twice.stderr and "`model` names 'solver' twice (as 'solver' and 'scripted-solver')" in twice.stderr, twice.stderr


def test_validate_json(project, tmp_path):
    evaluation(project, "wf", "attempts: 3\ntools:\n  - tool: plan-build\n    steps:\n      plan: {model: [opus-5, sonnet-5], effort: [medium, high]}\n      build: {model: sonnet-5, effort: medium}\n  - {tool: claude-code, model: sonnet-5, effort: medium}\n")
    out = benchtape("evaluation", "validate", "wf", "--json", cwd=project, env=user_env(tmp_path))
    assert out.returncode == 0, out.stderr
    doc = orjson.loads(out.stdout)
    assert doc["cells_per_task"] == 15 and doc["cells"] == 45 and len(doc["arms"]) == 5
    assert doc["unpriced_models"] == ["claude-opus-5", "claude-sonnet-5"]


def test_compare_table_json_and_html(project, tmp_path):
    evaluation(project, "e", "attempts: 2\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, opus-4.6], effort: medium}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n")
    ev = load_evaluation("e", project, user=tmp_path / "xdg" / "benchtape")
    from benchtape.store.database import Store

    db = tmp_path / "db.sqlite"
    store = Store(db)
    a, b, c = (arm.label for arm in ev.arms)
    tasks = [t.id for t in ev.tasks()]
    cells = {(a, t, n): "passed" for t in tasks for n in (1, 2)}
    cells.update({(b, t, n): ("passed" if t == "fix-add" else "failed") for t in tasks for n in (1, 2)})
    cells.update({(c, "fix-add", 1): "no_changes"})
    run_id = record_all(store, ev, cells, cost=0.02)
    store.close()
    env = user_env(tmp_path)

    out = benchtape("compare", "e", "--db", db, "--plain", cwd=project, env=env)
    assert out.returncode == 0, out.stderr
    assert "evaluation e: 3 task(s), 2 attempt(s)" in out.stdout
    lines = out.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if a in line)
    assert first < next(i for i, line in enumerate(lines) if b in line)
    assert "not ranked (tasks missing):" in out.stdout and "fill: benchtape run e --task fix-sub --task explain" in out.stdout
    assert "p = " in out.stdout
    header = next(line for line in lines if line.startswith("rank"))
    assert header.split()[3:7] == ["ci95", "se", "pass@1", "pass@2"]  # two attempts: the task-clustered SE, pass@k beside pass@1

    html = tmp_path / "cmp.html"
    out = benchtape("compare", "e", "--db", db, "--json", "--html", html, cwd=project, env=env)
    assert out.returncode == 0, out.stderr
    doc = orjson.loads(out.stdout)
    assert [r["label"] for r in doc["ranked"]] == [a, b] and doc["ranked"][0]["pass_rate"] == 1.0
    assert doc["unranked"][0]["missing"] == ["fix-sub", "explain"]
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page.split("<body>")[1]
    assert a in page and "benchtape run e --task fix-sub --task explain" in page

    by_run = benchtape("compare", run_id[:12], "--db", db, "--json", cwd=project, env=env)
    assert by_run.returncode == 0, by_run.stderr
    assert orjson.loads(by_run.stdout)["title"] == f"runs {run_id}"
    unknown = benchtape("compare", "nope", "--db", db, cwd=project, env=env)
    assert unknown.returncode == 2 and "no evaluation named 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr
