"""Issue 47: a task folder made by the REAL `harbor task init` (Harbor 0.25) and filled in runs
under benchtape's oracle and no-op with the outcome Harbor gives it: its default
`verifier.environment_mode = "separate"` (a verifier environment from tests/Dockerfile, handed
only the task's `artifacts`), `artifacts`, schema_version 1.4; and a shared-mode folder whose
verifier writes reward.json with several keys (all kept, the pass rule said)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from formatskit import benchtape
from harborkit import harbor

from benchtape.sandbox.harbor_env import can_map_paths
from benchtape.spec.harbor_task import load_harbor_task
from benchtape.store.database import Store

pytestmark = pytest.mark.skipif(not can_map_paths(), reason="Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")

TEST_OUTPUTS = '''
from pathlib import Path


def test_outputs():
    assert Path("/app/hello.txt").read_text().strip() == "Hello, world!"
    assert not Path("/app/scratch.txt").exists()  # the agent's other files never reach a separate verifier


if __name__ == "__main__":
    test_outputs()
'''
SEPARATE_TEST_SH = '#!/bin/bash\nif python3 /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'
SHARED_TEST_SH = """#!/bin/bash
greeting=0; polite=0
[ "$(cat hello.txt 2>/dev/null)" = "Hello, world!" ] && greeting=1
[ -f thanks.txt ] && polite=1
printf '{"greeting": %s, "polite": %s}' "$greeting" "$polite" > /logs/verifier/reward.json
"""


def _fill(folder: Path, test_sh: str, solve: str) -> None:
    (folder / "instruction.md").write_text("Write hello.txt in the working directory, holding `Hello, world!`.\n")
    (folder / "tests" / "test_outputs.py").write_text(TEST_OUTPUTS)
    (folder / "tests" / "test.sh").write_text(test_sh)
    (folder / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{solve}\n")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("harbor-init")
    tasks = top / "tasks"
    tasks.mkdir()
    for name, extra in (("greet", []), ("greet-shared", ["--verifier-mode", "shared"])):
        done = harbor("task", "init", f"bench/{name}", "-p", tasks, "--no-package", *extra, cwd=top)
        assert done.returncode == 0, done.stdout + done.stderr
    separate, shared = tasks / "greet", tasks / "greet-shared"
    _fill(separate, SEPARATE_TEST_SH, 'echo "Hello, world!" > hello.txt\necho draft > scratch.txt')
    toml = separate / "task.toml"
    toml.write_text(toml.read_text().replace("artifacts = []", 'artifacts = ["/app/hello.txt"]'))
    _fill(shared, SHARED_TEST_SH, 'echo "Hello, world!" > hello.txt')  # says hello, never thanks: polite stays 0
    db = top / "t.db"
    runs = {}
    for agent, args in {"oracle": ["--harness", "oracle"], "noop": ["--harness", "mock", "--model", "noop"]}.items():
        done = benchtape("run", tasks, *args, "--yes", "--json", "--db", db, cwd=top, timeout=300)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
        runs[agent] = json.loads(done.stdout)["run_id"]
    return {"tasks": tasks, "db": db, "runs": runs}


def _graded(db: Path, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Task id → (its cell outcome, the evidence of its task:verify verdict)."""
    from benchtape.replay.query import latest_verdicts

    store = Store(db, readonly=True)
    try:
        rows = list(store.session_rows(run_id=run_id))
        outcomes = store.outcomes([r.id for r in rows])
        return {r.scenario: (outcomes[r.id][-1]["outcome"], (latest_verdicts(store, r.id) or [{}])[-1].get("evidence") or {}) for r in rows}
    finally:
        store.close()


def test_harbor_init_writes_what_benchtape_reads(made: dict[str, Any]) -> None:
    task = load_harbor_task(made["tasks"] / "greet")
    text = (made["tasks"] / "greet" / "task.toml").read_text()
    assert 'schema_version = "1.4"' in text and 'environment_mode = "separate"' in text  # what Harbor 0.25 writes
    runtime = task.runtime
    assert runtime is not None and runtime.verifier_separate and runtime.artifacts == ("/app/hello.txt",)
    assert runtime.verifier_dockerfile == made["tasks"] / "greet" / "tests" / "Dockerfile" and runtime.verifier_workdir == "/app"
    shared = load_harbor_task(made["tasks"] / "greet-shared").runtime
    assert shared is not None and not shared.verifier_separate


def test_the_oracle_passes_and_the_noop_fails_as_under_harbor(made: dict[str, Any]) -> None:
    oracle, noop = (_graded(made["db"], made["runs"][k]) for k in ("oracle", "noop"))
    outcome, evidence = oracle["greet"]
    assert outcome == "passed" and evidence["reward"] == 1.0, evidence  # hello.txt handed over, scratch.txt not
    assert any("environment of its own" in n for n in evidence["notes"])
    assert noop["greet"][0] == "no_changes" and noop["greet-shared"][0] == "no_changes"


def test_a_reward_file_of_several_keys_keeps_them_all_and_says_which_decides(made: dict[str, Any]) -> None:
    outcome, evidence = _graded(made["db"], made["runs"]["oracle"])["greet-shared"]
    assert evidence["rewards"] == {"greeting": 1.0, "polite": 0.0}
    assert outcome == "failed" and evidence["reward"] == 0.0 and "the lowest decides" in evidence["detail"]  # every key must reach 1


