"""`benchtape run DIR` on a folder of Harbor tasks (issue 35, the record side): the real command
with the oracle and with the no-op agent (mock noop) at level home records one session per
task, each naming its Harbor task (its folder's content hash as the fingerprint), the oracle's
solution/solve.sh as a shell call whose change is in the final workspace, the no-op's workspace
untouched; the tasks' validation state is said; an edited task is a new cell."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e.cli import benchtape  # noqa: E402
from taskrunkit import run_json, sessions, tree  # noqa: E402

from benchtape.sandbox.harbor_env import can_map_paths  # noqa: E402
from benchtape.spec.task import folder_hash  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"
TASKS = sorted(p.name for p in FIXTURES.iterdir() if (p / "task.toml").is_file())

pytestmark = pytest.mark.skipif(not can_map_paths(), reason="Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("harbor")
    folder = top / "harbor"
    shutil.copytree(FIXTURES, folder)
    db = top / "t.db"
    oracle = run_json(benchtape("run", str(folder), "--harness", "oracle", "--yes", "--json", "--db", str(db), cwd=top, timeout=300))
    noop = run_json(benchtape("run", str(folder), "--harness", "mock", "--model", "noop", "--yes", "--json", "--db", str(db), cwd=top, timeout=300))
    return {"top": top, "folder": folder, "db": db, "oracle": oracle, "noop": noop}


def test_each_task_is_a_session_naming_its_harbor_task(ran: dict[str, Any]):
    for key in ("oracle", "noop"):
        found = sessions(ran["db"], ran[key]["run_id"])
        assert sorted(s["row"].scenario for s in found) == TASKS
        for s in found:
            folder = ran["folder"] / s["row"].scenario
            assert s["started"]["task"] == {"kind": "harbor", "id": folder.name, "folder": str(folder), "fingerprint": "sha256:" + folder_hash(folder)}
            assert s["started"]["prompt"] == (folder / "instruction.md").read_text()
            assert s["started"]["cell"]["control"] == key and s["started"]["cell"]["evaluation"] == "harbor"
            assert s["finished"]["status"] == "ok"
            assert tree(ran["db"], s["baseline"]) == copied(folder)  # level home: no image is built; the workspace starts with what the Dockerfile COPYs of the task's own files


def test_the_oracle_runs_solve_sh_and_its_change_is_the_final_workspace(ran: dict[str, Any]):
    by_task = {s["row"].scenario: s for s in sessions(ran["db"], ran["oracle"]["run_id"])}
    for s in by_task.values():
        # as it ran: at level home the solution's folder is a scratch folder of the session's (/solution is the host's own path)
        (command,) = [c["input"]["command"] for c in s["calls"]]
        assert command.startswith("bash /") and command.endswith("/solution/solve.sh") and command != "bash /solution/solve.sh" and s["results"][0]["is_error"] is False
    hello = by_task["hello-file"]
    assert tree(ran["db"], hello["final"]) == {"hello.txt": b"Hello, world!\n"}
    fixed = by_task["fix-the-sum"]
    assert "fixed by" in fixed["results"][0]["output"]  # solution.env reached the script
    assert tree(ran["db"], fixed["final"])["total.py"] == b"print(sum(range(1, 11)))\n"


def test_the_controls_hold_when_graded_live(ran: dict[str, Any]):
    """Graded by each task's tests/test.sh (the grade side, merged from branch taskgrade)."""
    assert ran["oracle"]["outcomes"] == {"oracle@latest reference": {"passed": len(TASKS)}}
    noop = ran["noop"]["outcomes"]["mock@latest noop"]
    assert sum(noop.values()) == len(TASKS) and set(noop) <= {"no_changes", "failed"}


def test_the_noop_changes_nothing(ran: dict[str, Any]):
    for s in sessions(ran["db"], ran["noop"]["run_id"]):
        assert s["row"].model == "mock-noop" and not s["calls"] and tree(ran["db"], s["final"]) == copied(ran["folder"] / s["row"].scenario)


def copied(task: Path) -> dict[str, bytes]:
    """What a fixture's Dockerfile COPYs into /app (fix-the-sum's total.py, the sum to fix; the
    others copy nothing), read from the fixture itself."""
    lines = (task / "environment" / "Dockerfile").read_text().splitlines()
    return {dest.removeprefix("/app/"): (task / "environment" / src).read_bytes() for src, dest in (line.split()[1:3] for line in lines if line.startswith("COPY "))}


def test_the_preview_says_the_tasks_are_unvalidated_and_an_edited_task_is_a_new_cell(ran: dict[str, Any]):
    folder = ran["folder"]
    again = run_json(benchtape("run", str(folder), "--harness", "oracle", "--dry-run", "--json", "--db", str(ran["db"]), cwd=ran["top"]))
    assert again["measured"] == len(TASKS) and again["to_run"] == 0  # recorded once: asked again, re-graded
    assert {s["id"] for s in again["unvalidated_run"]} == set(TASKS) and again["skipped"] == []
    (folder / "hello-file" / "instruction.md").write_text((folder / "hello-file" / "instruction.md").read_text() + "\nNo other files.\n")
    edited = run_json(benchtape("run", str(folder), "--harness", "oracle", "--dry-run", "--json", "--db", str(ran["db"]), cwd=ran["top"]))
    assert edited["measured"] == len(TASKS) - 1 and edited["to_run"] == 1


