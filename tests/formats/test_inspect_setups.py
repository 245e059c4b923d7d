"""Issue 47: an evaluation's run exports as one Inspect log per setup, so the real `inspect view`
lists the setups side by side: each log with its setup's model and options in its eval spec,
its own accuracy, and samples whose ids name the task and the attempt (the same ids in every
log, stable across exports)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from formatskit import benchtape
from inspectview import inspect_view

from benchtape.store.database import Store

inspect_log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed: pip install 'benchtape[inspect]'")

from evalkit import CALC, MOCK_BENCH, write  # noqa: E402 - tests/evalkit.py, on the path formatskit sets

EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
attempts: 2
tools:
  - tool: mock
    model: [scripted, noop]
    effort: high
    options: {agents_md: none}
"""
TASKS = ("explain", "fix-add", "fix-sub")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("setups") / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", MOCK_BENCH)
    write(root / ".benchtape" / "evaluations" / "base.yaml", EVALUATION)
    ran = benchtape("run", "base", "--yes", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}, timeout=300)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    db = root / ".benchtape" / "benchtape.db"
    out = benchtape("export", "--format", "inspect", "--run", "latest", "-o", root / "logs", "--db", db)
    assert out.returncode == 0 and "2 Inspect logs (one per setup) of 12 sessions" in out.stdout, out.stdout + out.stderr
    return {"root": root, "db": db, "logs": root / "logs"}


def test_each_setup_is_a_log_with_its_model_options_and_accuracy(evaluated: dict[str, Any]) -> None:
    store = Store(evaluated["db"], readonly=True)
    rows = list(store.session_rows())
    run = store.run(rows[0].run_id)
    store.close()
    logs = {log.eval.model: log for log in (inspect_log.read_eval_log(str(p)) for p in sorted(evaluated["logs"].glob("*.eval")))}
    assert set(logs) == {"mockllm/mock", "mockllm/mock-noop"}
    arms = run["params"]["arms"]
    for model, log in logs.items():
        spec = log.eval
        assert spec.eval_set_id == spec.run_id == run["id"] and spec.task == "base"  # the evaluation file
        assert spec.task_id in arms and spec.metadata["setup"]["label"] == arms[spec.task_id]["label"] == spec.task_args["setup"]
        assert spec.solver == "mock" and spec.metadata["setup"]["steps"][0]["model_id"] == model.split("/")[1]
        step = arms[spec.task_id]["steps"][0]
        assert spec.solver_args == {"tool_version": step["tool_version"], "effort": "high", "options": {"agents_md": "none"}}  # the setup's options, in the eval spec
        assert spec.model_args == {"effort": "high", "agents_md": "none"}
        ids = sorted(s.id for s in log.samples)
        assert ids == sorted(f"{t}@attempt-{n}" for t in TASKS for n in (1, 2))  # the task and the attempt, in every log alike
        assert {s.id: s.epoch for s in log.samples} == {i: int(i[-1]) for i in ids}
        assert all(set(s.scores) == {"scenario", "exec" if s.metadata["scenario"] != "explain" else "contains"} for s in log.samples)  # per check
    scripted, noop = logs["mockllm/mock"], logs["mockllm/mock-noop"]
    accuracy = {m: next(s.metrics["accuracy"].value for s in log.results.scores if s.name == "scenario") for m, log in logs.items()}
    assert accuracy == {"mockllm/mock": pytest.approx(4 / 6), "mockllm/mock-noop": pytest.approx(2 / 6)}  # fix-add and explain pass, fix-sub fails; the no-op only explains
    assert {s.id for s in scripted.samples if s.scores["scenario"].value == 1.0} == {"fix-add@attempt-1", "fix-add@attempt-2", "explain@attempt-1", "explain@attempt-2"}
    assert {s.id for s in noop.samples if s.scores["scenario"].value == 1.0} == {"explain@attempt-1", "explain@attempt-2"}


def test_a_second_export_writes_the_same_files_and_a_single_file_is_refused(evaluated: dict[str, Any]) -> None:
    again = evaluated["root"] / "again"
    assert benchtape("export", "--format", "inspect", "--run", "latest", "-o", again, "--db", evaluated["db"]).returncode == 0
    assert sorted(p.name for p in again.glob("*.eval")) == sorted(p.name for p in evaluated["logs"].glob("*.eval"))
    one = evaluated["root"] / "one.eval"
    refused = benchtape("export", "--format", "inspect", "--run", "latest", "-o", one, "--db", evaluated["db"])
    assert refused.returncode == 2 and "2 setups" in refused.stderr and "-o DIR" in refused.stderr and not one.exists(), refused.stderr


def test_inspect_view_lists_the_setups_side_by_side(evaluated: dict[str, Any]) -> None:
    """The real `inspect view` on the folder: two logs of one eval set, each header naming its
    model and setup, each sample list the same task/attempt ids with that setup's scores."""
    with inspect_view(evaluated["logs"]) as viewer:
        files = viewer.log_files()
        assert len(files) == 2
        headers = {viewer.headers(f["name"])["eval"]["model"]: (f["name"], viewer.headers(f["name"])) for f in files}
        assert set(headers) == {"mockllm/mock", "mockllm/mock-noop"}
        assert len({h["eval"]["eval_set_id"] for _, h in headers.values()}) == 1
        by_model = {}
        for model, (name, header) in headers.items():
            assert header["eval"]["task_display_name"].endswith(header["eval"]["task_args"]["setup"])
            setup = header["eval"]["task_args"]["setup"]
            assert ("scripted" if model == "mockllm/mock" else "noop") in setup and "high" in setup and "agents_md=none" in setup, setup
            by_model[model] = {s["id"]: s["scores"]["scenario"]["value"] for s in viewer.sample_summaries(name)}
        assert set(by_model["mockllm/mock"]) == set(by_model["mockllm/mock-noop"])
        assert by_model["mockllm/mock"]["fix-add@attempt-1"] == 1.0 and by_model["mockllm/mock-noop"]["fix-add@attempt-1"] == 0.0
        sample = viewer.sample(headers["mockllm/mock"][0], "fix-add@attempt-2", epoch=2)
        assert sample["metadata"]["attempt"] == 2 and json.dumps(sample["messages"]).count("return a + b") >= 1
