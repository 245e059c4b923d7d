"""Issue 47, multi-step Harbor tasks (`[[steps]]`): folders made by the REAL `harbor task init
--steps 2` (Harbor 0.25) and filled in run under benchtape's oracle and no-op with the outcome
the real `harbor run -a oracle|nop` gives them: each step a session of its own (its
instruction, its workdir/ and setup.sh), each step's verifier on the workspace as that step
left it, the rewards combined as Harbor combines them (`multi_step_reward_strategy`, mean by
default), `min_reward` stopping the steps after a step that falls short."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from formatskit import benchtape
from harborkit import harbor, harbor_environment, harbor_run

from benchtape.sandbox.harbor_env import can_map_paths
from benchtape.sandbox.harbor_steps import combine, gate
from benchtape.spec.harbor_task import load_harbor_task
from benchtape.store.database import Store

home_only = pytest.mark.skipif(not can_map_paths(), reason="Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")

HELLO_TEST = '#!/bin/bash\nif [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'
BOTH_TEST = '#!/bin/bash\nif [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ] && [ "$(cat /app/bye.txt 2>/dev/null)" = "Goodbye!" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'
# step 1 of `staged`: its workdir/ brought greeting.txt, which the verifier needs too
GREETING_TEST = '#!/bin/bash\nif [ -f /app/greeting.txt ] && [ "$(cat /app/hello.txt 2>/dev/null)" = "$(cat /app/greeting.txt)" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'
# step 2 of `staged`: its workdir/ brought data.txt and setup.sh wrote seed.txt; the agent sums them
SUM_TEST = """#!/bin/bash
ok=0; [ -f seed.txt ] && [ -f hello.txt ] && [ "$(cat sum.txt 2>/dev/null)" = "$(( $(cat data.txt) + $(cat seed.txt) ))" ] && ok=1
printf '{"reward": %s, "seeded": %s}' "$ok" "$([ -f seed.txt ] && echo 1 || echo 0)" > /logs/verifier/reward.json
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _init(top: Path, name: str, *extra: str) -> Path:
    done = harbor("task", "init", f"bench/{name}", "-p", top, "--no-package", "--steps", "2", *extra, cwd=top)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = top / name
    for cache in folder.rglob("__pycache__"):  # Harbor's template ships compiled test files
        shutil.rmtree(cache)
    return folder


def _step(folder: Path, name: str, instruction: str, test: str, solve: str) -> None:
    _write(folder / "steps" / name / "instruction.md", instruction + "\n")
    _write(folder / "steps" / name / "tests" / "test.sh", test)
    _write(folder / "steps" / name / "solution" / "solve.sh", f"#!/bin/bash\n{solve}\n")


