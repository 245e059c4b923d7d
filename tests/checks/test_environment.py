"""environment:* checks: reported (what the tool said) decides; expected only names the subject.

Sessions come from the real mock agent with an `environment.reported` record handed to it;
`environment.expected` is folded in with `project`, since the mock stages nothing.
"""

from __future__ import annotations

import pytest
from mocksession import mock_session

from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog
from benchtape.core.model import Action, Session, project
from benchtape.core.results import CheckSpec, Result

CTX = CheckContext()
TYPES = (
    "plugin-loaded",
    "skill-registered",
    "command-registered",
    "agent-registered",
    "mcp-connected",
    "tool-available",
    "plugin-inventory",
    "matches-expected",
)

# What a Claude Code adapter writes from system/init plus the plugin-cli probe.
REPORTED = {
    "source": "system:init",
    "sources": ["plugin-cli", "system:init"],
    "tools": ["Bash", "Read", "Skill", "mcp__claudish__ask"],
    "mcp_servers": [
        {"name": "claudish", "status": "connected"},
        {"name": "plugin:broken:db", "status": "failed"},
        {"name": "quiet"},  # listed, no status (the interactive path)
    ],
    "plugins": [
        {"id": "dev@magus", "path": "/p/dev", "enabled": True, "errors": [], "skills": ["architecture"], "agents": ["reviewer"],
         "commands": ["architect"], "hooks": 2, "mcp_servers": [], "lsp_servers": []},
        {"id": "broken@magus", "errors": ["manifest: invalid"], "skills": ["ghost"], "agents": ["phantom"], "mcp_servers": ["db", "ghostsrv"]},
        {"id": "off@magus", "enabled": False, "skills": ["sleepy"]},
        {"name": "lite"},  # system:init spelling: no breakdown
    ],
    "skills": ["debug"],
    "agents": ["general-purpose"],
    "commands": ["debug", "review"],
    "model": "claude-sonnet-4-6",
    "permission_mode": "bypassPermissions",
    "version": "2.1.72",
}
PLUGIN_CLI_ONLY = {"source": "plugin-cli", "plugins": REPORTED["plugins"]}
UNCAPTURED = (
    "environment:{}: no environment was captured for this session "
    "(harness_config.environment.probe is false, or this harness does not report one)"
)


def with_expected(session: Session, expected: dict) -> Session:
    """Fold a staging record into a recorded session, as the recorder appends one before launch."""
    folded = project([*session.actions, Action("environment.expected", expected).stamped(seq=len(session.actions) + 1)])
    folded.work_dir = session.work_dir
    return folded


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> Session:
    return mock_session(tmp_path_factory.mktemp("env"), [{"tool": "Read", "input": {"file_path": "a"}, }], files={"a": "x"}, environment=REPORTED)


@pytest.fixture(scope="module")
def cli_only(tmp_path_factory) -> Session:
    return mock_session(tmp_path_factory.mktemp("cli"), noop=True, environment=PLUGIN_CLI_ONLY)


@pytest.fixture(scope="module")
def empty(tmp_path_factory) -> Session:
    """The negative control: the mock ran and registered nothing (a present, empty record)."""
    return mock_session(tmp_path_factory.mktemp("empty"), noop=True, environment={})


@pytest.fixture(scope="module")
def uncaptured(tmp_path_factory) -> Session:
    return mock_session(tmp_path_factory.mktemp("none"), noop=True)


def grade(session: Session, type: str, value=None, **args) -> Result:
    return build(CheckSpec(type=f"environment:{type}", value=value, args=args)).evaluate(session, CTX)


def refused(type: str, value=None, **args) -> str:
    with pytest.raises(CheckConfigError) as exc:
        build(CheckSpec(type=f"environment:{type}", value=value, args=args))
    return str(exc.value)


