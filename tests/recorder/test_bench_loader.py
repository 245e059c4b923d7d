"""Each bench-loading rule, with the error a user sees."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.bench import expand_paths, load_bench
from benchtape.spec.params import parse_cli_param
from benchtape.spec.units import parse_duration


def write(tmp_path: Path, text: str, name: str = "bench.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def refused(tmp_path: Path, text: str, params=None) -> BadInput:
    with pytest.raises(BadInput) as info:
        load_bench(write(tmp_path, text), params or {})
    return info.value


MINIMAL = """
description: d
harness: mock
scenarios:
  - name: one
    prompt: hi
"""


def test_minimal_bench_loads_with_defaults(tmp_path):
    b = load_bench(write(tmp_path, MINIMAL))
    sc = b.scenarios[0]
    assert (sc.name, sc.prompt, sc.sandbox.level, sc.timeout, sc.interactive) == ("one", "hi", "home", 300.0, True)
    assert len(b.sha256) == 64


def test_unknown_top_key_names_file_line_and_closest(tmp_path):
    err = refused(tmp_path, MINIMAL + "scenarioz: []\n")
    assert err.file.endswith("bench.yaml") and err.line == 6
    assert "unknown key `scenarioz`" in err.what and "scenarios" in err.fix
    assert "exit" not in err.render()  # plain message, no traceback


def test_top_level_name_says_use_description(tmp_path):
    err = refused(tmp_path, "name: x\n" + MINIMAL)
    assert err.line == 1 and "description" in err.fix


def test_unknown_scenario_key_and_prompt_hint(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - name: one
            input: hi
        """)
    assert "unknown key `input`" in err.what and "prompt" in err.fix and err.line == 3


def test_unknown_check_key_is_refused(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: hi
            checks:
              - {type: contains, valeu: x}
        """)
    assert "`valeu`" in err.what and "value" in err.fix and err.line == 4


def test_unknown_sandbox_key_mode_says_level(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: hi
            sandbox: {mode: home}
        """)
    assert "`mode`" in err.what and "level" in err.fix


def test_x_keys_ignored_everywhere(tmp_path):
    b = load_bench(write(tmp_path, """
        x-owner: me
        defaults: {x-note: 1, timeout: 10s}
        scenarios:
          - prompt: hi
            x-why: because
            checks: [{type: contains, value: hi, x-c: 1}]
        """))
    assert b.scenarios[0].timeout == 10.0


def test_x_prefix_only(tmp_path):
    err = refused(tmp_path, "max-tokens: 3\n" + MINIMAL)
    assert "max-tokens" in err.what


def test_aliases_load_as_canonical(tmp_path):
    b = load_bench(write(tmp_path, """
        runner: mock
        runner_config: {model: m}
        defaultCase:
          assert: [{type: contains, value: a}]
        cases:
          - prompt: p
            fixture: td
            assert: [{type: trajectory:tool-used, value: Read}]
            options: {disableDefaultAsserts: false}
        """.replace("fixture: td", f"fixture: {tmp_path}")))
    sc = b.scenarios[0]
    assert b.harness == "mock" and b.harness_config == {"model": "m"}
    assert [c.type for c in sc.checks] == ["contains", "trajectory:tool-used"]
    assert sc.testdata == tmp_path


def test_tests_alias_and_default_test(tmp_path):
    b = load_bench(write(tmp_path, """
        defaultTest: {prompt: shared}
        tests: [{name: a}]
        """))
    assert b.scenarios[0].prompt == "shared"


@pytest.mark.parametrize("level,new", [("process", "home"), ("machine", "container"), ("docker", "container")])
def test_retired_sandbox_levels_refused_with_reference_message(tmp_path, level, new):
    err = refused(tmp_path, f"""
        scenarios:
          - prompt: hi
            sandbox: {level}
        """)
    assert f'sandbox: level "{level}" was renamed to "{new}" (want none, workspace, home, container)' in err.what


def test_setup_with_generate_refused(tmp_path):
    (tmp_path / "s.sh").write_text("#!/bin/sh\n")
    err = refused(tmp_path, """
        scenarios:
          - prompt: hi
            setup: s.sh
            generate: s.sh
        """)
    assert "mutually exclusive" in err.what


