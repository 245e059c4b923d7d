"""`benchtape task validate` on Harbor tasks: the untouched environment (no-op) must earn a reward
below 1 and solution/solve.sh (the oracle) reward 1, each verified by tests/test.sh in a fresh
sandbox; each phase is a session in the store; the record is written beside the task. Level home
here (the Dockerfile not applied, Harbor's paths mapped); level container where an engine runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e.cli import benchtape

from benchtape.spec.harbor_task import VALIDATION_FILE, load_harbor_task
from benchtape.store.database import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"
VALID = ["fix-the-sum", "hello-file", "two-files-partial"]


def project_with(tmp_path: Path, broken: bool = True) -> Path:
    """A git repository whose .benchtape/tasks/ holds the fixtures as a dataset folder, and
    (with `broken`) one Harbor task per way a validation can fail."""
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tasks = repo / ".benchtape" / "tasks"
    shutil.copytree(FIXTURES, tasks / "dataset")
    if broken:
        always = shutil.copytree(FIXTURES / "hello-file", tasks / "always-passes")
        (always / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
        half = shutil.copytree(FIXTURES / "two-files-partial", tasks / "half-solved")
        (half / "solution" / "solve.sh").write_text("#!/bin/bash\necho alpha > a.txt\n")
        silent = shutil.copytree(FIXTURES / "hello-file", tasks / "no-reward")
        (silent / "tests" / "test.sh").write_text("#!/bin/bash\necho checking, but writing no reward\n")
        unsolved = shutil.copytree(FIXTURES / "hello-file", tasks / "no-solution")
        shutil.rmtree(unsolved / "solution")
        lacking = shutil.copytree(FIXTURES / "hello-file", tasks / "lacks-a-module")  # a verifier whose runner the environment does not hold
        (lacking / "tests" / "test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\npython3 -m benchtape_no_such_runner -q tests/ && echo 1 > /logs/verifier/reward.txt\n")
    return repo


def validate(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = benchtape("task", "validate", *args, "--json", cwd=repo, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in doc["tasks"]}


@pytest.fixture(scope="module")
def at_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = project_with(tmp_path_factory.mktemp("harbor-home"))
    code, doc = validate(repo, "--sandbox", "home")
    return {"repo": repo, "code": code, "doc": doc, "tasks": by_id(doc)}


def test_at_home_the_oracle_passes_and_the_noop_fails(at_home: dict[str, Any]):
    assert at_home["code"] == 1 and at_home["doc"]["level"] == "home"  # the broken ones are not valid
    for task_id in VALID:
        report = at_home["tasks"][task_id]
        base, ref = report["phases"]["base"], report["phases"]["reference"]
        assert report["validated"] and report["where"] == "home", report
        assert (base["status"], base["reward"], base["held"]) == ("failed", 0.0, True)
        assert (ref["status"], ref["reward"], ref["held"]) == ("passed", 1.0, True)
        assert any("environment/Dockerfile is not applied" in n for n in report["notes"])
        folder = at_home["repo"] / ".benchtape" / "tasks" / "dataset" / task_id
        record = json.loads((folder / VALIDATION_FILE).read_text())
        assert record["rewards"] == {"base": 0.0, "reference": 1.0} and record["level"] == "home"
        assert record["fingerprint"] == report["fingerprint"] == load_harbor_task(folder).fingerprint("")
    assert Path(at_home["tasks"]["hello-file"]["phases"]["base"]["log_path"]).read_text().startswith("$ bash /tests/test.sh\n")
    assert "hello.txt is missing or wrong" in Path(at_home["tasks"]["hello-file"]["phases"]["base"]["log_path"]).read_text()


def test_task_controls_run_on_harbor_tasks_through_the_agents_verdict(at_home: dict[str, Any]):
    """`task controls` beside Harbor tasks stopped on a traceback (a Harbor task has no base
    commit, and the oracle's workspace was asked of one). The oracle's candidate is what
    solve.sh changes in the environment's starting workspace, graded as an agent's is; the
    no-op changes nothing. Valid tasks only: the broken ones are skipped by name."""
    done = benchtape("task", "controls", "--json", cwd=at_home["repo"], timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    results = {t["task"]: t for t in doc["tasks"]}
    assert doc["ok"] and set(results) == set(VALID), doc
    for task_id in VALID:
        assert results[task_id]["holds"] and results[task_id]["oracle"]["outcome"] == "passed" and results[task_id]["noop"]["outcome"] == "no_changes", results[task_id]
    assert {s["id"] for s in doc["skipped"]} >= {"always-passes", "no-solution"}


def test_at_home_each_way_to_fail_is_named(at_home: dict[str, Any]):
    tasks = at_home["tasks"]
    assert tasks["always-passes"]["phases"]["base"]["diagnosis"] == "base_already_passes" and not tasks["always-passes"]["validated"]
    half = tasks["half-solved"]["phases"]["reference"]
    assert (half["status"], half["reward"], half["diagnosis"]) == ("failed", 0.5, "gold_still_fails")  # the partial reward kept
    silent = tasks["no-reward"]["phases"]["base"]
    assert silent["reward"] is None and silent["diagnosis"] == "no_reward" and "wrote neither" in silent["detail"]
    assert tasks["no-solution"]["refused"] and "solution/solve.sh" in tasks["no-solution"]["refused"] and not tasks["no-solution"]["phases"]
    lacking = tasks["lacks-a-module"]["phases"]["reference"]  # the environment, not solve.sh, stopped the tests: never "fix solve.sh"
    assert (lacking["reward"], lacking["diagnosis"]) == (0.0, "missing_dependency") and "benchtape_no_such_runner" in lacking["detail"], lacking
    said = tasks["lacks-a-module"]["next"]
    assert "install it in environment/Dockerfile" in said and "fix solve.sh" not in said and "fix solution/solve.sh" not in said and "fix it" not in said
    for task_id in ("always-passes", "half-solved", "no-reward", "no-solution", "lacks-a-module"):
        assert not (at_home["repo"] / ".benchtape" / "tasks" / task_id / VALIDATION_FILE).exists()


def test_each_phase_is_a_session_in_the_store(at_home: dict[str, Any]):
    store = Store(at_home["repo"] / ".benchtape" / "benchtape.db", readonly=True)
    run = store.run(at_home["doc"]["run"])
    assert run is not None and run["kind"] == "validate"
    rows = {r.scenario: r for r in store.session_rows(run_id=run["id"])}
    ran = [t for t in at_home["tasks"] if at_home["tasks"][t]["phases"]]
    assert set(rows) == {f"{t}:{p}" for t in ran for p in ("base", "reference")}
    oracle = store.load_session(rows["fix-the-sum:reference"].id)
    assert [c.input["command"] for c in oracle.calls] == ["bash /solution/solve.sh", "bash /tests/test.sh"]
    assert json.loads(oracle.final_output or "{}")["reward"] == 1.0
    assert any("fixed by oracle" in line for line in store.raw_lines(rows["fix-the-sum:reference"].id))  # [solution] env reached solve.sh


def test_task_list_shows_them_valid_until_the_folder_changes(at_home: dict[str, Any]):
    repo = at_home["repo"]
    done = benchtape("task", "list", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    rows = {r["id"]: r for r in json.loads(done.stdout)["tasks"]}
    assert {t: rows[t]["state"] for t in VALID} == dict.fromkeys(VALID, "valid")
    assert rows["hello-file"]["format"] == "harbor" and rows["always-passes"]["state"] == "unvalidated"
    instruction = repo / ".benchtape" / "tasks" / "dataset" / "hello-file" / "instruction.md"
    was = instruction.read_text()
    instruction.write_text(was + "\nAlso be polite.\n")
    try:
        rows = {r["id"]: r for r in json.loads(benchtape("task", "list", "--json", cwd=repo).stdout)["tasks"]}
        assert rows["hello-file"]["state"] == "stale" and rows["fix-the-sum"]["state"] == "valid"
    finally:  # the module's other tests share these tasks
        instruction.write_text(was)


def test_a_bad_task_toml_is_bad_input_naming_file_and_line(tmp_path: Path):
    repo = project_with(tmp_path, broken=False)
    toml = repo / ".benchtape" / "tasks" / "dataset" / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace("timeout_sec = 60.0", "timeout_secs = 60.0"))
    done = benchtape("task", "validate", "hello-file", "--sandbox", "home", cwd=repo)
    assert done.returncode == 2
    assert f"{toml}:11: `verifier.timeout_secs` is no task.toml key" in done.stderr and "did you mean `timeout_sec`?" in done.stderr
    listed = json.loads(benchtape("task", "list", "--json", cwd=repo).stdout)
    broken = next(r for r in listed["tasks"] if r["id"] == "hello-file")
    assert broken["state"] == "broken" and broken["next"] == f"fix {toml}"
    # every task (no ids): the broken one is said and the others validated, as `run` skips it
    # and carries on (it stopped at the first broken task, validating none)
    code, doc = validate(repo, "--sandbox", "home")
    reports = by_id(doc)
    assert code == 1 and not reports["hello-file"]["validated"] and f"{toml}:11: `verifier.timeout_secs`" in reports["hello-file"]["refused"], reports["hello-file"]
    assert "did you mean `timeout_sec`?" in reports["hello-file"]["next"] and set(VALID) - {"hello-file"} <= {t for t, r in reports.items() if r["validated"]}, reports


def test_a_dataset_task_named_like_another_task_is_bad_input_naming_both(tmp_path: Path):
    """A dataset task named like a task beside it replaced that task silently: `task list` showed
    one of them, the valid one gone, and `run` dropped its cells. Both are named now, and the fix."""
    repo = project_with(tmp_path, broken=False)
    tasks = repo / ".benchtape" / "tasks"
    shutil.copytree(FIXTURES / "hello-file", tasks / "hello-file")  # a task beside the dataset, with the dataset's id
    for command in (("task", "list"), ("task", "validate", "hello-file", "--sandbox", "home")):
        done = benchtape(*command, cwd=repo)
        assert done.returncode == 2 and "two tasks are named 'hello-file'" in done.stderr, done.stdout + done.stderr
        assert str(tasks / "hello-file") in done.stderr and str(tasks / "dataset" / "hello-file") in done.stderr and "rename one folder" in done.stderr, done.stderr


# ---------------------------------------------------------------- level container


@pytest.fixture(scope="module")
def engine() -> None:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: Harbor validation at level container NOT RUN: {why}")


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_the_oracle_passes_and_the_noop_fails(engine: None, tmp_path: Path):
    repo = project_with(tmp_path, broken=False)
    code, doc = validate(repo)  # auto: an engine answers and every task brings its environment
    assert code == 0 and doc["level"] == "container"
    assert sorted(by_id(doc)) == VALID
    for report in doc["tasks"]:
        assert report["validated"] and report["where"].startswith("container benchtape-scenario:"), report
        assert (report["phases"]["base"]["reward"], report["phases"]["reference"]["reward"]) == (0.0, 1.0)


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
@pytest.mark.parametrize("extraction", ["filter", "no-filter"])
def test_the_workspace_starts_as_the_image_left_its_workdir(engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extraction: str):
    """`no-filter`: a Python before 3.11.4 (Debian 12's 3.11.2) has no tar extraction filter;
    the image's tree is unpacked by the snapshot's own strict restore instead."""
    import tarfile

    from benchtape.sandbox import harbor_env

    if extraction == "no-filter":
        monkeypatch.delattr(tarfile, "tar_filter", raising=False)
    task = load_harbor_task(FIXTURES / "fix-the-sum")
    env = harbor_env.prepare(task, "container")
    assert env.workdir == "/app" and env.image and env.image.startswith("benchtape-scenario:")
    work = harbor_env.starting_workspace(env, tmp_path / "work")
    assert (work / "total.py").read_text() == (FIXTURES / "fix-the-sum" / "environment" / "total.py").read_text()
    noop = harbor_env.run_verifier(env, work, tmp_path / "noop")
    assert noop.reward == 0.0  # the buggy program, as the Dockerfile copied it, prints 45


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_a_from_image_absent_here_is_refused_naming_it_and_how_to_load_it(engine: None, tmp_path: Path):
    repo = project_with(tmp_path, broken=False)
    dockerfile = repo / ".benchtape" / "tasks" / "dataset" / "hello-file" / "environment" / "Dockerfile"
    dockerfile.write_text("# the task's environment\nFROM ubuntu-benchtape-absent:24.04\nWORKDIR /app\n")
    code, doc = validate(repo, "hello-file", "--sandbox", "container")
    report = by_id(doc)["hello-file"]
    assert code == 1 and not report["validated"] and not report["phases"]
    assert "ubuntu-benchtape-absent:24.04 is not a local image" in report["refused"] and "docker load -i" in report["refused"]
    assert f"{dockerfile}:2:" in report["refused"]  # the FROM's line
    from benchtape.sandbox.baseimage import BASE_IMAGE

    assert f"start FROM {BASE_IMAGE} " in report["refused"]  # the fix as it is written: the tag too (`FROM benchtape-base` alone is no image)
    dockerfile.write_text("FROM benchtape-base\nWORKDIR /app\n")
    code, doc = validate(repo, "hello-file", "--sandbox", "container")
    refused = by_id(doc)["hello-file"]["refused"]
    assert code == 1 and f"{dockerfile}:1: FROM benchtape-base is not an image of this engine" in refused and f"start FROM {BASE_IMAGE}" in refused


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_preflight_names_every_absent_image_before_anything_runs(engine: None, tmp_path: Path):
    from benchtape.sandbox.harbor_env import preflight_problems

    prebuilt = shutil.copytree(FIXTURES / "hello-file", tmp_path / "prebuilt")
    (prebuilt / "task.toml").write_text('version = "1.0"\n[environment]\ndocker_image = "benchtape-absent/prebuilt:2"\n')
    tasks = [load_harbor_task(FIXTURES / "hello-file"), load_harbor_task(prebuilt)]
    problems = preflight_problems(tasks, "container")
    assert len(problems) == 1 and problems[0].startswith("task prebuilt: ") and "benchtape-absent/prebuilt:2 is not a local image" in problems[0]
    assert "[environment] docker_image" in problems[0] and "docker load -i" in problems[0]
    assert preflight_problems(tasks, "home") == []  # the Dockerfile is not applied there


def test_at_home_harbors_paths_hold_wherever_the_workdir_is(tmp_path: Path):
    """A workdir inside a host folder (/usr/src/app) is made in the task's view, not on the host,
    and the host's programs beside it stay; /tests is a copy (a script may write beside itself,
    as in Harbor) and the host's folders are read-only: nothing leaks to the host or the task."""
    from benchtape.sandbox import harbor_env

    folder = shutil.copytree(FIXTURES / "hello-file", tmp_path / "deep")
    (folder / "task.toml").write_text('version = "1.0"\n[environment]\nworkdir = "/usr/src/benchtape-harbor-app"\nnetwork_mode = "no-network"\n')
    (folder / "tests" / "test.sh").write_text(
        "#!/bin/bash\n"
        'ok=1; [ "$(cat /usr/src/benchtape-harbor-app/hello.txt)" = "Hello, world!" ] || ok=0\n'
        "[ \"$(pwd)\" = /usr/src/benchtape-harbor-app ] || ok=0\n"
        "touch /tests/written || ok=0\n"
        "touch /usr/bin/benchtape-written 2>/dev/null && ok=0\n"
        "[ -x /usr/bin/env ] || ok=0\n"
        "echo $ok > /logs/verifier/reward.txt\n"
    )
    task = load_harbor_task(folder)
    env = harbor_env.prepare(task, "home")
    assert env.workdir == "/usr/src/benchtape-harbor-app" and any("not applied" in n for n in env.notes)
    work = harbor_env.starting_workspace(env, tmp_path / "work")
    assert list(work.iterdir()) == []  # the Dockerfile is not applied: nothing in it
    solved = harbor_env.run_solution(env, work, tmp_path / "scratch")
    assert solved.exit_code == 0, solved.output
    assert (work / "hello.txt").read_text() == "Hello, world!\n"  # solve.sh wrote into the workspace
    ev = harbor_env.run_verifier(env, work, tmp_path / "scratch")
    assert (ev.status, ev.reward) == ("passed", 1.0), ev.log
    assert not Path("/usr/src/benchtape-harbor-app").exists() and not Path("/usr/bin/benchtape-written").exists()
    assert not (folder / "tests" / "written").exists()


def test_doctor_takes_validated_harbor_tasks_as_they_are(at_home: dict[str, Any]):
    done = benchtape("doctor", "--json", cwd=at_home["repo"])
    tasks = next(c for c in json.loads(done.stdout)["checks"] if c["check"] == "tasks")
    assert tasks["status"] != "fail" and "3 valid" in tasks["detail"], tasks  # a reward, not test counts, proves a Harbor task


def test_an_artifact_is_copied_over_the_verifiers_workdir_as_harbors_upload_does(tmp_path: Path):
    """The separate verifier's working directory starts as its image left it; the agent's artifact
    goes over it, link for link. An image that already holds the workspace's links (a Node
    project's node_modules, pnpm's relative links) stopped copytree at the first (`File exists`)."""
    from benchtape.sandbox.harbor_env import _copy_over

    agent, verifier = tmp_path / "agent", tmp_path / "verifier"
    for root in (agent, verifier):
        (root / "node_modules" / ".pnpm" / "a@1" / "node_modules" / "a").mkdir(parents=True)
        (root / "node_modules" / ".pnpm" / "a@1" / "node_modules" / "a" / "index.js").write_text("module.exports = 1\n")
        (root / "node_modules" / "a").symlink_to(".pnpm/a@1/node_modules/a")
    (agent / "src.js").write_text("fixed\n")
    (verifier / "src.js").write_text("buggy\n")
    (agent / "was-a-file").mkdir()  # a folder where the image had a file, and the reverse
    (agent / "was-a-file" / "x").write_text("x\n")
    (verifier / "was-a-file").write_text("old\n")
    (agent / "was-a-folder").write_text("now a file\n")
    (verifier / "was-a-folder").mkdir()
    (agent / "link-to-folder").symlink_to("node_modules")
    _copy_over(agent, verifier)
    assert (verifier / "src.js").read_text() == "fixed\n"
    assert os.readlink(verifier / "node_modules" / "a") == ".pnpm/a@1/node_modules/a" and (verifier / "node_modules" / "a" / "index.js").is_file()
    assert (verifier / "was-a-file" / "x").read_text() == "x\n" and (verifier / "was-a-folder").read_text() == "now a file\n"
    assert (verifier / "link-to-folder").is_symlink() and os.readlink(verifier / "link-to-folder") == "node_modules"


def test_at_home_the_dockerfiles_plain_copy_of_the_tasks_files_is_the_starting_workspace(tmp_path: Path):
    """A task `benchtape task export` wrote (`COPY workspace/ /app/`, `WORKDIR /app`) started
    empty at level home, where no image is built: its oracle's patch met no file and every cell
    failed, with nothing said. The Dockerfile's plain COPY of the task's own files into the
    working directory is applied there; what would reach outside environment/, a glob, another
    stage's files, or a destination outside the working directory are not."""
    from benchtape.sandbox.harbor_env import home_copies, prepare, starting_workspace

    task_dir = shutil.copytree(FIXTURES / "hello-file", tmp_path / "exported")
    env_dir = task_dir / "environment"
    (env_dir / "workspace" / "pkg").mkdir(parents=True)
    (env_dir / "workspace" / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (env_dir / "notes.txt").write_text("kept beside\n")
    (env_dir / "host").mkdir()
    (tmp_path / "outside.txt").write_text("the host's\n")
    (env_dir / "link.txt").symlink_to(tmp_path / "outside.txt")
    (env_dir / "Dockerfile").write_text(
        "FROM benchtape-base:0.1.0\nCOPY host/ /\nCOPY workspace/ /app/\nCOPY notes.txt /app/docs/\nCOPY ../outside.txt /app/\n"
        "COPY link.txt /app/\nCOPY --from=build /out /app/out\nCOPY *.txt /app/\nWORKDIR /app\n"
    )
    task = load_harbor_task(task_dir)
    assert [(src.name, inside) for src, inside in home_copies(task)] == [("workspace", ""), ("notes.txt", "docs/notes.txt")]
    work = starting_workspace(prepare(task, "home"), tmp_path / "work")
    assert sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file()) == ["docs/notes.txt", "pkg/calc.py"]
    done = benchtape("run", str(task_dir), "--harness", "oracle", "--yes", "--db", str(tmp_path / "s.db"), cwd=tmp_path, timeout=600)
    assert done.returncode == 0 and "passed 1" in done.stdout + done.stderr, done.stdout + done.stderr  # solve.sh writes hello.txt beside the copied files


def test_at_home_a_reference_that_fails_without_the_dockerfiles_run_lines_points_to_the_container(tmp_path: Path):
    """A Terminal-Bench 2.1 task whose tests/test.sh runs the venv its Dockerfile's RUN lines make
    (/opt/verifier-venv): at level home they are not applied, the reference fails, and the next
    step read "fix solve.sh (or the tests)". It now names the instructions not applied and
    `--sandbox container`, the task's own image, before any edit of the task."""
    repo = project_with(tmp_path, broken=False)
    task_dir = shutil.copytree(FIXTURES / "hello-file", repo / ".benchtape" / "tasks" / "needs-image")
    (task_dir / "environment" / "Dockerfile").write_text("FROM benchtape-base:0.1.0\nWORKDIR /app\nRUN python3 -m venv /opt/verifier-venv-bt \\\n && /opt/verifier-venv-bt/bin/pip --version\nENV PATH=/opt/verifier-venv-bt/bin:$PATH\n")
    test_sh = task_dir / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("#!/bin/bash\n", "#!/bin/bash\n/opt/verifier-venv-bt/bin/python3 -c 'print(1)' || { echo 0 > /logs/verifier/reward.txt; exit 0; }\n", 1))
    code, doc = validate(repo, "needs-image", "--sandbox", "home")
    report = by_id(doc)["needs-image"]
    assert code == 1 and not report["validated"] and report["phases"]["reference"]["held"] is False, report
    assert "environment/Dockerfile's 1 RUN, 1 ENV instruction(s) are not applied at level home: validate it with --sandbox container" in report["next"], report["next"]
    assert "fix" in report["next"]  # the task's own remedy still follows, for a task that fails in its image too