VALUES = {
    "plugin-loaded": ("dev@magus", {}),
    "skill-registered": ("dev:architecture", {}),
    "command-registered": ("dev:architect", {}),
    "agent-registered": ("dev:reviewer", {}),
    "mcp-connected": ("claudish", {}),
    "tool-available": ("Skill", {}),
    "plugin-inventory": ("dev@magus", {"skills": 1}),
    "matches-expected": (None, {}),
}


def test_the_eight_types_are_registered_with_no_aliases():
    cat = catalog()
    assert {t for t in cat if t.startswith("environment:")} == {f"environment:{t}" for t in TYPES}
    assert not any(t.startswith("env:") for t in cat)
    with pytest.raises(CheckConfigError, match="unknown check type"):
        build(CheckSpec(type="env:plugin-loaded", value="dev@magus"))
    with pytest.raises(CheckConfigError, match="unknown check type"):
        build(CheckSpec(type="environment:mcp-reachable", value="probe"))  # 0.33+, not this version


@pytest.mark.parametrize("type", TYPES)
def test_nothing_captured_is_an_error_never_a_fail(uncaptured, type):
    value, args = VALUES[type]
    r = grade(uncaptured, type, value, **args)
    assert r.status == "ERROR"
    assert r.reason == UNCAPTURED.format(type)


@pytest.mark.parametrize("type", ["plugin-loaded", "skill-registered", "command-registered", "agent-registered", "mcp-connected", "plugin-inventory"])
def test_negative_control_named_subjects_fail_cleanly(empty, type):
    value, args = VALUES[type]
    assert grade(empty, type, value, **args).status == "FAIL"


@pytest.mark.parametrize("type", ["tool-available", "matches-expected"])
def test_negative_control_roster_and_staging_checks_error(empty, type):
    value, args = VALUES[type]
    assert grade(empty, type, value, **args).status == "ERROR"


@pytest.mark.parametrize("type", [t for t in TYPES if t != "matches-expected"])
def test_a_subject_is_required(type):
    assert "value must name what to look for" in refused(type, None, **VALUES[type][1])


MALFORMED = [
    ({"source": "system:init", "sources": "system:init"}, "environment.reported.sources is 'system:init', not a list"),
    ({"source": "system:init", "plugins": 3}, "environment.reported.plugins is 3, not a list"),
    ({"source": "system:init", "plugins": {"dev@magus": {}}}, "environment.reported.plugins is {'dev@magus': {}}, not a list"),
    ({"source": "system:init", "mcp_servers": "claudish", "tools": ["Skill"]}, "environment.reported.mcp_servers is 'claudish', not a list"),
    ({"source": 5, "tools": ["Skill"]}, "environment.reported.source is 5, not a string"),
]


@pytest.mark.parametrize("type", TYPES)
@pytest.mark.parametrize("record,message", MALFORMED, ids=[m.split(" ")[0].rsplit(".", 1)[-1] + str(i) for i, (_, m) in enumerate(MALFORMED)])
def test_a_malformed_record_is_an_error_naming_the_key(tmp_path, type, record, message):
    """A record the adapter wrote in the wrong shape raised a TypeError in some checks and
    was silently misread by others (a string of sources iterated as letters)."""
    s = Session(environment={"expected": {"plugins": [{"id": "dev@magus"}]}, "reported": record})
    value, args = VALUES[type]
    r = grade(s, type, value, **args)
    assert r.status == "ERROR" and r.reason == f"environment:{type}: {message}; the adapter wrote it wrongly"


@pytest.mark.parametrize("expected,message", [("dev@magus", "environment.expected is 'dev@magus', not a map"), ({"plugins": 3}, "environment.expected.plugins is 3, not a list")])
def test_matches_expected_errors_on_a_malformed_staging_record(expected, message):
    r = grade(Session(environment={"expected": expected, "reported": REPORTED}), "matches-expected")
    assert r.status == "ERROR" and r.reason == f"environment:matches-expected: {message}; the recorder wrote it wrongly"


# ---------------------------------------------------------------- plugin-loaded


