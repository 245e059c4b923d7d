"""A Harbor task folder loads as a benchtape TaskSpec, and what benchtape cannot honour is
refused by name, with the file, the line and a fix; the reward file is read as Harbor writes it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.sandbox.verifier import read_reward, read_rewards
from benchtape.spec.harbor_task import load_harbor_task, load_harbor_tasks, load_task_folder
from benchtape.spec.task import task_dirs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"


def copy_task(tmp_path: Path, name: str = "hello-file", toml: str | None = None) -> Path:
    dest = tmp_path / name
    shutil.copytree(FIXTURES / name, dest)
    if toml is not None:
        (dest / "task.toml").write_text(toml)
    return dest


def refusal(folder: Path) -> BadInput:
    with pytest.raises(BadInput) as caught:
        load_harbor_task(folder)
    assert caught.value.exit_code == 2
    return caught.value


def test_a_task_folder_maps_onto_a_taskspec():
    task = load_harbor_task(FIXTURES / "fix-the-sum")
    assert task.id == "fix-the-sum" and task.path.name == "task.toml"
    assert task.prompt() == (FIXTURES / "fix-the-sum" / "instruction.md").read_text()
    assert task.environment == FIXTURES / "fix-the-sum" / "environment"
    assert task.solution == FIXTURES / "fix-the-sum" / "solution" / "solve.sh"
    assert task.reference_patch is None and task.verify.tests_patch is None
    v = task.verify
    assert (v.command, v.timeout, v.network, v.reward_file) == ("bash /tests/test.sh", 60.0, False, True)
    r = task.runtime
    assert r is not None and r.tests_dir == FIXTURES / "fix-the-sum" / "tests"
    assert (r.agent_timeout, r.cpus, r.memory_mb, r.network) == (300.0, 1.0, 512, False)
    assert dict(r.verifier_env) == {"EXPECTED": "55"} and dict(r.solution_env) == {"FIXED_BY": "oracle"}
    assert task.description == "Fix an off-by-one in a summing script"
    assert any("storage_mb is not enforced" in n for n in r.notes)  # accepted, and said so
    assert task.validation is None and task.state("").state == "unvalidated"


def test_a_folder_of_tasks_loads_sorted_and_its_fingerprint_is_the_folders_content(tmp_path: Path):
    assert [t.id for t in load_harbor_tasks(FIXTURES)] == ["fix-the-sum", "hello-file", "two-files-partial"]
    assert [t.id for t in load_harbor_tasks(FIXTURES / "hello-file")] == ["hello-file"]
    folder = copy_task(tmp_path)
    before = load_harbor_task(folder).fingerprint("any recipe")
    assert before == load_harbor_task(folder).fingerprint("another recipe")  # the project image plays no part
    (folder / "tests" / "test.sh").write_text((folder / "tests" / "test.sh").read_text() + "\n# edited\n")
    assert load_harbor_task(folder).fingerprint("") != before


def test_defaults_follow_harbor(tmp_path: Path):
    folder = copy_task(tmp_path, toml='version = "1.0"\n')
    task = load_harbor_task(folder)
    assert task.verify.timeout == 600.0 and task.verify.network is True  # Harbor: 600 s, public network
    assert task.runtime is not None and task.runtime.agent_timeout is None and task.runtime.cpus is None


def test_deprecated_and_per_phase_keys_are_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HARBOR_TEST_TOKEN", "from-host")
    toml = """version = "1.0"