def test_an_oracle_that_cannot_run_is_a_control_that_does_not_hold_counted_whole(tmp_path: Path):
    """A folder run whose oracle failed on one task and could not run on another (its solve.sh
    exits 1: adapter_error) said "did not pass 1 of 1 cell(s)", counting only the measured cell
    (harbor-cookbook, newcomer pass); every cell the oracle was given counts, the unmeasured
    ones named."""
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "hello-file", tasks / "passes")
    crashes = shutil.copytree(FIXTURES / "hello-file", tasks / "crashes")
    (crashes / "solution" / "solve.sh").write_text("#!/bin/bash\nexit 1\n")
    wrong = shutil.copytree(FIXTURES / "hello-file", tasks / "wrong")
    (wrong / "solution" / "solve.sh").write_text("#!/bin/bash\necho Goodbye > hello.txt\n")
    done = benchtape("run", str(tasks), "--harness", "oracle", "--yes", "--db", str(tmp_path / "s.db"), cwd=tmp_path, timeout=600)
    said = " ".join((done.stdout + done.stderr).split())
    assert "passed 1" in said and "adapter_error 1" in said, said
    assert "(the oracle) did not pass 2 of 3 cell(s) (adapter_error 1: attempted, not measured): a task or its checks are broken" in said, said
    assert done.returncode == 1  # the crashed oracle cell: an execution failure
    # --fail-on-failure gates on the control: accepted and ignored before, exit 0 with the oracle failing
    for name in ("crashes",):
        shutil.rmtree(tasks / name)
    plain = benchtape("run", str(tasks), "--harness", "oracle", "--yes", "--db", str(tmp_path / "s.db"), cwd=tmp_path, timeout=600)
    gated = benchtape("run", str(tasks), "--harness", "oracle", "--yes", "--fail-on-failure", "--db", str(tmp_path / "s.db"), cwd=tmp_path, timeout=600)
    assert (plain.returncode, gated.returncode) == (0, 1), plain.stdout + gated.stdout + gated.stderr
    # and why the wrong one failed, in the verifier's own words (it was only in `show --json`)
    shown = benchtape("show", "latest/wrong", "--db", str(tmp_path / "s.db"), "--plain", cwd=tmp_path)
    assert shown.returncode == 0 and "the verifier's log:" in shown.stdout and "$ bash /tests/test.sh" in shown.stdout, shown.stdout + shown.stderr