def test_plugin_loaded(loaded):
    r = grade(loaded, "plugin-loaded", "dev@magus")
    assert r.status == "PASS"
    assert set(r.evidence) == {"plugin", "sources", "plugins_reported", "listed"}
    assert grade(loaded, "plugin-loaded", "dev").status == "PASS"  # a bare name matches its marketplace id
    assert grade(loaded, "plugin-loaded", "lite@market").status == "PASS"  # and an init.plugins name matches an id
    assert grade(loaded, "plugin-loaded", "dev@elsewhere").status == "FAIL"


def test_plugin_loaded_fails_when_listed_with_errors_or_disabled(loaded):
    r = grade(loaded, "plugin-loaded", "broken@magus")
    assert r.status == "FAIL" and r.reason == "plugin broken@magus is listed with errors: manifest: invalid"
    assert grade(loaded, "plugin-loaded", "off@magus").reason == "plugin off@magus is listed but disabled"
    assert "is not listed" in grade(loaded, "plugin-loaded", "absent@magus").reason


# ---------------------------------------------------------------- skill / command / agent


def test_skill_registered_counts_loaded_plugins_only(loaded):
    assert grade(loaded, "skill-registered", "dev:architecture").status == "PASS"
    assert grade(loaded, "skill-registered", "architecture").status == "PASS"
    assert grade(loaded, "skill-registered", "debug").status == "PASS"  # init.skills
    r = grade(loaded, "skill-registered", "broken:ghost")  # its plugin failed to load
    assert r.status == "FAIL" and "skills_registered" in r.evidence
    assert grade(loaded, "skill-registered", "off:sleepy").status == "FAIL"


def test_command_registered(loaded):
    assert grade(loaded, "command-registered", "dev:architect").status == "PASS"
    assert grade(loaded, "command-registered", "review").status == "PASS"  # init.slash_commands
    r = grade(loaded, "command-registered", "dev:archtect")
    assert r.status == "FAIL" and "closest: dev:architect" in r.reason


def test_command_registered_errors_when_plugin_cli_is_the_only_source(cli_only):
    r = grade(cli_only, "command-registered", "dev:architect")
    assert r.status == "ERROR" and "plugin-cli is the only source" in r.reason
    assert grade(cli_only, "skill-registered", "dev:architecture").status == "PASS"  # plugin-cli does answer skills


def test_agent_registered(loaded):
    assert grade(loaded, "agent-registered", "dev:reviewer").status == "PASS"
    assert grade(loaded, "agent-registered", "general-purpose").status == "PASS"
    assert grade(loaded, "agent-registered", "broken:phantom").status == "FAIL"


# ---------------------------------------------------------------- mcp-connected


def test_mcp_connected(loaded):
    r = grade(loaded, "mcp-connected", "claudish")
    assert r.status == "PASS"
    assert r.evidence["servers"][0] == {"name": "claudish", "status": "connected"}


def test_mcp_connected_fails_on_a_failed_or_absent_server(loaded):
    r = grade(loaded, "mcp-connected", "plugin:broken:db")
    assert r.status == "FAIL" and "plugin:broken:db failed" in r.reason
    assert grade(loaded, "mcp-connected", "db").status == "FAIL"  # a bare name finds the plugin's spelling
    assert "is not listed" in grade(loaded, "mcp-connected", "nowhere").reason


def test_mcp_connected_declared_only_by_a_plugin_that_did_not_load_is_absent(loaded):
    r = grade(loaded, "mcp-connected", "ghostsrv")
    assert r.status == "FAIL" and "declared only by plugin(s) that did not load: broken@magus" in r.reason


def test_mcp_connected_listed_without_a_status_is_an_error(loaded):
    r = grade(loaded, "mcp-connected", "quiet")
    assert r.status == "ERROR" and "no status was reported" in r.reason


def _pending(*calls: Action) -> Session:
    """A plugin's server still connecting when init was written (Claude Code does not wait for
    it), then whatever calls of its tools the session made."""
    reported = {"source": "system:init", "mcp_servers": [{"name": "plugin:demo:probe", "status": "pending"}]}
    return project([a.stamped(seq=i + 1) for i, a in enumerate([Action("environment.reported", reported), *calls])])