def make_tasks(top: Path) -> Path:
    """Three tasks as `harbor task init --steps 2` writes them, filled in:
    - twostep: Harbor's default separate verifier per step (steps/<name>/tests/Dockerfile),
      handed the task's artifacts; the oracle passes both steps;
    - staged: shared verifier; step 1's workdir/ brings greeting.txt (its verifier needs it), step 2's data.txt and its setup.sh writes
      seed.txt; a reward.json of two keys; step 1's min_reward = 1 (the no-op stops there);
    - halfway: step 2's solution undoes step 1's work: step rewards 1 then 0, the mean 0.5."""
    tasks = top / "tasks"
    tasks.mkdir()
    twostep = _init(tasks, "twostep")
    _step(twostep, "step-1", "Write hello.txt in the working directory, holding `Hello, world!`.", HELLO_TEST, 'echo "Hello, world!" > hello.txt')
    _step(twostep, "step-2", "Now also write bye.txt holding `Goodbye!`; keep hello.txt.", BOTH_TEST, 'echo "Goodbye!" > bye.txt')
    toml = twostep / "task.toml"
    # and the environment's healthcheck, passed before the first step's agent (under Harbor too)
    toml.write_text(toml.read_text().replace("artifacts = []", 'artifacts = ["/app/hello.txt", "/app/bye.txt"]', 1) + '\n[environment.healthcheck]\ncommand = "test -w . && command -v bash"\ninterval_sec = 1.0\n')

    staged = _init(tasks, "staged", "--verifier-mode", "shared")
    _step(staged, "step-1", "Copy greeting.txt to hello.txt.", GREETING_TEST, "cp greeting.txt hello.txt")
    _write(staged / "steps" / "step-1" / "workdir" / "greeting.txt", "Hello, world!\n")
    _step(staged, "step-2", "Write into sum.txt the sum of the numbers in data.txt and seed.txt.", SUM_TEST, "echo $(( $(cat data.txt) + $(cat seed.txt) )) > sum.txt")
    _write(staged / "steps" / "step-2" / "workdir" / "data.txt", "40\n")
    _write(staged / "steps" / "step-2" / "workdir" / "setup.sh", "#!/bin/bash\necho 2 > seed.txt\n")
    toml = staged / "task.toml"
    text = toml.read_text()
    # step 2's healthcheck needs what its setup.sh wrote: it runs after setup.sh, before the agent (Harbor's order)
    toml.write_text(text.replace('name = "step-1"\n', 'name = "step-1"\nmin_reward = 1.0\n', 1).replace('name = "step-2"\n', 'name = "step-2"\nhealthcheck = { command = "test -f seed.txt", interval_sec = 1.0 }\n', 1))

    halfway = _init(tasks, "halfway", "--verifier-mode", "shared")
    _step(halfway, "step-1", "Write hello.txt in the working directory, holding `Hello, world!`.", HELLO_TEST, 'echo "Hello, world!" > hello.txt')
    _step(halfway, "step-2", "Now also write bye.txt holding `Goodbye!`; keep hello.txt.", BOTH_TEST, 'echo "Goodbye!" > bye.txt\nrm hello.txt')
    return tasks


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("harbor-steps")
    return {"top": top, "tasks": make_tasks(top)}


@pytest.fixture(scope="module")
def ran(made: dict[str, Any]) -> dict[str, Any]:
    if not can_map_paths():
        pytest.skip("Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")
    db = made["top"] / "t.db"
    runs = {}
    for agent, args in {"oracle": ["--harness", "oracle"], "noop": ["--harness", "mock", "--model", "noop"]}.items():
        done = benchtape("run", made["tasks"], *args, "--yes", "--json", "--db", db, cwd=made["top"], timeout=600)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
        runs[agent] = json.loads(done.stdout)["run_id"]
    return {**made, "db": db, "runs": runs}


def _graded(db: Path, run_id: str) -> dict[str, dict[str, Any]]:
    """Task id → its cell's outcome, the evidence of its task:verify verdict and its sessions (by step)."""
    from benchtape.replay.query import latest_verdicts

    store = Store(db, readonly=True)
    try:
        rows = list(store.session_rows(run_id=run_id))
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            entry = out.setdefault(r.scenario, {"sessions": []})
            session = store.load_session(r.id)
            entry["sessions"].append({"id": r.id, "parent": r.parent_session, "step": (session.task or {}).get("step"), "prompt": session.prompt, "calls": [c.input for c in session.calls], "cell": session.started.get("cell") or {}})
            if r.parent_session is None:
                entry["outcome"] = store.outcomes([r.id])[r.id][-1]["outcome"]
            verdicts = latest_verdicts(store, r.id)
            if verdicts:
                entry["evidence"] = verdicts[-1].get("evidence") or {}
        return out
    finally:
        store.close()


# ---------------------------------------------------------------- what Harbor writes, read


def test_harbor_init_steps_is_read_step_by_step(made: dict[str, Any]) -> None:
    task = load_harbor_task(made["tasks"] / "twostep")
    runtime = task.runtime
    assert runtime is not None and [s.name for s in runtime.steps] == ["step-1", "step-2"] and runtime.reward_strategy == "mean"
    one, two = runtime.steps
    folder = made["tasks"] / "twostep"
    assert one.prompt_path == folder / "steps" / "step-1" / "instruction.md" and task.prompt_path == one.prompt_path
    assert one.verifier_separate and one.verifier_dockerfile == folder / "steps" / "step-1" / "tests" / "Dockerfile" and one.verifier_workdir == "/app"
    assert one.tests_dirs == (folder / "steps" / "step-1" / "tests",)  # its verifier image holds its own tests, as Harbor builds it
    assert two.solution == folder / "steps" / "step-2" / "solution" / "solve.sh" and two.artifacts == ("/app/hello.txt", "/app/bye.txt")
    staged = load_harbor_task(made["tasks"] / "staged").runtime
    assert staged is not None
    first, second = staged.steps
    assert not first.verifier_separate and first.min_reward == (("reward", 1.0),) and second.min_reward == ()
    assert second.workdir == made["tasks"] / "staged" / "steps" / "step-2" / "workdir" and second.setup_script is not None


