"""Scripts: the mock: vocabulary as model turns, and a clear refusal for every malformed one."""

from __future__ import annotations

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.script import DEFAULT_USAGE, Usage, load_script, script_from


def kinds(turn):
    return [b.kind if b.kind != "call" else f"call:{b.tool}" for b in turn.blocks]


def test_thoughts_and_words_lead_the_call_that_ends_their_turn():
    s = script_from({"steps": [{"think": "hm"}, {"say": "reading"}, {"tool": "Read", "input": {"file_path": "a"}}, {"say": "done"}]})
    assert [kinds(t) for t in s.turns] == [["thinking", "text", "call:Read"], ["text"]]
    assert [t.ends for t in s.turns] == [False, True]


def test_a_script_ending_on_a_call_gets_an_empty_closing_turn():
    s = script_from({"steps": [{"tool": "Bash", "input": {"command": "ls"}}]})
    assert [kinds(t) for t in s.turns] == [["call:Bash"], []]


def test_parallel_skill_subagent_sleep_and_end_turn():
    s = script_from({"steps": [
        {"sleep": 0.5},
        {"parallel": [{"tool": "Read", "input": {"file_path": "a"}}, {"skill": "review"}]},
        {"say": "first", "end_turn": True},
        {"subagent": {"agent": "Explore", "prompt": "look around", "steps": [{"say": "nothing here"}]}},
    ]})
    assert [kinds(t) for t in s.turns] == [["call:Read", "call:Skill"], ["text"], ["call:Agent"], []]
    assert s.turns[0].delay == 0.5 and s.turns[0].calls[1].input == {"skill": "review"}
    spawn = s.turns[2].calls[0]
    assert spawn.input == {"description": "look around", "prompt": "look around", "subagent_type": "Explore", "run_in_background": False}
    (sub,) = s.subagents()
    assert sub.prompt == "look around" and [kinds(t) for t in sub.turns] == [["text"]]


def test_usage_per_turn_or_totals_spread_exactly():
    s = script_from({"steps": [{"tool": "Bash", "input": {"command": "ls"}, "usage": {"tokens_in": 7, "tokens_out": 3}}, {"say": "x"}]})
    assert [t.usage for t in s.turns] == [Usage(7, 3), DEFAULT_USAGE]
    spread = script_from({"steps": [{"tool": "Bash", "input": {"command": "ls"}}, {"tool": "Bash", "input": {"command": "ls"}}, {"say": "x"}], "metrics": {"tokens_in": 1000, "tokens_out": 200, "cost_usd": 0.5}})
    assert sum(t.usage.tokens_in for t in spread.turns) == 1000 and sum(t.usage.tokens_out for t in spread.turns) == 200


def test_noop_empty_and_digest():
    assert script_from({"noop": True}).noop and script_from({"steps": []}).noop and script_from(None).noop
    a, b = script_from({"steps": [{"say": "x"}]}), script_from({"steps": [{"say": "y"}]})
    assert a.digest and a.digest != b.digest and a.digest == script_from({"steps": [{"say": "x"}]}).digest


@pytest.mark.parametrize(
    "text, line, what, fix",
    [
        ("steps:\n  - tol: Read\n", 2, "exactly one of", "one step per list item"),
        ("steps:\n  - tool: Read\n    inputs: {file_path: a}\n", 3, "unknown key `inputs`", "did you mean `input:`"),
        ("steps:\n  - {say: hi, think: ho}\n", 2, "exactly one of", None),
        ("steps:\n  - parallel:\n      - {say: hi}\n", 3, "exactly one of tool, skill, subagent", None),
        ("steps:\n  - parallel: [{tool: Read, usage: {tokens_in: 1}}]\n", 2, "`usage:` inside `parallel:`", "on the `parallel:` step"),
        ("steps:\n  - tool: Read\n    input: [a]\n", 3, "`input:` must be a mapping", "input: {file_path: x}"),
        ("steps:\n  - sleep: -1\n", 2, "`sleep:`", "sleep: 1.5"),
        ("steps:\n  - tool: Bash\n    usage: {tokens_in: 1.5}\n", 3, "whole number", None),
        ("steps:\n  - {tool: Bash, usage: {tokens_in: 1}}\nmetrics: {tokens_in: 5}\n", 3, "both given", "keep either"),
        ("steps:\n  - subagent: {prompt: same}\n  - subagent: {prompt: same}\n", 3, "two subagents have the prompt", "its own prompt"),
        ("stepz: []\n", 1, "unknown key `stepz`", "did you mean `steps:`"),
        ("steps:\n  - tool: Read\n   input: x\n", 3, "YAML syntax error", "indentation"),
        ("- say: hi\n", 1, "a script must be a mapping", None),
        ("noop: true\nsteps: [{say: x}]\n", 1, "no steps", "drop"),
        ("steps:\n  - {say: hi, end_turn: yes please}\n", 2, "`end_turn:`", None),
    ],
)
def test_malformed_scripts_name_the_file_line_and_fix(tmp_path, text, line, what, fix):
    path = tmp_path / "script.yaml"
    path.write_text(text)
    with pytest.raises(BadInput) as err:
        load_script(path)
    assert err.value.file == str(path)
    assert err.value.line == line, err.value.render()
    assert what in err.value.what, err.value.render()
    if fix:
        assert fix in (err.value.fix or ""), err.value.render()


def test_a_missing_script_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput) as err:
        load_script(tmp_path / "nope.yaml")
    assert "no such file" in err.value.what