def _probe_call(call_id: str, tool: str, **result) -> list[Action]:
    return [Action("tool.call", {"call_id": call_id, "tool": tool, "input": {"x": "42"}}), Action("tool.result", {"call_id": call_id, "output": "probe-ok", **result})]


def test_mcp_connected_pending_at_init_then_answered_passes():
    """The flaky FAIL CI met: `pending` at init is not `not connected`; a later answer from one
    of the server's tools (`mcp__plugin_demo_probe__…`, as Claude Code names them) proves it."""
    r = grade(_pending(*_probe_call("c1", "mcp__plugin_demo_probe__probe", is_error=False)), "mcp-connected", "probe")
    assert r.status == "PASS" and "still connecting at system:init, then answered mcp__plugin_demo_probe__probe" in r.reason
    assert r.evidence["answered_calls"] == ["mcp__plugin_demo_probe__probe"]


def test_mcp_connected_pending_and_never_answered_is_an_error_not_a_failure():
    unused = grade(_pending(), "mcp-connected", "probe")
    assert unused.status == "ERROR" and "still connecting when system:init was written" in unused.reason
    failed = _pending(*_probe_call("c1", "mcp__plugin_demo_probe__probe", is_error=True))
    assert grade(failed, "mcp-connected", "probe").status == "ERROR"  # an error answer proves nothing
    other = _pending(*_probe_call("c1", "mcp__plugin_demo_other__probe", is_error=False))
    assert grade(other, "mcp-connected", "probe").status == "ERROR"  # another server's tool


# ---------------------------------------------------------------- tool-available


def test_tool_available(loaded):
    assert grade(loaded, "tool-available", "Skill").status == "PASS"
    assert grade(loaded, "tool-available", "mcp__claudish__ask").status == "PASS"
    r = grade(loaded, "tool-available", "skill")  # exact, case included
    assert r.status == "FAIL" and "closest: Skill" in r.reason


def test_tool_available_errors_without_system_init_or_a_roster(cli_only, tmp_path):
    r = grade(cli_only, "tool-available", "Skill")
    assert r.status == "ERROR" and "no system:init was captured" in r.reason
    rosterless = mock_session(tmp_path, noop=True, environment={"source": "system:init", "tools": []})
    assert grade(rosterless, "tool-available", "Skill").status == "ERROR"


# ---------------------------------------------------------------- plugin-inventory


def test_plugin_inventory_scores_the_fraction_of_floors_met(loaded):
    r = grade(loaded, "plugin-inventory", "dev@magus", skills=1, agents=1, hooks=2)
    assert r.status == "PASS" and r.score == 1.0
    assert r.evidence["counts"] == {"skills": 1, "agents": 1, "hooks": 2}
    r = grade(loaded, "plugin-inventory", "dev@magus", skills=1, hooks=5)
    assert r.status == "FAIL" and r.score == 0.5 and "hooks 2 < 5" in r.reason


def test_plugin_inventory_reads_the_staged_tree_loaded_or_not(loaded):
    assert grade(loaded, "plugin-inventory", "broken@magus", skills=1, mcp_servers=2).status == "PASS"


def test_plugin_inventory_errors_without_a_breakdown(loaded):
    r = grade(loaded, "plugin-inventory", "lite", skills=1)
    assert r.status == "ERROR" and "listed with no breakdown" in r.reason
    r = grade(loaded, "plugin-inventory", "broken@magus", lsp_servers=0)  # the breakdown never said
    assert r.status == "ERROR" and "does not report lsp_servers" in r.reason
    assert grade(loaded, "plugin-inventory", "absent@magus", skills=1).status == "FAIL"