def test_what_a_step_asks_that_cannot_be_honoured_is_refused_by_its_line(made: dict[str, Any], tmp_path: Path) -> None:
    from benchtape.core.errors import BadInput

    folder = shutil.copytree(made["tasks"] / "staged", tmp_path / "staged")
    toml = folder / "task.toml"
    base = toml.read_text()
    second = base.index('name = "step-2"')
    cases = {
        "agent.user": ("[steps.verifier]\n", '[steps.agent]\nuser = "builder"\n[steps.verifier]\n', "user", "the task's [agent] user"),
        "agent.user 0": ("[steps.verifier]\n", "[steps.agent]\nuser = 0\n[steps.verifier]\n", "user", "the task's [agent] user"),  # a uid 0 is a user, not "unset"
        "verifier.collect": ("collect = []", 'collect = ["dump"]', "collect", "start of tests/test.sh"),
        "agent.network_mode": ("[steps.verifier]\n", '[steps.agent]\nnetwork_mode = "no-network"\n[steps.verifier]\n', "network_mode", "for the whole task"),
        "healthcheck": ("interval_sec = 1.0 }", "retries = 0 }", "healthcheck", "retries = 3"),  # honoured, its fields checked (tests/formats/test_harbor_healthcheck.py)
        "min_reward": ('name = "step-2"', 'name = "step-2"\nmin_reward = "high"', "min_reward", "min_reward = 1.0"),
    }
    for case, (old, new, key, fix) in cases.items():
        text = base[:second] + base[second:].replace(old, new, 1)  # in the second step's part of the file
        toml.write_text(text)
        with pytest.raises(BadInput) as err:
            load_harbor_task(folder)
        assert "step 'step-2'" in err.value.what and key in err.value.what, case
        assert fix in (err.value.fix or ""), (case, err.value.fix)
        line = text.splitlines()[err.value.line - 1] if err.value.line else ""
        assert line.split("=")[0].strip() == key, (case, line)  # the line that asks for it, in the second step
    same = base[:second] + base[second:].replace("[steps.verifier]\n", '[steps.agent]\nnetwork_mode = "public"\ntimeout_sec = 30.0\n[steps.verifier]\n', 1)
    toml.write_text(same)  # the task's own network, said again for a step: honoured, as is the step's own time limit
    runtime = load_harbor_task(folder).runtime
    assert runtime is not None and runtime.steps[1].agent_timeout == 30.0 and runtime.steps[0].agent_timeout == 600.0
    task_user = base.replace("[agent]\ntimeout_sec = 600.0\n", '[agent]\ntimeout_sec = 600.0\nuser = "builder"\n', 1)
    assert task_user != base
    second_user = task_user.index('name = "step-2"')
    toml.write_text(task_user[:second_user] + task_user[second_user:].replace("[steps.verifier]\n", '[steps.agent]\nuser = "builder"\n[steps.verifier]\n', 1))
    runtime = load_harbor_task(folder).runtime  # the task's own user, said again for a step: honoured
    assert runtime is not None and runtime.agent_user == "builder"
    toml.write_text(base)
    (folder / "steps" / "step-2" / "instruction.md").unlink()
    with pytest.raises(BadInput) as err:
        load_harbor_task(folder)
    assert "steps/step-2/instruction.md is missing" in err.value.what and err.value.file == str(folder / "steps" / "step-2" / "instruction.md")