def test_default_scenario_merge(tmp_path):
    b = load_bench(write(tmp_path, """
        defaults: {timeout: 20s, sandbox: workspace}
        defaultScenario:
          prompt: base
          timeout: 30s
          vars: {a: 1, nested: {x: 1, y: 2}}
          metadata: {owner: me}
          checks: [{type: contains, value: first}]
        scenarios:
          - name: s1
            vars: {b: 2, nested: {y: 3}}
            checks: [{type: contains, value: second}]
          - name: s2
            prompt: own
            timeout: 40s
            options: {disableDefaultChecks: true}
            checks: [{type: contains, value: only}]
        """))
    s1, s2 = b.scenarios
    assert s1.prompt == "base" and s1.timeout == 30.0 and s1.sandbox.level == "workspace"
    assert s1.vars == {"a": 1, "b": 2, "nested": {"x": 1, "y": 3}}
    assert [c.value for c in s1.checks] == ["first", "second"]
    assert s2.prompt == "own" and s2.timeout == 40.0
    assert [c.value for c in s2.checks] == ["only"]


def test_params_native_type_embedded_text_and_cli_override(tmp_path):
    text = """
        params: {n: 3, who: world, temp: 0.5}
        harness_config: {model: "{{who}}-model", effort: "{{ temp }}"}
        scenarios:
          - prompt: "hello {{who}} x{{n}}"
            checks: [{type: session:step-count, args: {lte: "{{n}}"}}]
        """
    b = load_bench(write(tmp_path, text))
    assert b.scenarios[0].prompt == "hello world x3"
    assert b.scenarios[0].checks[0].args == {"lte": 3}
    assert b.harness_config == {"model": "world-model", "effort": 0.5}
    b2 = load_bench(write(tmp_path, text), {"n": 7, "who": "you"})
    assert b2.scenarios[0].prompt == "hello you x7" and b2.scenarios[0].checks[0].args == {"lte": 7}