def test_plugin_inventory_refusals():
    assert 'args.skill is not a floor this check knows (did you mean "skills"?)' in refused("plugin-inventory", "dev@magus", skill=20)
    assert "declare at least one floor" in refused("plugin-inventory", "dev@magus")
    assert "args.hooks must be a whole number >= 0" in refused("plugin-inventory", "dev@magus", hooks=True)
    assert "args.skills must be a whole number >= 0" in refused("plugin-inventory", "dev@magus", skills=-1)


# ---------------------------------------------------------------- matches-expected


def test_matches_expected_passes_when_every_staged_plugin_loaded(loaded):
    s = with_expected(loaded, {"plugins": [{"id": "dev@magus", "path": "/staged/dev"}]})
    r = grade(s, "matches-expected")
    assert r.status == "PASS" and r.score == 1.0
    assert r.evidence["staged"] == [{"plugin": "dev@magus", "listed": True, "loaded": True, "errors": []}]


def test_matches_expected_scores_the_fraction_loaded(loaded):
    staged = [{"id": "dev@magus"}, {"id": "broken@magus"}, {"id": "absent@magus"}]
    r = grade(with_expected(loaded, {"plugins": staged}), "matches-expected")
    assert r.status == "FAIL" and r.score == pytest.approx(1 / 3)
    assert "broken@magus (listed with errors)" in r.reason and "absent@magus (not listed)" in r.reason


def test_matches_expected_errors_when_nothing_was_staged(loaded):
    r = grade(loaded, "matches-expected")
    assert r.status == "ERROR" and "nothing was staged" in r.reason
    assert grade(with_expected(loaded, {"plugins": []}), "matches-expected").status == "ERROR"


def test_matches_expected_never_passes_on_expected_alone(uncaptured):
    s = with_expected(uncaptured, {"plugins": [{"id": "dev@magus"}]})
    assert grade(s, "matches-expected").reason == UNCAPTURED.format("matches-expected")


def test_matches_expected_takes_no_value():
    assert "takes no value" in refused("matches-expected", "dev@magus")


MADBENCH_UNDER_MOCK = {  # madbench-reference §3.6 "Under the mock": six fail cleanly, two error
    "plugin-loaded": "FAIL",
    "skill-registered": "FAIL",
    "command-registered": "FAIL",
    "agent-registered": "FAIL",
    "mcp-connected": "FAIL",
    "tool-available": "ERROR",
    "plugin-inventory": "FAIL",
    "matches-expected": "ERROR",
}


@pytest.mark.parametrize("probe", [True, False])
def test_the_real_mock_reports_an_empty_environment_as_madbenchs_does_unless_the_probe_is_off(tmp_path, probe):
    """`benchtape check` (the mock as negative control) on a bench of the eight environment
    checks: the mock reports what it loaded (nothing), so six fail cleanly and two error, as
    under madbench; with `environment.probe: false` nothing is recorded and every one errors."""
    import json

    from e2e.cli import benchtape

    values = {"plugin-loaded": "foo@bar", "skill-registered": "dev:a", "command-registered": "dev:c", "agent-registered": "dev:r", "mcp-connected": "claudish", "tool-available": "Skill", "plugin-inventory": "foo@bar"}
    checks = "".join(f"      - {{type: environment:{t}" + (f", value: {json.dumps(values[t])}" if t in values else "") + (", args: {skills: 1}" if t == "plugin-inventory" else "") + "}\n" for t in TYPES)
    config = "" if probe else "harness_config: {environment: {probe: false}}\n"
    (tmp_path / "bench.yaml").write_text(f"harness: mock\n{config}scenarios:\n  - name: env\n    prompt: hello\n    checks:\n{checks}")
    done = benchtape("check", "bench.yaml", "--json", "--db", str(tmp_path / "e.db"), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    (cell,) = json.loads(done.stdout)["cells"]
    statuses = {r["type"].split(":", 1)[1]: r["status"] for r in cell["checks"]}
    assert statuses == (MADBENCH_UNDER_MOCK if probe else dict.fromkeys(TYPES, "ERROR")), statuses