@home_only
def test_task_validate_plays_the_steps_and_a_workflow_setup_on_them_is_refused(made: dict[str, Any], tmp_path: Path) -> None:
    """`task validate` plays the no-op and the oracle step by step (each step verified, the
    rewards combined); a workflow setup on the validated multi-step task is refused before
    anything runs (exit 2, no store): a task step would need every workflow step."""
    import subprocess

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(made["tasks"] / "staged", repo / ".benchtape" / "tasks" / "staged")
    done = benchtape("task", "validate", "staged", "--sandbox", "home", "--json", cwd=repo, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (report,) = json.loads(done.stdout)["tasks"]
    phases = report["phases"]
    assert report["validated"] and (phases["base"]["reward"], phases["reference"]["reward"]) == (0.0, 1.0), report
    assert "step-2 not run" not in phases["reference"]["detail"] and "below its min_reward 1" in phases["base"]["detail"], phases  # the no-op stops at step 1
    _write(repo / ".benchtape" / "tools" / "review.yaml", "apiVersion: bench.ber.run/v1alpha1\nkind: Workflow\ntool: review\ntype: workflow\nsteps:\n  - {name: draft, tool: mock, model: noop}\n  - {name: check, tool: mock, model: noop}\n")
    _write(repo / ".benchtape" / "evaluations" / "e.yaml", "apiVersion: bench.ber.run/v1alpha1\nkind: Evaluation\ntasks: [staged]\ntools:\n  - tool: review\n")
    done = benchtape("run", "e", "--yes", "--db", tmp_path / "w.db", cwd=repo, timeout=120)
    assert done.returncode == 2 and "workflow" in done.stderr and "multi-step Harbor task 'staged'" in done.stderr, done.stderr
    assert not (tmp_path / "w.db").exists()
    shutil.rmtree(repo / ".benchtape" / "tasks" / "staged" / "steps" / "step-2" / "solution")
    done = benchtape("task", "validate", "staged", "--sandbox", "home", "--json", cwd=repo, timeout=600)
    (report,) = json.loads(done.stdout)["tasks"]
    assert not report["validated"] and "step(s) step-2 have no steps/<name>/solution/solve.sh" in report["refused"], report


# ---------------------------------------------------------------- the rewards, combined as Harbor combines them


def test_mean_averages_each_key_over_the_steps_that_gave_rewards_and_final_takes_the_last() -> None:
    assert combine([{"reward": 1.0}, {"reward": 0.0}], "mean") == {"reward": 0.5}
    assert combine([{"a": 1.0, "b": 1.0}, {"a": 0.5}], "mean") == {"a": 0.75, "b": 0.5}  # a key a step did not write counts 0
    assert combine([{"reward": 1.0}, None], "mean") == {"reward": 1.0}  # a step with no reward is left out of the mean
    assert combine([{"reward": 1.0}, {"reward": 0.25}], "final") == {"reward": 0.25}
    assert combine([{"reward": 1.0}, None], "final") is None and combine([None], "mean") is None


def test_min_reward_stops_the_steps_after_a_step_below_it() -> None:
    from benchtape.spec.task import HarborStep

    step = HarborStep(name="one", prompt_path=Path("i.md"), tests_dirs=(), min_reward=(("reward", 1.0),))
    assert gate(step, {"reward": 1.0}) is None and "below its min_reward 1" in (gate(step, {"reward": 0.5}) or "")
    keyed = HarborStep(name="one", prompt_path=Path("i.md"), tests_dirs=(), min_reward=(("tests", 0.5),))
    assert gate(keyed, {"tests": 0.5}) is None and "tests -inf" in (gate(keyed, {"reward": 1.0}) or "")  # a named key not written: below any threshold
    assert "gave no reward" in (gate(HarborStep(name="one", prompt_path=Path("i.md"), tests_dirs=()), None) or "")


# ---------------------------------------------------------------- benchtape's oracle and no-op


@home_only
def test_each_step_is_a_session_of_its_own_with_its_instruction(ran: dict[str, Any]) -> None:
    staged = _graded(ran["db"], ran["runs"]["oracle"])["staged"]
    one, two = staged["sessions"]
    assert one["parent"] is None and two["parent"] == one["id"]
    assert (one["step"]["name"], one["step"]["index"], one["step"]["of"], one["step"]["earlier"]) == ("step-1", 0, 2, [])
    assert (two["step"]["name"], two["step"]["earlier"]) == ("step-2", [one["id"]])
    assert two["prompt"].startswith("Write into sum.txt") and one["prompt"].startswith("Copy greeting.txt")
    assert one["step"]["prelude"] == ["greeting.txt"] and two["step"]["prelude"] == ["data.txt", "seed.txt", "setup.sh"]
    assert two["step"]["setup"]["exit_code"] == 0 and two["step"]["setup"]["command"].endswith("bash setup.sh")
    # step 2's healthcheck ran after its setup.sh (which wrote seed.txt), before its agent: passed at once, on record
    assert (two["step"]["healthcheck"]["ok"], two["step"]["healthcheck"]["attempts"], two["step"]["healthcheck"]["command"]) == (True, 1, "test -f seed.txt")
    assert "healthcheck" not in one["step"] and "healthcheck" not in one["cell"]
    twostep = _graded(ran["db"], ran["runs"]["oracle"])["twostep"]["sessions"][0]
    assert twostep["cell"]["healthcheck"]["ok"] and twostep["cell"]["healthcheck"]["attempts"] == 1 and twostep["cell"]["healthcheck"]["command"] == "test -w . && command -v bash", twostep["cell"].get("healthcheck")  # the environment's, before step 1
    assert ["solve.sh" in json.dumps(c) for s in (one, two) for c in s["calls"]] == [True, True]  # each step's own solution, in its own session


@home_only
def test_the_oracle_passes_and_the_noop_fails_each_as_harbor_combines_the_steps(ran: dict[str, Any]) -> None:
    oracle, noop = (_graded(ran["db"], ran["runs"][k]) for k in ("oracle", "noop"))
    assert oracle["twostep"]["outcome"] == "passed" and [s["reward"] for s in oracle["twostep"]["evidence"]["steps"]] == [1.0, 1.0]
    staged = oracle["staged"]["evidence"]
    assert oracle["staged"]["outcome"] == "passed" and staged["rewards"] == {"reward": 1.0, "seeded": 0.5}, staged  # each key's mean: step 1 wrote no `seeded` (0 for it); `reward` decides
    half = oracle["halfway"]
    assert half["outcome"] == "failed" and half["evidence"]["reward"] == 0.5 and "mean over the steps: step-1 1, step-2 0" in half["evidence"]["detail"]
    assert noop["twostep"]["outcome"] == "no_changes" and noop["halfway"]["outcome"] == "no_changes"
    stopped = noop["staged"]  # its step 2's workdir files went in, so the verifier ran: step 1 below min_reward stops there
    assert stopped["outcome"] == "failed" and stopped["evidence"]["not_run"] == ["step-2"] and "below its min_reward 1" in stopped["evidence"]["stopped"]


@home_only
def test_a_later_step_that_cannot_start_is_never_reached_after_a_step_below_its_min_reward(tmp_path: Path) -> None:
    """harbor-cookbook's multi-step recipe: step 2's healthcheck needs what step 1 made. Harbor
    verifies step 1 before starting step 2, so an agent below step 1's min_reward never reaches
    that healthcheck and is scored as step 1 left it; benchtape ran the healthcheck anyway and
    recorded every such agent (the no-op control too) as an infrastructure_error, never measured.
    A step 2 that cannot start after step 1 passed is still the environment's error."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    gated = _init(tasks, "gated", "--verifier-mode", "shared")
    _step(gated, "step-1", "Write hello.txt in the working directory, holding `Hello, world!`.", HELLO_TEST, 'echo "Hello, world!" > hello.txt')
    _step(gated, "step-2", "Now also write bye.txt holding `Goodbye!`; keep hello.txt.", BOTH_TEST, 'echo "Goodbye!" > bye.txt')
    toml = gated / "task.toml"
    check = 'healthcheck = {{ command = "{}", interval_sec = 0.2, retries = 1 }}\n'
    toml.write_text(toml.read_text().replace('name = "step-1"\n', 'name = "step-1"\nmin_reward = 1.0\n', 1).replace('name = "step-2"\n', 'name = "step-2"\n' + check.format("test -f hello.txt"), 1))
    broken = shutil.copytree(gated, tasks / "broken")  # step 2's healthcheck fails whatever step 1 did
    (broken / "task.toml").write_text((gated / "task.toml").read_text().replace("test -f hello.txt", "test -f never.txt"))
    db = tmp_path / "t.db"
    graded = {}
    for agent, args in {"oracle": ["--harness", "oracle"], "noop": ["--harness", "mock", "--model", "noop"]}.items():
        done = benchtape("run", tasks, *args, "--yes", "--json", "--db", db, cwd=tmp_path, timeout=600)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
        graded[agent] = _graded(db, json.loads(done.stdout)["run_id"])
    assert graded["oracle"]["gated"]["outcome"] == "passed", graded["oracle"]["gated"]["evidence"].get("detail")
    stopped = graded["noop"]["gated"]
    assert stopped["outcome"] == "no_changes" or stopped["outcome"] == "failed", stopped
    assert stopped["evidence"]["not_run"] == ["step-2"] and "below its min_reward 1" in stopped["evidence"]["stopped"], stopped["evidence"]
    assert stopped["evidence"]["unstarted"]["step"] == "step-2" and "test -f hello.txt" in stopped["evidence"]["unstarted"]["why"], stopped["evidence"]
    assert graded["noop"]["broken"]["outcome"] == stopped["outcome"]  # the no-op never reaches step 2 either
    unreached = graded["oracle"]["broken"]
    assert unreached["outcome"] == "infrastructure_error" and unreached["evidence"]["unstarted"]["step"] == "step-2" and "never.txt" in unreached["evidence"]["unstarted"]["why"], unreached["outcome"]
    assert unreached["evidence"]["not_run"] == ["step-2"] and [s["reward"] for s in unreached["evidence"]["steps"]] == [1.0]  # step 1 verified and passed its gate


@home_only
def test_the_real_claude_code_runs_each_step_afresh_with_its_instruction(made: dict[str, Any], tmp_path: Path) -> None:
    """Any agent, not only the controls: the real Claude Code (the scripted model, which has no
    script for a Harbor task: it only answers) is started once per step, each its own session
    given that step's instruction; what it wrote into its HOME before starting is never counted
    as a change, so it is graded no_changes, as a no-op agent is."""
    from realagents import TOOLS, need

    from benchtape.tools.binaries import resolve

    need("claude-code")
    version = resolve("claude-code", root=TOOLS).version
    _write(tmp_path / ".benchtape" / "tools" / "claude-code.yaml", f'apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: claude-code\nextends: builtin\nversion: "{version}"\n')
    db = tmp_path / "cc.db"
    done = benchtape("run", made["tasks"], "--task", "twostep", "--harness", "claude-code", "--model", "scripted", "--yes", "--json", "--db", db, cwd=tmp_path, env={"BENCHTAPE_TOOLS": str(TOOLS)}, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    graded = _graded(db, json.loads(done.stdout)["run_id"])["twostep"]
    assert graded["outcome"] == "no_changes", graded
    one, two = graded["sessions"]
    assert (one["step"]["name"], two["step"]["name"], two["parent"]) == ("step-1", "step-2", one["id"])
    assert one["prompt"].startswith("Write hello.txt") and two["prompt"].startswith("Now also write bye.txt")
    store = Store(db, readonly=True)
    try:
        for s in (one, two):
            session = store.load_session(s["id"])
            assert session.harness == "claude-code" and (session.started.get("binary") or {}).get("version") == version
    finally:
        store.close()


# ---------------------------------------------------------------- the real Harbor, on the same folders


def test_the_real_harbor_gives_the_same_outcomes(ran: dict[str, Any]) -> None:
    """`harbor run -a oracle` on each folder (their Dockerfiles pointed at a local image: nothing
    is pulled), Harbor's step rewards and combined reward against benchtape's verdict. The no-op
    under the real Harbor is test_harbor_export's (each of Harbor's trials costs ~20 s of CPU
    here: podman-compose starts Python ~50 times); benchtape's own no-op on these steps is
    test_the_oracle_passes_and_the_noop_fails_each_as_harbor_combines_the_steps."""
    from benchtape.sandbox.baseimage import BASE_IMAGE, ensure_base_image
    from benchtape.sandbox.container import available, connect

    ok, why = available()
    if not ok:
        pytest.skip(f"harbor run NOT RUN: no Docker engine to take the base image from: {why}")
    ensure_base_image(connect())
    top = ran["top"] / "real"
    tasks = shutil.copytree(ran["tasks"], top / "tasks")
    for dockerfile in tasks.rglob("Dockerfile"):
        dockerfile.write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\nSTOPSIGNAL SIGKILL\n" + ("COPY . /tests/\n" if dockerfile.parent.name == "tests" else ""))
    env, extra = harbor_environment([BASE_IMAGE], top)
    ours = {"oracle": _graded(ran["db"], ran["runs"]["oracle"])}
    by_agent = harbor_run(tasks, ["oracle"], top / "jobs", extra=extra, env=env, cwd=top)  # the three folders as one dataset
    assert list(by_agent) == ["oracle"]
    for agent, trials in by_agent.items():
        assert sorted(trials) == ["halfway", "staged", "twostep"], (agent, sorted(trials))
        for name, trial in trials.items():
            rewards = (trial.get("verifier_result") or {}).get("rewards") or {}
            theirs = rewards.get("reward", min(rewards.values()) if rewards else 0.0)
            mine = ours[agent][name]
            passed = mine["outcome"] == "passed"
            assert (theirs >= 1.0) == passed, (name, agent, rewards, mine["outcome"])
            their_steps = [(s["step_name"], (s.get("verifier_result") or {}).get("rewards")) for s in trial.get("step_results") or []]
            evidence = mine.get("evidence") or {}
            assert evidence.get("steps") is not None, (name, mine)  # the oracle changed the workspace: each step verified
            # step by step: the same steps verified, the same rewards, combined alike
            assert their_steps == [(d["name"], d["rewards"]) for d in evidence["steps"]], (name, agent, their_steps, evidence["steps"])
            assert rewards == evidence["rewards"], (name, agent, rewards, evidence["rewards"])


# ---------------------------------------------------------------- level container


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_each_step_has_its_own_verifier_image(made: dict[str, Any], tmp_path: Path) -> None:
    """`--sandbox container`: the agent's environment from environment/Dockerfile, its
    workspace at the image's WORKDIR (/app) and the oracle's solution at /solution, as Harbor
    has them; each step's separate verifier from its own steps/<name>/tests/Dockerfile,
    setup.sh run in the agent's container; the outcomes as at level home (and as under Harbor)."""
    from benchtape.sandbox.baseimage import BASE_IMAGE
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: the steps at level container NOT RUN: {why}")
    tasks = shutil.copytree(made["tasks"], tmp_path / "tasks")
    for dockerfile in tasks.rglob("Dockerfile"):
        dockerfile.write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\nSTOPSIGNAL SIGKILL\n" + ("COPY . /tests/\n" if dockerfile.parent.name == "tests" else ""))
    for toml in tasks.glob("*/task.toml"):  # no network: nothing to consent to
        toml.write_text(toml.read_text().replace('network_mode = "public"', 'network_mode = "no-network"'))
    # as most real tasks write it: the working directory by its absolute path, the solution's folder at /solution
    (tasks / "twostep" / "steps" / "step-1" / "solution" / "solve.sh").write_text('#!/bin/bash\ntest -f /solution/solve.sh && echo "Hello, world!" > /app/hello.txt\n')
    done = benchtape("run", tasks, "--harness", "oracle", "--sandbox", "container", "--yes", "--json", "--db", tmp_path / "c.db", cwd=tmp_path, timeout=1200)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    graded = _graded(tmp_path / "c.db", json.loads(done.stdout)["run_id"])
    assert {k: v["outcome"] for k, v in graded.items()} == {"twostep": "passed", "staged": "passed", "halfway": "failed"}
    twostep = graded["twostep"]["evidence"]
    assert twostep["where"].startswith("container ") and len([n for n in twostep["notes"] if n.startswith("separate verifier image ")]) == 2, twostep["notes"]
    assert graded["staged"]["evidence"]["rewards"] == {"reward": 1.0, "seeded": 0.5}  # setup.sh's seed.txt, written in the container, reached step 2's verifier
