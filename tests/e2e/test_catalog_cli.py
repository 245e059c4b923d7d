"""`benchtape checks` and `benchtape version` as a user runs them."""

import json

from cli import benchtape


def test_checks_lists_families_and_describes_one():
    out = benchtape("checks")
    assert out.returncode == 0
    assert "session:tool-used" in out.stdout and "llm-rubric" in out.stdout
    assert "not supported in this version" not in out.stdout and "92 check types" in out.stdout
    one = benchtape("checks", "trajectory:tool-used")
    assert one.returncode == 0 and "alias of session:tool-used" in one.stdout and "outcome" in one.stdout


def test_checks_json_and_unknown_type():
    doc = json.loads(benchtape("checks", "--json").stdout)
    types = {c["type"] for c in doc["checks"]}
    assert {"exec", "contains", "session:tools-only", "environment:plugin-loaded", "assert-set"} <= types
    assert len(types) == 92 and doc["refused"] == {}
    assert {"llm-rubric", "ts", "js", "custom:gosrc", "custom:wasm", "model:current"} <= types
    bad = benchtape("checks", "contians")
    assert bad.returncode == 2 and "contains" in bad.stderr


def test_version_and_help_have_examples():
    assert benchtape("version").stdout.startswith("benchtape ")
    for cmd in ("run", "demo", "list", "preflight", "checks"):
        out = benchtape(cmd, "--help")
        assert out.returncode == 0 and "Example:" in out.stdout, cmd


def test_init_writes_a_starter_bench_that_runs_and_holds_its_control(tmp_path):
    out = benchtape("init", tmp_path / "b")
    assert out.returncode == 0 and (tmp_path / "b" / "madbench.yaml").is_file()
    assert f"next: cd {tmp_path / 'b'} && benchtape run" in out.stdout
    (tmp_path / "here").mkdir()
    here = benchtape("init", ".", cwd=tmp_path / "here")
    assert here.returncode == 0 and "next: benchtape run " in here.stdout  # not `cd . &&`
    assert benchtape("run", "--db", tmp_path / "x.db", cwd=tmp_path / "b").returncode == 1  # two scenarios fail by design
    assert benchtape("check", "--db", tmp_path / "x.db", cwd=tmp_path / "b").returncode == 0
    again = benchtape("init", tmp_path / "b")
    assert again.returncode == 0 and "already exists" in again.stdout


def test_every_example_in_a_commands_help_prints_on_its_own_line_as_written():
    """`run --help` ran its two examples into one line (click rewraps a paragraph), and long
    ones broke inside a word."""
    import inspect

    import click
    import typer.main

    from benchtape.cli import build

    def commands(group: click.Command, prefix: str) -> list[tuple[str, click.Command]]:
        out = [(prefix, group)]
        for name, sub in getattr(group, "commands", {}).items():
            out += commands(sub, f"{prefix} {name}")
        return out

    root = typer.main.get_command(build())
    checked = 0
    for name, command in commands(root, "benchtape"):
        if command.callback is None:
            continue
        doc = inspect.getdoc(command.callback) or ""
        examples = [line.strip() for line in doc.splitlines() if line.strip().startswith("Example:")]
        if not examples:
            continue
        with click.Context(command, info_name=name) as ctx:
            shown = [line.strip() for line in command.get_help(ctx).splitlines()]
        for example in examples:
            assert example in shown, f"{name} --help: {example!r} is not a line of its own"
            checked += 1
    assert checked > 20