def test_what_cannot_be_honoured_is_refused_saying_why(tmp_path: Path) -> None:
    from benchtape.core.errors import BadInput

    done = harbor("task", "init", "bench/net", "-p", tmp_path, "--no-package", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    toml = tmp_path / "net" / "task.toml"
    base = toml.read_text()
    cases = {
        'network_mode = "public"': ('network_mode = "allowlist"\nallowed_hosts = ["pypi.org"]', "cannot let some hosts through"),
        'artifacts = []': ('artifacts = ["/logs/agent/out.txt"]', "does not collect from the agent"),
        'schema_version = "1.4"': ('schema_version = ["1.4"]', "a version string"),
        'environment_mode = "separate"': ('environment_mode = "isolated"', "no mode Harbor defines"),
    }
    for old, (new, said) in cases.items():
        toml.write_text(base.replace(old, new, 1))
        with pytest.raises(BadInput) as err:
            load_harbor_task(tmp_path / "net")
        assert said in str(err.value) + (err.value.fix or ""), err.value
        assert err.value.line is not None and toml.read_text().splitlines()[err.value.line - 1] in new.splitlines()  # the line that asks for it
    # what Harbor reads and checks nothing of is read too, with a note: another schema major
    # (Terminal-Bench 2.1's guide has its authors write `version = "2.0"`), a key Harbor 0.25 does
    # not define that asks nothing or is like none of its own
    for old, new, said in (
        ('schema_version = "1.4"', 'schema_version = "2.0"', 'schema_version = "2.0"` (task.toml line 1): read as Harbor 0.25 reads it'),
        ("[environment]\n", "[environment]\ndocker_flags = []\n", "`environment.docker_flags` (task.toml line"),
        ("[environment]\n", '[environment]\nprovider_hint = "gke"\n', "`environment.provider_hint` (task.toml line"),
    ):
        assert old in base, old
        toml.write_text(base.replace(old, new, 1))
        runtime = load_harbor_task(tmp_path / "net").runtime
        assert runtime is not None and any(said in n for n in runtime.notes), (new, runtime.notes)
    # a key like one of Harbor's that is another word (real tasks carry `[tags]` and
    # `dockerfile = …`, read by other tools) is noted, as Harbor ignores it; a slip is refused
    for written, said in (('docker_flags = ["--privileged"]', "`environment.docker_flags`"), ('dockerfile = "environment/Dockerfile"', "if `docker_image` was meant")):
        toml.write_text(base.replace("[environment]\n", f"[environment]\n{written}\n", 1))
        runtime = load_harbor_task(tmp_path / "net").runtime
        assert runtime is not None and any(said in n and "ignored, as Harbor ignores it" in n for n in runtime.notes), (written, runtime.notes)
    toml.write_text(base + '\n[tags]\ndomain = "databases"\n')
    runtime = load_harbor_task(tmp_path / "net").runtime
    assert runtime is not None and any("`tags` (task.toml line" in n for n in runtime.notes), runtime.notes
    toml.write_text(base.replace("[environment]\n", '[environment]\ndocker_imag = "x"\n', 1))
    with pytest.raises(BadInput) as err:
        load_harbor_task(tmp_path / "net")
    assert "did you mean `docker_image`?" in (err.value.fix or "") and "neither Harbor 0.25 nor benchtape applies it" in (err.value.fix or "")
    drafts = tmp_path / "_wip-net"  # a folder name Harbor datasets give drafts: a task id
    toml.write_text(base)
    (tmp_path / "net").rename(drafts)
    assert load_harbor_task(drafts).id == "_wip-net"


# ---------------------------------------------------------------- level container


@pytest.fixture(scope="module")
def engine() -> None:
    import os

    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: the separate verifier at level container NOT RUN: {why}")


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_the_separate_verifier_is_built_from_tests_dockerfile(engine: None, made: dict[str, Any], tmp_path: Path) -> None:
    """`task validate` at level container: the agent's environment from environment/Dockerfile,
    the verifier's from tests/Dockerfile (its own image), handed hello.txt only. Harbor's template
    images (python:3.12-slim, COPY --from ghcr.io/astral-sh/uv) are not local: refused by name."""
    import shutil
    import subprocess

    from benchtape.sandbox.baseimage import BASE_IMAGE

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tasks = repo / ".benchtape" / "tasks"
    task = shutil.copytree(made["tasks"] / "greet", tasks / "greet")
    template = shutil.copytree(made["tasks"] / "greet", tasks / "greet-template")
    (task / "environment" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\n")
    (task / "tests" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY . /tests/\n")
    (template / "environment" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\n")
    done = benchtape("task", "validate", "--json", cwd=repo, timeout=900)
    assert done.returncode in (0, 1), done.stderr
    reports = {t["id"]: t for t in json.loads(done.stdout)["tasks"]}
    greet = reports["greet"]
    assert greet["validated"] and (greet["phases"]["base"]["reward"], greet["phases"]["reference"]["reward"]) == (0.0, 1.0), greet
    assert any(n.startswith("separate verifier image benchtape-scenario:") for n in greet["notes"]), greet["notes"]
    refused = reports["greet-template"]
    assert not refused["validated"] and "python:3.12-slim" in refused["refused"] and "ghcr.io/astral-sh/uv:0.9.7" in refused["refused"], refused
