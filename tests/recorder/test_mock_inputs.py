"""A mock step of a tool the mock really runs (Read, Write, Edit, MultiEdit, Bash, Glob, Grep)
names the inputs that tool takes: `old_strin:` loaded, and the session recorded a KeyError as
the tool's result. Refused at its line with the closest name; any other tool's input is its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.bench import load_bench

HEAD = "description: x\nharness: mock\nscenarios:\n  - name: s\n    prompt: p\n    mock:\n      steps:\n"  # steps from line 8


def _load(tmp_path: Path, steps: str):
    path = tmp_path / "bench.yaml"
    path.write_text(HEAD + steps)
    return load_bench(path)


@pytest.mark.parametrize(
    ("steps", "line", "said", "fix"),
    [
        ("        - tool: Edit\n          input:\n            file_path: a.py\n            old_strin: x\n            new_string: y\n", 11, "`Edit` takes no input `old_strin`", "did you mean `old_string`?"),
        ("        - {tool: Edit, input: {file_path: a.py, old_string: x}}\n", 8, "`Edit` needs the input `new_string`", "e.g. `input: {file_path: …, new_string: …, old_string: …}`"),
        ("        - {tool: Bash, input: {cmd: ls}}\n", 8, "`Bash` takes no input `cmd`", "did you mean `command`?"),
        ("        - {tool: Read}\n", 8, "`Read` needs the input `file_path`", "e.g. `input: {file_path: …}`"),
        ("        - {parallel: [{tool: Glob, input: {pattern: '*.py', paht: src}}]}\n", 8, "`Glob` takes no input `paht`", "did you mean `path`?"),
    ],
)
def test_a_misspelled_or_missing_input_is_refused_at_its_line(tmp_path: Path, steps: str, line: int, said: str, fix: str) -> None:
    with pytest.raises(BadInput) as err:
        _load(tmp_path, steps)
    assert err.value.what == said and err.value.line == line and err.value.fix == fix


def test_every_input_the_tools_take_and_any_other_tools_inputs_load(tmp_path: Path) -> None:
    bench = _load(
        tmp_path,
        "        - {tool: Read, input: {file_path: a.py, offset: 1, limit: 2}}\n"
        "        - {tool: Edit, input: {file_path: a.py, old_string: x, new_string: y, replace_all: true}}\n"
        "        - {tool: Bash, input: {command: ls, timeout: 1000, description: list}}\n"
        "        - {tool: Grep, input: {pattern: x, path: ., output_mode: content, -n: true}}\n"
        "        - {tool: Lint, input: {anything: 1}, result: ok}\n",
    )
    assert len(bench.scenarios[0].mock["steps"]) == 5
