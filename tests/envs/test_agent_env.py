"""A history task's agent gets the project environment its verifier runs in (envs/agent_env.py):
a real repository whose package imports a dependency from PyPI (more-itertools) and reads the
version file its build generates (hatch-vcs's `_version.py`), one squash merge (#3) fixing a
bug with a test, the task made from it and validated (uv, PyPI), then cells recorded through the
real `benchtape run` at level home by a command-line agent (a shell script) that imports the
dependency and the package, fixes the bug, runs the tests and tries to write into the venv.

With the environment the agent's imports and tests work and the cell passes; the candidate
patch holds only the fix (nothing of the venv, the version file in the workspace's one base
commit); the cache is read-only for it. With `project_environment: false` the same agent
cannot import the dependency. An agent that changed the venv (where the host gives no
read-only bind) gets it discarded, and the next use builds it anew."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "taskrun"))
from e2e.cli import benchtape  # noqa: E402
from repokit import git, init_repo, write_files
from taskrunkit import sessions, tree  # noqa: E402

from benchtape.replay.changes import workspace_changes  # noqa: E402
from benchtape.spec.project import load_project  # noqa: E402
from benchtape.store.database import Store  # noqa: E402
from benchtape.tasks.create import create_task  # noqa: E402
from benchtape.tasks.validate import validate  # noqa: E402

PYPROJECT = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "tally"
dynamic = ["version"]
dependencies = ["more-itertools>=10"]

[project.optional-dependencies]
tests = ["pytest"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "src/tally/_version.py"
"""
HEAD = 'from more_itertools import chunked\n\nfrom ._version import __version__\n\n\ndef pairs(xs):\n    return [list(c) for c in chunked(xs, 2)]\n\n\n'
BUGGY = HEAD + "def total(xs):\n    return sum(float(x) for x in xs)\n"
FIXED = HEAD + 'def total(xs):\n    return sum(float(x) for x in xs if str(x).replace(".", "", 1).isdigit())\n'
TEST_BASE = "from tally import pairs, total\n\n\ndef test_sums_numbers():\n    assert total([1, 2, '3']) == 6\n\n\ndef test_pairs():\n    assert pairs([1, 2, 3]) == [[1, 2], [3]]\n"
TEST_FIX = TEST_BASE + "\n\ndef test_skips_words():\n    assert total([1, 'x']) == 1\n"
# the agent: imports what the project needs, makes the fix, runs the tests, tries the venv
AGENT = """\
set -e
python3 -c 'import more_itertools, tally; print("imported tally", tally.__version__, "from", tally.__file__)'
python3 - <<'EOF'
import pathlib
p = pathlib.Path("src/tally/__init__.py")
p.write_text(p.read_text().replace("for x in xs)", "for x in xs if str(x).replace('.', '', 1).isdigit())"))
EOF
python3 -m pytest -q tests
git status --porcelain --untracked-files=all | sed 's/^/status: /'
if (echo x > "$VIRTUAL_ENV/injected.txt") 2>/dev/null; then echo "VENV WRITABLE"; else echo "VENV READ-ONLY"; fi
if (echo x > "$(dirname "$(dirname "$VIRTUAL_ENV")")/other-project/venv/injected.txt") 2>/dev/null; then echo "OTHER ENTRY WRITABLE"; else echo "OTHER ENTRY READ-ONLY"; fi
"""
TOOL = {"apiVersion": "benchtape/v1alpha1", "kind": "Tool", "tool": "fixer", "extends": "command", "options": {"run": {"default": "default", "values": {"default": {"args": ["sh", "-c", AGENT]}}}}}
EVALUATION = "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: [3]\n{extra}tools:\n  - tool: fixer\n    model: default\n"