def test_undeclared_placeholder_refused(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: "hi {{who}}"
        """)
    assert "{{who}}" in err.what and err.line == 2 and "params:" in err.fix


def test_interactive_from_a_param(tmp_path):
    """madbench's `interactive` is bool-ish and also takes a `"{{param}}"` (its schema): a bench
    that runs both drive modes from one file by `--param` loads here too, in defaults or a scenario."""
    text = """
        params: {mode: false}
        harness: mock
        defaults: {interactive: "{{mode}}"}
        scenarios:
          - {name: a, prompt: p}
          - {name: b, prompt: p, interactive: "{{ mode }}", follow_ups: [more]}
        """
    err = refused(tmp_path, text)  # follow_ups with the default (false) drive mode
    assert "follow_ups" in err.what and err.line == 6
    b = load_bench(write(tmp_path, text), {"mode": True})
    assert [s.interactive for s in b.scenarios] == [True, True]
    err = refused(tmp_path, text, {"mode": "maybe"})
    assert "`interactive:` must be true or false, got maybe" in err.what and err.line == 3
    b = load_bench(write(tmp_path, text.replace(", follow_ups: [more]", "")))
    assert [s.interactive for s in b.scenarios] == [False, False]


def test_undeclared_incoming_param_refused(tmp_path):
    err = refused(tmp_path, MINIMAL, {"nope": 1})
    assert "'nope' is not declared" in err.what


def test_null_param_refused(tmp_path):
    err = refused(tmp_path, "params: {x: ~}\n" + MINIMAL)
    assert 'param "x" is null' in err.what


def test_cli_param_typing():
    assert parse_cli_param("a=1") == ("a", 1)
    assert parse_cli_param("a=1.5") == ("a", 1.5)
    assert parse_cli_param("a=true") == ("a", True)
    assert parse_cli_param("flag=on") == ("flag", "on")
    assert parse_cli_param("u=a=b") == ("u", "a=b")
    with pytest.raises(BadInput, match="empty and null"):
        parse_cli_param("x=")


def test_paths_resolve_against_bench_dir_not_cwd(tmp_path, monkeypatch):
    sub = tmp_path / "benches"
    (sub / "td").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    b = load_bench(write(sub, """
        defaultScenario: {testdata: td}
        scenarios: [{prompt: p}]
        """))
    assert b.scenarios[0].testdata == (sub / "td").resolve()


def test_missing_testdata_loads_parse_only_and_preflight_names_it(tmp_path):
    """The spec's `list` is parse-only: a testdata folder a setup script generates may not exist yet."""
    from benchtape.app.preflight import preflight

    (tmp_path / "bench.yaml").write_text(textwrap.dedent("""
        scenarios:
          - prompt: p
            testdata: nowhere
        """))
    bench = load_bench(tmp_path / "bench.yaml")
    assert bench.scenarios[0].testdata == tmp_path / "nowhere"
    [finding] = preflight(bench).blocking
    assert f"testdata {tmp_path / 'nowhere'} does not exist" in finding and "bench.yaml:3" in finding


@pytest.mark.parametrize("value", ["600", 600, "10"])
def test_a_unitless_timeout_falls_back_to_the_default_as_in_madbench_and_is_said(tmp_path, value):
    """madbench loads `timeout: 600` and its Go ParseDuration falls back to the default: the
    file runs there, so it runs here, with the fallback said at preflight (never read as seconds)."""
    from benchtape.app.preflight import preflight
    from benchtape.spec.bench import DEFAULT_TIMEOUT

    bench = load_bench(write(tmp_path, f"""
        harness: mock
        scenarios:
          - prompt: p
            timeout: {value!r}
            staging_timeout: 90
        """.replace("'", '"')))
    assert bench.scenarios[0].timeout == DEFAULT_TIMEOUT and bench.scenarios[0].staging_timeout is None
    notes = [n for n in preflight(bench).notes if "has no unit" in n]
    assert len(notes) == 2 and f"bench.yaml:4: `timeout`: `timeout: {value}` has no unit, so the default, {DEFAULT_TIMEOUT:g}s, applies, as in madbench; write `timeout: \"{value}s\"`" in notes[0]
    assert "`staging_timeout: 90` has no unit, so no limit applies" in notes[1]


def test_durations():
    assert parse_duration("300s") == 300
    assert parse_duration("1m30s") == 90
    assert parse_duration("1500ms") == 1.5
    assert parse_duration("2h") == 7200
    assert parse_duration("600") is None and parse_duration(600) is None


def test_prompt_required_but_empty_kept(tmp_path):
    err = refused(tmp_path, "scenarios: [{name: a}]\n")
    assert "has no `prompt:`" in err.what
    b = load_bench(write(tmp_path, 'scenarios: [{name: a, prompt: ""}]\n'))
    assert b.scenarios[0].prompt == ""


def test_follow_ups_with_interactive_false_refused(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: p
            interactive: false
            follow_ups: [more]
        """)
    assert "follow_ups" in err.what


def test_settings_a_level_cannot_honour_are_refused(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: p
            sandbox: {level: home, network: none}
        """)
    assert "level container" in err.what
    (tmp_path / "d").mkdir()
    err = refused(tmp_path, """
        scenarios:
          - prompt: p
            sandbox:
              level: workspace
              share: {paths: [{from: d, to: d, access: ro}]}
        """)
    assert "`ro` share" in err.what


def test_testdata_with_sandbox_none_refused(tmp_path):
    err = refused(tmp_path, f"""
        scenarios:
          - prompt: p
            sandbox: none
            testdata: {tmp_path}
        """)
    assert "sandbox: none" in err.what


def test_yaml_syntax_error_names_line(tmp_path):
    err = refused(tmp_path, "scenarios:\n  - prompt: [unclosed\n")
    assert err.line is not None and "YAML syntax error" in err.what


@pytest.mark.parametrize(
    "text, line, said, fix",
    [
        # YAML notices an unclosed `{` at the next line: the line that opened it is the one to fix
        ("scenarios:\n  - prompt: p\n    checks:\n      - {type: contains, value: x\n      - {type: contains, value: y}\n", 4, "the `{` opened on this line is never closed", "close it with `}`"),
        ("scenarios:\n  - prompt: p\n    checks: [a, b\n    name: c\n", 3, "the `[` opened on this line is never closed", "close it with `]`"),
        ('scenarios:\n  - prompt: "unterminated\n    name: a\n', 2, "the quote opened on this line is never closed", "end the value with the quote"),
        ("scenarios:\n  - name: a\n   prompt: p\n", 3, "YAML syntax error", "indentation"),  # where it is noticed is the line to fix
    ],
)
def test_an_unclosed_bracket_or_quote_is_named_at_the_line_that_opened_it(tmp_path, text, line, said, fix):
    err = refused(tmp_path, text)
    assert (err.line, said in err.what, fix in (err.fix or "")) == (line, True, True), (err.line, err.what, err.fix)


def test_eval_file_is_named(tmp_path):
    err = refused(tmp_path, "bench: other.yaml\nruns: [{}]\n")
    assert "Eval file" in err.what


def test_probe_false_with_require_true_refused(tmp_path):
    err = refused(tmp_path, "harness_config: {environment: {probe: false, require: true}}\n" + MINIMAL)
    assert "probe: false" in err.what and "require: true" in err.what


def test_derived_metrics_and_judges_are_built(tmp_path):
    b = load_bench(write(tmp_path, "derivedMetrics: [{name: x, value: '1'}]\njudges: {default: haiku-4.5}\n" + MINIMAL))
    assert b.not_built == [] and b.derived_metrics == [{"name": "x", "value": "1"}]
    assert b.judges is not None and b.judges.default == "haiku-4.5" and b.judges.providers["haiku-4.5"].model == "claude-haiku-4-5"


def test_case_directory(tmp_path):
    case = tmp_path / "cases" / "greet"
    case.mkdir(parents=True)
    (case / "assert.yaml").write_text("harness: mock\nscenarios:\n  - name: greet\n    checks: [{type: contains, value: hello}]\n")
    (case / "input.md").write_text("say hello")
    paths = expand_paths([tmp_path / "cases"])
    assert paths == [case]
    b = load_bench(paths[0])
    assert b.scenarios[0].prompt == "say hello"


def test_a_folder_expands_to_its_yaml_benches_not_every_yml(tmp_path):
    """madbench expands a folder's *.yaml: a docker-compose.yml beside them is no bench."""
    for name in ("a.yaml", "b.yaml", "madbench.yml", "docker-compose.yml", ".gitlab-ci.yml"):
        (tmp_path / name).write_text(textwrap.dedent(MINIMAL).lstrip() if name.endswith("a") or name == "madbench.yml" else "services: {}\n")
    assert [p.name for p in expand_paths([tmp_path])] == ["a.yaml", "b.yaml", "madbench.yml"]


def test_case_dir_errors_are_prefixed(tmp_path):
    case = tmp_path / "broken"
    case.mkdir()
    (case / "assert.yaml").write_text("bogus: 1\nscenarios: [{prompt: p}]\n")
    with pytest.raises(BadInput) as info:
        load_bench(case)
    assert info.value.what.startswith("case dir broken:")


def test_duplicate_scenario_names_refused(tmp_path):
    err = refused(tmp_path, "scenarios: [{name: a, prompt: p}, {name: a, prompt: q}]\n")
    assert "two scenarios are named 'a'" in err.what


def test_mock_script_steps_are_validated(tmp_path):
    err = refused(tmp_path, """
        scenarios:
          - prompt: p
            mock:
              steps:
                - {tool: Read, inptu: {}}
        """)
    assert "`inptu`" in err.what and "input" in err.fix


def test_values_of_any_type_are_read_as_madbench_reads_yaml(tmp_path):
    """madbench's Go decoder reads YAML 1.2: a needle `no` is the string "no" and `10:30` the
    string "10:30" (PyYAML's YAML 1.1 read false and 630, and the check failed an agent that
    said exactly that); a boolean field still takes yes/no, and a string field a bare number."""
    b = load_bench(write(tmp_path, """
        harness: mock
        defaults: {interactive: no}
        scenarios:
          - name: s
            prompt: 42
            vars: {answer: no, at: 10:30, n: 3, flag: true}
            checks:
              - {type: equals, value: no}
              - {type: contains, value: 10:30}
              - {type: contains-any, value: [yes, on, 7, "off"]}
              - {type: contains, value: 3}
              - type: assert-set
                checks: [{type: equals, value: Off}]
              - {type: equals, value: true, readout: yes}
        """))
    [s] = b.scenarios
    assert s.prompt == "42" and s.interactive is False
    assert s.vars == {"answer": "no", "at": "10:30", "n": 3, "flag": True}
    assert [c.value for c in s.checks] == ["no", "10:30", ["yes", "on", 7, "off"], 3, None, True]
    assert s.checks[4].checks[0].value == "Off" and s.checks[5].readout is True


def test_an_integer_past_64_bits_is_read_as_a_float_as_madbench_reads_it(tmp_path):
    """It stopped a run with orjson's 'Integer exceeds 64-bit range' after preflight passed."""
    b = load_bench(write(tmp_path, """
        harness: mock
        scenarios:
          - name: s
            prompt: p
            metadata: {ticket: 123456789012345678901234567890}
            vars: {big: 18446744073709551615, bigger: 18446744073709551616}
        """))
    assert b.scenarios[0].vars == {"big": 18446744073709551615, "bigger": 1.8446744073709552e19}
    assert b.scenarios[0].metadata == {"ticket": 1.2345678901234568e29}


def test_an_embedded_param_renders_as_madbench_renders_it(tmp_path):
    """Go's %v: `test {{strict}} = true` ran `test True = true` here, which failed."""
    text = """
        params: {strict: true, ratio: 1.0, big: 1234567.0, tags: [a, 1.5], none: false}
        harness: mock
        harness_config: {args: ["--strict={{strict}}"]}
        scenarios:
          - prompt: "strict={{strict}} ratio={{ratio}} big={{big}} tags={{tags}} off={{none}}"
            checks: [{type: exec, args: {cmd: [sh, -c, "test {{strict}} = true"]}}, {type: equals, value: "{{ratio}}"}]
        """
    b = load_bench(write(tmp_path, text))
    [s] = b.scenarios
    assert s.prompt == "strict=true ratio=1 big=1.234567e+06 tags=[a 1.5] off=false"
    assert s.checks[0].args["cmd"][2] == "test true = true"
    assert s.checks[1].value == 1.0  # exactly one placeholder keeps the param's type
    assert b.harness_config["args"] == ["--strict=true"]


def test_another_harness_told_the_benchs_args_is_said_before_the_run(tmp_path: Path):
    """A bench written for Claude Code (`harness_config.args: [--permission-mode, bypassPermissions]`)
    run with --harness codex: Codex refused the flag and every session ended at once, after a
    preflight that said nothing. The args are said to be the bench harness's, with the fix."""
    from benchtape.app.preflight import preflight

    bench = load_bench(write(tmp_path, """
        harness: claude-code
        harness_config:
          model: scripted
          args: [--permission-mode, bypassPermissions]
        scenarios:
          - prompt: p
        """))
    said = [n for n in preflight(bench, harness="codex").notes if "harness_config.args" in n]
    assert len(said) == 1 and said[0].startswith(f"{tmp_path / 'bench.yaml'}:2: harness_config.args --permission-mode bypassPermissions were written for the bench's harness claude-code; --harness codex passes them to codex"), said
    assert not [n for n in preflight(bench).notes if "harness_config.args" in n]  # its own harness: nothing to say
    assert not [n for n in preflight(bench, harness="claude-code").notes if "harness_config.args" in n]


def test_a_bad_harness_config_value_is_named_by_file_and_line(tmp_path: Path):
    """`harness_config: {model: 3}` was blocked as "claude-code harness_config: model must be a
    string, got int", naming no file or line, where every other refusal names both."""
    from benchtape.app.preflight import preflight

    bench = load_bench(write(tmp_path, """
        harness: claude-code
        harness_config:
          model: 3
        scenarios:
          - prompt: p
        """))
    found = [f for f in preflight(bench).blocking if "model must be a string" in f]
    assert found == [f"{tmp_path / 'bench.yaml'}:2: claude-code harness_config: model must be a string, got int"], preflight(bench).blocking