[environment]
memory = "2G"
allow_internet = false
env = { TOKEN = "${HARBOR_TEST_TOKEN}", MODE = "${UNSET_HARBOR_VAR:-plain}" }
workdir = "/srv"
[verifier]
network_mode = "public"
"""
    task = load_harbor_task(copy_task(tmp_path, toml=toml))
    r = task.runtime
    assert r is not None and r.memory_mb == 2048 and r.network is False and r.workdir == "/srv"
    assert dict(r.env) == {"TOKEN": "from-host", "MODE": "plain"}
    assert task.verify.network is True  # the verifier phase's own mode overrides the baseline


@pytest.mark.parametrize(
    ("toml", "line", "said", "fix"),
    [
        ('version = "1.0"\n[verifier]\ntimeout_secs = 10\n', 3, "`verifier.timeout_secs` is no task.toml key", "did you mean `timeout_sec`?"),
        ('version = "1.0"\n[environment]\ncpu = 2\n', 3, "`environment.cpu` is no task.toml key", "did you mean `cpus`?"),  # a key like none of Harbor's is ignored, as Harbor ignores it (test_harbor_init)
        ('version = "1.0"\n[environment]\ncpus = 1\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n', 5, "`environment.allowed_hosts` is not supported", "cannot let some hosts through"),
        ('version = "1.0"\n[environment]\ngpus = 2\n', 3, "benchtape's sandboxes have no GPU", "gpus = 0"),
        ('version = "1.0"\n[environment]\nworkdir = "app"\n', 3, "`environment.workdir = 'app'` cannot hold the workspace", 'workdir = "/app"'),
        ('version = "1.0"\n[environment]\nworkdir = "/solution/x"\n', 3, "cannot hold the workspace", "folder of its own"),
        ('version = "1.0"\n[agent]\nuser = "my agent"\n', 3, "`agent.user` must be a user name or a uid", 'user = "agent"'),
        ('version = "1.0"\n\n[[environment.mcp_servers]]\nname = "m"\nurl = "http://m"\nheaders = { Authorization = "Bearer ${T}" }\n', 6, "MCP server 'm' sends `headers`", "run the task under Harbor"),
        ('version = "1.0"\n[[steps]]\nname = "one"\n', 3, "step 'one' has no folder steps/one/", "make steps/one/"),
        ('version = "1.0"\n[[steps]]\nname = "a/b"\n', 3, "is no portable folder name", 'name = "step-1"'),
        ('version = "1.0"\nmulti_step_reward_strategy = "max"\n', 2, "is no strategy Harbor defines", '"mean"'),
        ('version = "1.0"\n[[steps]]\nname = "one"\nmin_rewards = 1\n', 4, "`steps.min_rewards` is no task.toml key", "did you mean `min_reward`?"),
        ('version = "1.0"\n[verifier]\nenvironment_mode = "apart"\n', 3, "environment_mode = 'apart'` is no mode Harbor defines", '"separate"'),
        ('schema_version = ["2.1"]\n', 1, "must be a version string", 'schema_version = "1.4"'),  # "2.1" itself is read, with a note, as Harbor reads it
        ('version = "1.0"\nartifacts = ["/var/log/app.log"]\n[verifier]\nenvironment_mode = "separate"\n', 2, None, None),
        ('version = "1.0"\n[environment]\nos = "windows"\n', 3, "sandboxes are Linux", 'os = "linux"'),
        ('version = "1.0"\n[agent]\ntimeout_sec = "soon"\n', 3, "must be a positive number of seconds", "timeout_sec = 600.0"),
        ('version = "1.0"\n[verifier]\nenv = { K = "${NO_SUCH_HARBOR_VAR}" }\n', 3, "needs ${NO_SUCH_HARBOR_VAR}", "export NO_SUCH_HARBOR_VAR"),
        ('version = "1.0"\n[verifier\n', 2, "not valid TOML", "fix the TOML syntax"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name_file_and_line(tmp_path: Path, toml: str, line: int, said: str | None, fix: str | None):
    folder = copy_task(tmp_path, toml=toml)
    if said is None:  # read: an artifact outside the working directory is refused where the task runs (prepare), not here
        assert load_harbor_task(folder).runtime.artifacts == ("/var/log/app.log",)  # type: ignore[union-attr]
        return
    err = refusal(folder)
    assert said in err.what and err.file == str(folder / "task.toml") and err.line == line
    assert err.fix and fix in err.fix


def test_a_missing_instruction_or_verifier_or_environment_is_refused(tmp_path: Path):
    folder = copy_task(tmp_path)
    (folder / "instruction.md").unlink()
    err = refusal(folder)
    assert "instruction.md is missing" in err.what and err.file == str(folder / "instruction.md") and "instruction.md" in (err.fix or "")
    shutil.copy(FIXTURES / "hello-file" / "instruction.md", folder / "instruction.md")
    (folder / "tests" / "test.sh").unlink()
    assert "tests/test.sh is missing" in refusal(folder).what
    shutil.copy(FIXTURES / "hello-file" / "tests" / "test.sh", folder / "tests" / "test.sh")
    (folder / "environment" / "Dockerfile").rename(folder / "environment" / "docker-compose.yaml")
    assert "docker-compose environment" in refusal(folder).what
    (folder / "environment" / "docker-compose.yaml").unlink()
    (folder / "task.toml").write_text('version = "1.0"\n[environment]\ndocker_image = "some-org/prebuilt:1"\n')
    task = load_harbor_task(folder)  # a prebuilt image needs no Dockerfile
    assert task.runtime is not None and task.runtime.image == "some-org/prebuilt:1"


def test_no_task_and_duplicate_ids_are_refused(tmp_path: Path):
    with pytest.raises(BadInput, match="no Harbor task below"):
        load_harbor_tasks(tmp_path)
    copy_task(tmp_path / "a")
    copy_task(tmp_path / "b")
    with pytest.raises(BadInput, match="two Harbor tasks are named 'hello-file'"):
        load_harbor_tasks(tmp_path)


def test_a_project_finds_harbor_tasks_beside_its_own_and_in_a_dataset_folder(tmp_path: Path):
    tasks = tmp_path / ".benchtape" / "tasks"
    copy_task(tasks)  # .benchtape/tasks/hello-file/task.toml
    shutil.copytree(FIXTURES, tasks / "dataset", ignore=shutil.ignore_patterns("hello-file"))  # a dataset checkout
    (tasks / "7").mkdir()
    (tasks / "7" / "task.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Task\n")
    found = task_dirs(tmp_path)
    assert set(found) == {"7", "hello-file", "fix-the-sum", "two-files-partial"}
    assert found["fix-the-sum"] == tasks / "dataset" / "fix-the-sum"
    assert load_task_folder(found["hello-file"]).runtime is not None
    with pytest.raises(BadInput):  # the history task's folder is still read by its own loader
        load_task_folder(found["7"])


def test_an_allowlist_of_no_host_is_honoured_as_no_network(tmp_path: Path):
    task = load_harbor_task(copy_task(tmp_path, toml='schema_version = "1.4"\n[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = []\n[verifier]\nnetwork_mode = "public"\n'))
    assert task.runtime is not None and task.runtime.network is False and task.verify.network is True


def test_the_reward_is_read_as_harbor_writes_it(tmp_path: Path):
    assert read_reward(tmp_path) is None
    (tmp_path / "reward.json").write_text('{"reward": 0.25, "accuracy": 0.9}')
    assert read_reward(tmp_path) == 0.25
    (tmp_path / "reward.json").write_text('{"accuracy": 0.75}')
    assert read_reward(tmp_path) == 0.75  # one metric: it is the reward
    (tmp_path / "reward.json").write_text('{"accuracy": 0.75, "style": 1}')
    assert read_reward(tmp_path) == 0.75 and read_rewards(tmp_path) == {"accuracy": 0.75, "style": 1.0}  # several, none named reward: the lowest decides
    (tmp_path / "reward.txt").write_text("1\n")
    assert read_reward(tmp_path) == 0.75  # reward.json first, as Harbor 0.25 reads them (harbor/verifier/verifier.py)
    (tmp_path / "reward.json").write_text('{"accuracy": "high"}')
    with pytest.raises(ValueError, match="not a finite number"):
        read_reward(tmp_path)
    (tmp_path / "reward.json").unlink()
    assert read_reward(tmp_path) == 1.0 and read_rewards(tmp_path) == {"reward": 1.0}
    (tmp_path / "reward.txt").write_text("passed")
    with pytest.raises(ValueError, match="reward.txt holds 'passed'"):
        read_reward(tmp_path)


def test_a_compose_environment_is_refused_by_its_service_not_passed_over(tmp_path: Path):
    """harbor-cookbook's multi-container recipe: a Dockerfile and, beside it, a compose file
    adding the API the agent and the oracle call by name. It was run as if the compose file
    were not there (every cell measured against a missing service); now it is refused, naming
    the service and its line, and how to run it."""
    folder = copy_task(tmp_path)
    (folder / "environment" / "docker-compose.yaml").write_text(
        "# merged over Harbor's main service\nservices:\n  main:\n    depends_on:\n      api-server:\n        condition: service_healthy\n\n"
        "  api-server:\n    build:\n      context: ./api-server\n    expose:\n      - \"5000\"\n"
    )
    err = refusal(folder)
    assert "api-server" in err.what and "docker-compose environment" in err.what
    assert err.file == str(folder / "environment" / "docker-compose.yaml") and err.line == 8
    assert err.fix and f"harbor run -p {folder}" in err.fix
    (folder / "environment" / "docker-compose.yaml").write_text("services:\n  main:\n    environment:\n      - MODE=strict\n")
    err = refusal(folder)
    assert "overrides of the task's container" in err.what and err.line == 1


def test_a_run_narrowed_by_task_says_nothing_of_the_tasks_left_out(tmp_path: Path):
    """`run harbor-tasks/ --task 296` said 'task 133 is unvalidated' and 'task 378 is …' for
    tasks it would not run, sending the user after them (itsdangerous, newcomer pass)."""
    from e2e.cli import benchtape

    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES, tasks)
    narrowed = benchtape("run", tasks, "--harness", "oracle", "--dry-run", "--task", "fix-the-sum", "--db", tmp_path / "d.db", cwd=tmp_path)
    whole = benchtape("run", tasks, "--harness", "oracle", "--dry-run", "--db", tmp_path / "d.db", cwd=tmp_path)
    assert narrowed.returncode == 0 and whole.returncode == 0, narrowed.stderr + whole.stderr
    said = lambda out: sorted(set(re.findall(r"task (\S+) is unvalidated", out.stdout + out.stderr)))  # noqa: E731
    assert said(narrowed) == ["fix-the-sum"] and len(said(whole)) == len(list(FIXTURES.iterdir())), (said(narrowed), said(whole))