@pytest.fixture(scope="module")
def tally(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The repository, its task #3 validated at level home (one environment cache for the
    module), the fixer tool and two evaluations: with the environment (the default) and without."""
    top = tmp_path_factory.mktemp("agent-env")
    root = top / "tally"
    root.mkdir()
    init_repo(root)
    write_files(root, {"pyproject.toml": PYPROJECT, "src/tally/__init__.py": BUGGY, "tests/test_total.py": TEST_BASE, ".gitignore": "src/tally/_version.py\n__pycache__/\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tally: sum a list")
    git(root, "tag", "v1.0.0")
    write_files(root, {"src/tally/__init__.py": FIXED, "tests/test_total.py": TEST_FIX})
    git(root, "commit", "-qam", "Skip words when totalling (#3)\n\ntotal() failed on a word in the list; it now sums the numbers only.")
    cache = top / "env-cache"
    (cache / "other-project" / "venv").mkdir(parents=True)  # another project's entry: no agent may write there either
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHTAPE_ENV_CACHE", str(cache))
    mp.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    mp.setattr("benchtape.tasks.validate.suite_command", lambda *args: None)
    project = load_project(root)
    task_id = create_task(project, "3").id
    store = Store(root / ".benchtape" / "validate.db")
    [report] = validate(project, [task_id], store=store, level="home", logs=root / ".benchtape" / "validate").tasks
    store.close()
    assert report.validated, report.to_dict()
    write_files(root, {".benchtape/tools/fixer.yaml": json.dumps(TOOL), ".benchtape/evaluations/given.yaml": EVALUATION.format(extra=""), ".benchtape/evaluations/withheld.yaml": EVALUATION.format(extra="project_environment: false\n")})
    yield {"root": root, "cache": cache, "env": report.environment, "db": root / ".benchtape" / "benchtape.db"}
    mp.undo()


def _run(tally: dict[str, Any], name: str) -> dict[str, Any]:
    done = benchtape("run", name, "--yes", "--json", cwd=tally["root"], env={"BENCHTAPE_ENV_CACHE": str(tally["cache"])}, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a cell did not pass
    ran = json.loads(done.stdout)
    [found] = sessions(tally["db"], ran["run_id"])
    store = Store(tally["db"], readonly=True)
    try:
        session = store.load_session(found["row"].id)
        expected = next(a.data for a in store.actions(found["row"].id) if a.kind == "environment.expected")
        changes = workspace_changes(store, session)
    finally:
        store.close()
    return {"ran": ran, "session": session, "found": found, "expected": expected["project_environment"], "changes": changes}


def test_the_agent_runs_the_projects_code_and_tests_in_the_environment_its_verdict_is_computed_in(tally: dict[str, Any]):
    got = _run(tally, "given")
    assert got["ran"]["outcomes"] == {"fixer@latest default": {"passed": 1}}, got["ran"]
    said = got["session"].final_output or ""
    assert "imported tally 1.0.0 from" in said and "/work/src/tally/__init__.py" in said, said  # the workspace's own code, its version file there
    assert "2 passed" in said, said  # the visible tests (the hidden one is the verifier's)
    assert [line for line in said.splitlines() if line.startswith("status: ")] == ["status:  M src/tally/__init__.py"], said  # the workspace's git: the fix alone
    # recorded: what the agent could run, and where it came from
    record, folder = got["expected"], Path(tally["env"]["folder"])
    assert record["given"] is True and record["language"] == "python" and record["manager"] == "uv"
    assert record["key"] == folder.name and record["folder"] == str(folder) and record["venv"] == str(folder / "venv")
    assert record["workspace_files"] == ["src/tally/_version.py"] and {"PATH", "PYTHONPATH", "VIRTUAL_ENV"} <= set(record["variables"])
    # the version file is in the workspace's one base commit; the candidate is the fix alone
    assert "src/tally/_version.py" in tree(tally["db"], got["found"]["baseline"])
    changes = got["changes"]
    assert changes.modified == ["src/tally/__init__.py"] and changes.added == [] and changes.removed == [], changes.to_dict()
    assert "_version" not in changes.patch and str(folder) not in changes.patch
    # the cache is the verifier's: the agent could not write into it
    from benchtape.sandbox.pidfence import fence

    assert not (folder / "venv" / "injected.txt").exists()
    if fence().read_only_works:
        assert "VENV READ-ONLY" in said and record["read_only"] == "bound read-only in the agent's own mount namespace"
        # nor into another project's entry: its verdicts are not this cell's to change
        assert "OTHER ENTRY READ-ONLY" in said and not (tally["cache"] / "other-project" / "venv" / "injected.txt").exists(), said


def test_the_real_codex_runs_the_tests_in_the_environment_too(tally: dict[str, Any]):
    """Codex runs each command in a shell of its own choosing: a login shell (`bash -lc`), whose
    /etc/profile set PATH anew, so `python3 -m pytest` found no pytest in Codex's shell alone
    (Claude's and Gemini's found it). The real Codex, the solver playing the task's fix."""
    from realagents import TOOLS, need

    need("codex")
    (tally["root"] / ".benchtape" / "evaluations" / "codex.yaml").write_text(
        "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: [3]\ntools:\n  - tool: codex\n    tool_version: \"0.169.0\"\n    model: solver\n"
    )
    done = benchtape("run", "codex", "--yes", "--json", cwd=tally["root"], env={"BENCHTAPE_ENV_CACHE": str(tally["cache"]), "BENCHTAPE_TOOLS": str(TOOLS)}, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    [found] = sessions(tally["db"], json.loads(done.stdout)["run_id"])
    store = Store(tally["db"], readonly=True)
    try:
        calls = store.load_session(found["row"].id).calls
    finally:
        store.close()
    ran = [c for c in calls if "pytest" in json.dumps(c.input)]
    assert ran, [c.input for c in calls]
    assert all("No module named pytest" not in (c.output or "") and "passed" in (c.output or "") for c in ran), [(c.input, c.output) for c in ran]


def test_opted_out_the_same_agent_cannot_import_the_dependency(tally: dict[str, Any]):
    got = _run(tally, "withheld")
    assert got["ran"]["outcomes"] == {"fixer@latest default": {"adapter_error": 1}}, got["ran"]
    said = (got["session"].final_output or "") + json.dumps([a.data for a in got["session"].actions if a.kind == "error"])
    assert "No module named 'more_itertools'" in said, said
    assert got["expected"]["given"] is False and "`project_environment: false`" in got["expected"]["why"]
    assert "src/tally/_version.py" not in tree(tally["db"], got["found"]["baseline"])  # the tree at its base commit, as before


def test_a_bad_opt_out_is_refused_with_where_and_the_fix(tally: dict[str, Any]):
    path = tally["root"] / ".benchtape" / "evaluations" / "bad.yaml"
    path.write_text(EVALUATION.format(extra="project_environment: sometimes\n"))
    try:
        done = benchtape("run", "bad", "--dry-run", cwd=tally["root"])
    finally:
        path.unlink()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "bad.yaml:4" in done.stderr and "`project_environment:` must be true or false" in done.stderr and "project_environment: false" in done.stderr, done.stderr


WRITER = AGENT.replace('if (echo x > "$VIRTUAL_ENV/injected.txt") 2>/dev/null; then echo "VENV WRITABLE"; else echo "VENV READ-ONLY"; fi', 'echo "import os" > "$(python3 -c "import sysconfig; print(sysconfig.get_paths()[\'purelib\'])")/injected.py"')


def test_an_agent_that_writes_into_the_venv_is_caught_and_the_venv_built_anew(tally: dict[str, Any], monkeypatch: pytest.MonkeyPatch):
    """Where the host gives no mount namespace (the fence switched off here), the agent can write
    into the cached venv: its digest after the agent says so, the session records it as an
    error, and the entry is discarded, so the cell's verdict is computed in a venv built anew."""
    from benchtape.app.evaluation_run import EvaluationRequest, plan_evaluation, run_planned
    from benchtape.sandbox.pidfence import Fence
    from benchtape.spec.pricing import load_pricing

    root, folder = tally["root"], Path(tally["env"]["folder"])
    write_files(root, {".benchtape/tools/writer.yaml": json.dumps({**TOOL, "tool": "writer", "options": {"run": {"default": "default", "values": {"default": {"args": ["sh", "-c", WRITER]}}}}}), ".benchtape/evaluations/writer.yaml": EVALUATION.replace("fixer", "writer").format(extra="")})
    built = (folder / "manifest.json").stat().st_ino, (folder / "manifest.json").stat().st_mtime_ns
    off = Fence((), "switched off by this test")
    monkeypatch.setattr("benchtape.sandbox.local.fence", lambda: off)
    monkeypatch.setattr("benchtape.sandbox.pidfence.fence", lambda: off)
    monkeypatch.chdir(root)
    store = Store(tally["db"])
    try:
        req = EvaluationRequest("writer", yes=True, json_out=True)
        planned = plan_evaluation(req, store)
        done = run_planned(planned, store, req, load_pricing(planned.ev.project))
        [found] = sessions(tally["db"], done.run_id)
        errors = [a.data["message"] for a in store.actions(found["row"].id) if a.kind == "error"]
        expected = next(a.data for a in store.actions(found["row"].id) if a.kind == "environment.expected")["project_environment"]
    finally:
        store.close()
    assert any(f"the project environment's venv in {folder} changed while the agent ran" in e for e in errors), errors
    assert expected["read_only"].startswith("not read-only here (switched off by this test)")
    # said before the spend: with no fence, nothing covers the task's answer from its agent
    assert any("nothing here can cover a task's hidden tests, its reference fix" in n and "(switched off by this test)" in n and "--sandbox container" in n for n in planned.notes), planned.notes
    # discarded, then built anew by the cell's grading: the verdict never saw what the agent installed
    assert done.outcomes == {"writer@latest default": {"passed": 1}}, done.outcomes
    assert (folder / "manifest.json").is_file() and ((folder / "manifest.json").stat().st_ino, (folder / "manifest.json").stat().st_mtime_ns) != built
    assert not list((folder / "venv").rglob("injected.py"))


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_the_environment_is_mounted_read_only_at_its_own_path(tally: dict[str, Any]):
    """At level container the agent runs in benchtape's base image: the venv built with the
    image's Python (the one a container verifier runs in) mounted read-only at its own path,
    the workspace's import roots (/workspace/src) on PYTHONPATH."""
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        pytest.skip(f"NO DOCKER ENGINE: container level NOT RUN: {why}")
    done = benchtape("run", "given", "--sandbox", "container", "--yes", "--json", cwd=tally["root"], env={"BENCHTAPE_ENV_CACHE": str(tally["cache"])}, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    ran = json.loads(done.stdout)
    [found] = sessions(tally["db"], ran["run_id"])
    store = Store(tally["db"], readonly=True)
    try:
        session = store.load_session(found["row"].id)
        record = next(a.data for a in store.actions(found["row"].id) if a.kind == "environment.expected")["project_environment"]
        changes = workspace_changes(store, session)
    finally:
        store.close()
    said = session.final_output or ""
    assert ran["outcomes"] == {"fixer@latest default": {"passed": 1}}, (ran, said)
    assert "imported tally 1.0.0 from /workspace/src/tally/__init__.py" in said and "2 passed" in said and "VENV READ-ONLY" in said, said
    assert record["given"] is True and record["read_only"] == "mounted read-only in the agent's container"
    assert changes.modified == ["src/tally/__init__.py"] and changes.added == [], changes.to_dict()