def test_at_level_home_a_task_naming_its_working_directory_is_said_before_the_run(ran: dict[str, Any], tmp_path: Path):
    """At level home the agent's workspace is a folder of its own, never /app: a task whose
    instruction (or solve.sh) writes there is said before anything runs, with the level that
    runs it as Harbor does; the tasks that name no such path are not."""
    folder = tmp_path / "tasks"
    shutil.copytree(FIXTURES, folder)
    (folder / "hello-file" / "instruction.md").write_text("Create /app/hello.txt containing exactly the line `Hello, world!`.\n")
    preview = run_json(benchtape("run", str(folder), "--harness", "oracle", "--dry-run", "--json", "--db", str(tmp_path / "p.db"), cwd=tmp_path))
    (note,) = [n for n in preview["notes"] if n.startswith("level home:")]
    assert "hello-file (/app)" in note and "--sandbox container" in note and "fix-the-sum" not in note
    # what level home does not apply of a Dockerfile is said too (a `task export --format harbor`
    # task's venv, copied in and put on PATH: its oracle failed at home, read as a broken task)
    assert not [n for n in preview["notes"] if n.startswith("level home applies")]
    dockerfile = folder / "two-files-partial" / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "COPY host/ /\nENV PATH=/opt/venv/bin:$PATH\nRUN pip install pytest\n")
    preview = run_json(benchtape("run", str(folder), "--harness", "oracle", "--dry-run", "--json", "--db", str(tmp_path / "p.db"), cwd=tmp_path))
    (unapplied,) = [n for n in preview["notes"] if n.startswith("level home applies")]
    assert "two-files-partial (1 COPY, 1 ENV, 1 RUN) not applied" in unapplied and "--sandbox container" in unapplied and "hello-file" not in unapplied, unapplied
    from benchtape.sandbox.container import available

    if not available()[0]:
        return  # the container half needs an engine (CI has one)
    container = run_json(benchtape("run", str(folder), "--harness", "oracle", "--sandbox", "container", "--dry-run", "--json", "--db", str(tmp_path / "p.db"), cwd=tmp_path))
    assert not [n for n in container.get("notes", []) if n.startswith("level home:")]


def test_the_run_needs_a_harness_and_narrows_with_task(ran: dict[str, Any]):
    done = benchtape("run", str(ran["folder"]), "--dry-run", cwd=ran["top"])
    assert done.returncode == 2 and "--harness oracle" in done.stderr
    one = run_json(benchtape("run", str(ran["folder"]), "--harness", "mock", "--model", "noop", "--task", "hello-file", "--dry-run", "--json", "--db", str(ran["db"]), cwd=ran["top"]))
    assert one["tasks"] == ["hello-file"] and one["cells"] == 1


