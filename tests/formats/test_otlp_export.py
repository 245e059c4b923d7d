"""Issue 47: `benchtape export --format otlp`: sessions as OpenTelemetry traces under the GenAI
semantic conventions, made by the OpenTelemetry SDK and encoded by its OTLP exporter; written to
an OTLP/JSON file and sent to a real receiver (Arize Phoenix on loopback, tests/formats/phoenixkit.py)
and queried back: spans, their gen_ai.* attributes and the evaluation events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from formatskit import benchtape, write_mock_bench

from benchtape.store.database import Store

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter", reason="the otlp extra is not installed: pip install 'benchtape[otlp]'")

SECRET = "zq8-wombat-91xk-quietly"  # not a credential's shape: only the export's environment says it is secret


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("otlp")
    bench = write_mock_bench(folder)
    bench.write_text(bench.read_text().replace('- say: "hi"', f'- say: "hi, the deploy token is {SECRET}"'))
    db = folder / "r.db"
    assert benchtape("run", bench, "--db", db, cwd=folder).returncode == 1
    store = Store(db, readonly=True)
    rows = {r.scenario: r for r in store.session_rows()}
    assert SECRET in (store.load_session(rows["says-little"].id).final_output or "")  # recorded where nothing named it secret
    store.close()
    return {"folder": folder, "db": db, "rows": rows}


def _export_file(recorded: dict[str, Any], name: str) -> dict[str, Any]:
    out = benchtape("export", "--format", "otlp", "--run", "latest", "-o", recorded["folder"] / name, "--db", recorded["db"], env={"DEPLOY_TOKEN": SECRET})
    assert out.returncode == 0 and "2 sessions as OpenTelemetry traces" in out.stdout, out.stdout + out.stderr
    return json.loads((recorded["folder"] / name).read_text())


def _attrs(items: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for a in items:
        (kind, value), = a["value"].items()
        out[a["key"]] = value["values"] if kind == "arrayValue" else int(value) if kind == "intValue" else value
    return out


def flat(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_a_file_holds_a_trace_per_session_under_the_genai_conventions(recorded: dict[str, Any]) -> None:
    doc = _export_file(recorded, "t.json")
    rows = recorded["rows"]
    (resource,) = [_attrs(rs["resource"]["attributes"]) for rs in doc["resourceSpans"]]
    assert resource["service.name"] == "benchtape" and resource["openinference.project.name"] == recorded["folder"].name
    spans = flat(doc)
    by_id = {s["spanId"]: s for s in spans}
    roots = {_attrs(s["attributes"])["gen_ai.conversation.id"]: s for s in spans if "parentSpanId" not in s}
    assert set(roots) == {r.id for r in rows.values()} and len({s["traceId"] for s in roots.values()}) == 2
    root = roots[rows["delegates"].id]
    a = _attrs(root["attributes"])
    assert root["name"] == "invoke_agent mock" and a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "mock"
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"], a["gen_ai.usage.cache_read.input_tokens"], a["gen_ai.usage.cache_creation.input_tokens"]) == (1240, 120, 300, 40)  # input counts the cache's tokens too, as the convention says
    assert a["benchtape.tokens_in"] == 900
    assert a["gen_ai.provider.name"] == "mock" and a["benchtape.cost_usd"] == 0.02
    trace = [s for s in spans if s["traceId"] == root["traceId"]]
    tools = [(s["name"], by_id[s["parentSpanId"]]["name"]) for s in trace if s["name"].startswith("execute_tool")]
    assert sorted(tools) == sorted([("execute_tool Write", "invoke_agent mock"), ("execute_tool Read", "invoke_agent mock"), ("execute_tool Task", "invoke_agent mock"), ("execute_tool Lint", "invoke_agent mock"), ("execute_tool Read", "invoke_agent Explore"), ("execute_tool Task", "invoke_agent Explore")])
    explore = next(s for s in trace if s["name"] == "invoke_agent Explore")
    plan = next(s for s in trace if s["name"] == "invoke_agent Plan")
    assert by_id[explore["parentSpanId"]]["name"] == "execute_tool Task" and by_id[by_id[plan["parentSpanId"]]["parentSpanId"]] is explore  # subagents as child spans of their spawning call
    lint = next(s for s in trace if s["name"] == "execute_tool Lint")
    la = _attrs(lint["attributes"])
    assert la["gen_ai.tool.name"] == "Lint" and la["gen_ai.tool.call.result"] == "3 warnings" and lint["status"]["code"] == "STATUS_CODE_ERROR" and la["error.type"] == "tool_error"
    # each call's canonical action, the subagent's too (it was read from a field no call has, and never sent)
    canonical = sorted((s["name"], _attrs(s["attributes"]).get("benchtape.canonical")) for s in trace if s["name"].startswith("execute_tool"))
    assert canonical == sorted([("execute_tool Write", "write"), ("execute_tool Read", "read"), ("execute_tool Task", "subagent"), ("execute_tool Lint", "other"), ("execute_tool Read", "read"), ("execute_tool Task", "subagent")]), canonical
    chats = [s for s in trace if s["name"].startswith("chat ")]
    assert chats and all(_attrs(c["attributes"])["gen_ai.operation.name"] == "chat" and _attrs(c["attributes"])["gen_ai.conversation.id"] == rows["delegates"].id for c in chats)
    assert all(int(root["startTimeUnixNano"]) <= int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"]) <= int(root["endTimeUnixNano"]) for s in trace)  # times from the recorded actions
    # a chat span is the model call: from the tool results it was handed (its thread's last tool
    # span's end) to its answer; spans of the answer's own actions alone all lasted 0 ms
    for chat in chats:
        before = [int(t["endTimeUnixNano"]) for t in trace if t["name"].startswith("execute_tool") and t.get("parentSpanId") == chat.get("parentSpanId") and int(t["endTimeUnixNano"]) <= int(chat["endTimeUnixNano"]) and int(t["startTimeUnixNano"]) < int(chat["startTimeUnixNano"])]
        if before:
            assert int(chat["startTimeUnixNano"]) == max(before) < int(chat["endTimeUnixNano"]), chat["name"]
    assert sum(int(c["endTimeUnixNano"]) - int(c["startTimeUnixNano"]) > 0 for c in chats) >= 2
    events = {_attrs(e["attributes"])["gen_ai.evaluation.name"]: _attrs(e["attributes"]) for e in root["events"] if e["name"] == "gen_ai.evaluation.result"}
    assert set(events) == {"scenario", "contains", "session:tool-used", "session:subagent-used"}
    assert events["scenario"]["gen_ai.evaluation.score.value"] == 1.0 and events["contains"]["gen_ai.evaluation.score.label"] == "PASS"
    little = roots[rows["says-little"].id]
    failed = {_attrs(e["attributes"])["gen_ai.evaluation.name"]: _attrs(e["attributes"]) for e in little["events"]}
    assert failed["contains"]["gen_ai.evaluation.score.value"] == 0.0 and failed["contains"]["gen_ai.evaluation.score.label"] == "FAIL" and "bye" in failed["contains"]["gen_ai.evaluation.explanation"]


def test_secrets_are_redacted_and_a_second_export_is_the_same_trace(recorded: dict[str, Any]) -> None:
    first, second = _export_file(recorded, "a.json"), _export_file(recorded, "b.json")
    text = (recorded["folder"] / "a.json").read_text()
    assert SECRET not in text and "the deploy token is [REDACTED]" in text
    assert [(s["traceId"], s["spanId"]) for s in flat(first)] == [(s["traceId"], s["spanId"]) for s in flat(second)]


def test_bad_destinations_are_refused_before_anything_is_written(recorded: dict[str, Any], tmp_path: Path) -> None:
    nothing = benchtape("export", "--format", "otlp", "--run", "latest", "--db", recorded["db"])
    assert nothing.returncode == 2 and "--endpoint URL" in nothing.stderr
    bad = benchtape("export", "--format", "otlp", "--run", "latest", "--endpoint", "ftp://x", "--db", recorded["db"])
    assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr
    closed = benchtape("export", "--format", "otlp", "--run", "latest", "--endpoint", "http://127.0.0.1:9", "-o", tmp_path / "x.json", "--db", recorded["db"], env={"OTEL_EXPORTER_OTLP_TIMEOUT": "2"})
    assert closed.returncode == 2 and "did not take the traces" in closed.stderr and not (tmp_path / "x.json").exists(), closed.stderr
    assert "Transient error" not in closed.stderr.split("did not take the traces")[0] and closed.stderr.lstrip().startswith("error"), closed.stderr  # the exporter's own retry lines are kept, not printed before benchtape's message
    wrong = benchtape("export", "--format", "atif", "--run", "latest", "--endpoint", "http://127.0.0.1:9", "-o", tmp_path / "y", "--db", recorded["db"])
    assert wrong.returncode == 2 and "--endpoint is for an otlp export" in wrong.stderr


def test_phoenix_receives_the_traces_with_their_attributes_and_evaluation_events(recorded: dict[str, Any]) -> None:
    """The real Phoenix on loopback: `--endpoint` sends the traces over OTLP/HTTP; its REST API
    gives back every span, parented as sent, with the gen_ai.* attributes and the verdicts."""
    from phoenixkit import phoenix

    file_doc = _export_file(recorded, "sent.json")
    sent = {s["spanId"]: s for s in flat(file_doc)}
    with phoenix(recorded["folder"] / "phoenix") as server:
        out = benchtape("export", "--format", "otlp", "--run", "latest", "--endpoint", server.base, "--db", recorded["db"], env={"DEPLOY_TOKEN": SECRET})
        assert out.returncode == 0 and f"sent to {server.base}" in out.stdout, out.stdout + out.stderr
        project = recorded["folder"].name
        got = {s["context"]["span_id"]: s for s in server.spans(project, len(sent))}
    assert set(got) == set(sent)  # the same trace the file holds: ids derived from the session
    assert {i: s["parent_id"] for i, s in got.items()} == {i: s.get("parentSpanId") for i, s in sent.items()}
    rows = recorded["rows"]
    root = next(s for s in got.values() if s["parent_id"] is None and s["attributes"]["gen_ai.conversation.id"] == rows["delegates"].id)
    a = root["attributes"]
    assert root["name"] == "invoke_agent mock" and a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.usage.cache_read.input_tokens"] == 300 and a["gen_ai.usage.cache_creation.input_tokens"] == 40
    assert root["span_kind"] == "AGENT"  # Phoenix reads the GenAI conventions: an agent, its LLM calls, its tools
    kinds = {s["name"].split(" ")[0]: s["span_kind"] for s in got.values()}
    assert kinds == {"invoke_agent": "AGENT", "chat": "LLM", "execute_tool": "TOOL"}
    lint = next(s for s in got.values() if s["name"] == "execute_tool Lint")
    assert lint["status_code"] == "ERROR" and lint["attributes"]["gen_ai.tool.name"] == "Lint" and lint["parent_id"] == root["context"]["span_id"]
    explore = next(s for s in got.values() if s["name"] == "invoke_agent Explore")
    assert got[explore["parent_id"]]["name"] == "execute_tool Task" and explore["attributes"]["gen_ai.agent.name"] == "Explore"
    evaluations = {e["attributes"]["gen_ai.evaluation.name"]: e["attributes"] for e in root["events"] if e["name"] == "gen_ai.evaluation.result"}
    assert set(evaluations) == {"scenario", "contains", "session:tool-used", "session:subagent-used"}
    assert evaluations["scenario"]["gen_ai.evaluation.score.value"] == 1.0 and evaluations["session:tool-used"]["gen_ai.evaluation.score.label"] == "PASS"
    little = next(s for s in got.values() if s["parent_id"] is None and s["attributes"]["gen_ai.conversation.id"] == rows["says-little"].id)
    assert SECRET not in json.dumps(little) and "[REDACTED]" in little["attributes"]["gen_ai.output.messages"]


def test_traces_that_would_publish_the_answer_key_are_not_sent(tmp_path: Path) -> None:
    """Evaluation events carry the checks' reasons: as a report, the traces are refused when one
    would publish a `generate:` value the agent did not say itself (nothing written, nothing sent)."""
    import sys

    gen = tmp_path / "gen.py"
    gen.write_text(f"#!{sys.executable}\nprint('ANSWER=fixed-answer-7731')\n")
    gen.chmod(0o755)
    (tmp_path / "bench.yaml").write_text(
        "harness: mock\nscenarios:\n  - name: published\n    prompt: a\n    generate: gen.py\n"
        "    mock: {steps: [{say: \"I do not know\"}]}\n    checks:\n      - {type: contains, value: fixed-answer-7731}\n"
    )
    db = tmp_path / "x.db"
    assert benchtape("run", tmp_path / "bench.yaml", "--db", db, cwd=tmp_path).returncode == 1
    out = benchtape("export", "--format", "otlp", "--run", "latest", "-o", tmp_path / "t.json", "--endpoint", "http://127.0.0.1:9", "--db", db)
    assert out.returncode == 1 and "was NOT written" in out.stderr and "fixed-answer-7731" not in out.stderr, out.stderr
    assert not (tmp_path / "t.json").exists()


def test_a_trace_is_under_its_own_runs_project_whatever_else_is_exported(recorded: dict[str, Any], tmp_path: Path) -> None:
    """`--all` put every trace under "benchtape" and `--run` the same traces under the run's
    name: one trace sat in two projects of the same Phoenix. Each session's traces are now under
    its own run's project (its bench's name), however the selection was made."""
    import shutil

    db = tmp_path / "two.db"
    shutil.copy(recorded["db"], db)
    other = tmp_path / "other-bench"
    other.mkdir()
    second = write_mock_bench(other)
    assert benchtape("run", second, "--db", db, cwd=other).returncode == 1
    for selection, name in ((["--all"], "all.json"), (["--run", "latest"], "latest.json")):
        out = benchtape("export", "--format", "otlp", *selection, "-o", tmp_path / name, "--db", db, env={"DEPLOY_TOKEN": SECRET})
        assert out.returncode == 0, out.stdout + out.stderr
    projects = {}
    for name in ("all.json", "latest.json"):
        doc = json.loads((tmp_path / name).read_text())
        for rs in doc["resourceSpans"]:
            project = _attrs(rs["resource"]["attributes"])["openinference.project.name"]
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    projects.setdefault(span["traceId"], set()).add(project)
    assert all(len(found) == 1 for found in projects.values()), projects  # never one trace in two projects
    assert set().union(*projects.values()) == {recorded["folder"].name, other.name}