def test_one_bad_task_toml_in_a_dataset_skips_that_task_and_says_why_the_rest_run(ran: dict[str, Any], tmp_path: Path):
    """A newcomer on a Terminal-Bench 2.1 checkout: one task.toml benchtape cannot honour (here
    an allowlist) stopped `run DIR` for every task, `--task` of another one too. That task is
    skipped now, named with its file, line and fix, and the others run; a dataset whose every
    task is refused is still bad input, the first task's refusal by its line."""
    folder = shutil.copytree(ran["folder"], tmp_path / "dataset")
    bad = folder / "hello-file" / "task.toml"
    bad.write_text(bad.read_text().replace("allow_internet = false", 'network_mode = "allowlist"\nallowed_hosts = ["pypi.org"]'))
    preview = run_json(benchtape("run", str(folder), "--harness", "oracle", "--dry-run", "--json", "--db", str(tmp_path / "p.db"), cwd=tmp_path))
    assert sorted(preview["tasks"]) == sorted(set(TASKS) - {"hello-file"}), preview["tasks"]
    (skipped,) = preview["skipped"]
    assert skipped["id"] == "hello-file" and skipped["state"] == "broken" and f"{bad}:" in skipped["why"] and "allowed_hosts" in skipped["why"], skipped
    done = benchtape("run", str(folder), "--harness", "oracle", "--task", "fix-the-sum", "--yes", "--json", "--db", str(tmp_path / "p.db"), cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and list(json.loads(done.stdout)["outcomes"].values()) == [{"passed": 1}], done.stdout[-2000:] + done.stderr[-2000:]
    for name in set(TASKS) - {"hello-file"}:
        shutil.rmtree(folder / name)
    refused = benchtape("run", str(folder), "--harness", "oracle", "--dry-run", cwd=tmp_path)
    assert refused.returncode == 2 and f"{bad}:" in refused.stderr and "allowed_hosts" in refused.stderr, refused.stderr  # the task's own refusal, by its line


def test_at_level_container_the_workspace_starts_from_the_environments_workdir(ran: dict[str, Any]):
    """One container test: the task's environment/Dockerfile is built (FROM benchtape's base
    image, network off), the agent's workspace starts from its WORKDIR (the COPYed total.py),
    and the oracle's solve.sh runs in it."""
    from benchtape.sandbox.container import available

    if not available()[0]:
        pytest.skip("no container engine answers")
    db = ran["top"] / "container.db"
    done = run_json(benchtape("run", str(ran["folder"]), "--harness", "oracle", "--sandbox", "container", "--task", "fix-the-sum", "--yes", "--json", "--db", str(db), cwd=ran["top"], timeout=900))
    (s,) = sessions(db, done["run_id"])
    assert s["started"]["sandbox"] == "container" and s["started"]["task"]["id"] == "fix-the-sum"
    before, after = tree(db, s["baseline"]), tree(db, s["final"])
    assert before["total.py"] == (FIXTURES / "fix-the-sum" / "environment" / "total.py").read_bytes()
    assert after["total.py"] == b"print(sum(range(1, 11)))\n" and "fixed by oracle" in s["results"][0]["output"]


def test_harbor_tasks_need_no_git_repository_but_mining_history_does(tmp_path: Path):
    """A folder of Harbor tasks (.benchtape/tasks/, no git) is listed and validated; scan, which
    mines history, still needs a work tree, and says so."""
    import json

    from benchtape.tasks.gitlog import GitError, git

    top = tmp_path / "harbor-only"
    shutil.copytree(FIXTURES / "hello-file", top / ".benchtape" / "tasks" / "hello-file")
    try:
        git(top, ["rev-parse", "--show-toplevel"])
        pytest.skip("the temporary folder is inside a git work tree here")
    except GitError:
        pass
    listed = benchtape("task", "list", "--json", cwd=top / ".benchtape")  # from below the project too
    assert listed.returncode == 0, listed.stderr
    assert "hello-file" in json.dumps(json.loads(listed.stdout))
    scan = benchtape("task", "scan", cwd=top)
    assert scan.returncode == 2 and "is not inside a git repository" in scan.stderr
    if os.geteuid() == 0:  # a .benchtape/ someone else left in a parent folder (/tmp's) is never taken up and run
        os.chown(top / ".benchtape", 65534, 65534)
        theirs = benchtape("task", "list", cwd=top)
        assert theirs.returncode == 2 and "not inside a git repository" in theirs.stderr, theirs.stdout


def test_the_network_consent_names_the_task_toml_key_that_asked_for_it(tmp_path: Path):
    """A Harbor task that gives its agent the network is refused without --allow-network by the
    key and line of task.toml that asked for it, not by a bench's `network: bridge`."""
    folder = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "hello-file", folder / "hello-file")
    toml = folder / "hello-file" / "task.toml"
    lines = toml.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("allow_internet"))
    lines[at] = "allow_internet = true"
    toml.write_text("\n".join(lines) + "\n")
    done = benchtape("run", str(folder), "--harness", "oracle", "--sandbox", "container", "--dry-run", "--db", str(tmp_path / "n.db"), cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"{toml}:{at + 1}: [environment] allow_internet = true gives the agent" in done.stderr and "--allow-network" in done.stderr
    assert "`network: bridge`" not in done.stderr


def test_at_level_container_the_agent_and_the_verifier_run_as_task_tomls_users(tmp_path: Path):
    """`[agent] user` and `[verifier] user` (as Harbor's own templates write them) are honoured
    in a container: solve.sh runs as the agent's user with /solution made for it, tests/test.sh
    as the verifier's, which may write its reward (/logs/verifier is everyone's, as Harbor
    makes it); validation and a run agree."""
    import json

    from benchtape.sandbox.container import available

    if not available()[0]:
        pytest.skip("no container engine answers")
    folder = tmp_path / ".benchtape" / "tasks" / "as-users"
    shutil.copytree(FIXTURES / "hello-file", folder)
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\n", "[agent]\nuser = 1000\n").replace("[verifier]\n", "[verifier]\nuser = 1001\n"))
    (folder / "solution" / "solve.sh").write_text('#!/bin/bash\ntest -f /solution/solve.sh && id -u > /app/uid.txt && printf "Hello, world!\\n" > /app/hello.txt\n')
    (folder / "tests" / "test.sh").write_text(
        '#!/bin/bash\nif [ "$(cat /app/uid.txt)" = 1000 ] && [ "$(id -u)" = 1001 ] && [ "$(cat /app/hello.txt)" = "Hello, world!" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n'
    )
    validated = benchtape("task", "validate", "as-users", "--sandbox", "container", "--json", "--db", str(tmp_path / "v.db"), cwd=tmp_path, timeout=600)
    assert validated.returncode == 0, validated.stdout[-2000:] + validated.stderr[-2000:]
    (report,) = json.loads(validated.stdout)["tasks"]
    assert report["validated"] and any("agent.user = 1000" in n for n in report.get("notes", [])), report
    run = run_json(benchtape("run", str(folder.parent), "--harness", "oracle", "--sandbox", "container", "--yes", "--json", "--db", str(tmp_path / "r.db"), cwd=tmp_path, timeout=600))
    assert run["outcomes"] == {"oracle@latest reference": {"passed": 1}}, json.dumps(run)[-2000:]
