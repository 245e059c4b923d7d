"""A check's `args:` key that its type never reads is a warning before any spend, naming the
file, the line, the closest known key and the type's arguments: madbench takes args as an
open map, so a typo (`gtee: 2`) grades with the default bound, a verdict nobody asked for.

The warning is only as good as each type's list of the args it reads: the first test reads
every type's example through a mapping that records each key asked of it (at construction
and at grading), and fails on a key the type does not declare."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from storekit import benchtape

from benchtape.checks import _index
from benchtape.checks.registry import REGISTRY, CheckConfigError, CheckContext, build, unknown_args
from benchtape.core.model import Action, project
from benchtape.core.results import CheckSpec


class _Recording(dict):
    """args that remember every key a check asks for."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.asked: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


def _session():
    return project(
        [
            Action("session.started", {"scenario": "s", "harness": "mock", "prompt": "fix it"}),
            Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {"file_path": "a.py"}}),
            Action("tool.result", {"call_id": "c1", "output": "x", "is_error": False}),
            Action("message.assistant", {"text": "done: changed 2 files"}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 10.0}),
        ]
    )


def _every_type() -> list[str]:
    for module in set(_index.TYPES.values()) | set(_index.PREFIXES.values()):
        importlib.import_module(f"benchtape.checks.{module}")
    return sorted(REGISTRY)


def test_every_key_a_type_reads_of_its_example_is_one_it_declares() -> None:
    session, undeclared = _session(), {}
    for name in _every_type():
        info = REGISTRY[name]
        example = yaml.safe_load(info.example) if info.example else None
        example = example[0] if isinstance(example, list) else example
        if not isinstance(example, dict) or example.get("type") != name or info.arg_names is None:
            continue  # a refused type shows another's example; a custom grader takes any key
        args = _Recording(example.get("args") or {})
        spec = CheckSpec(type=name, value=example.get("value"), args=args, threshold=example.get("threshold"), config=example.get("config") or {})
        try:
            check = build(spec)
        except CheckConfigError:
            continue  # a composite's example without its children: its args are read by the same code below
        try:
            check.evaluate(session, CheckContext())
        except Exception:  # noqa: BLE001 - a check that needs a judge or a workspace: what it read until then counts
            pass
        if args.asked - info.arg_names:
            undeclared[name] = sorted(args.asked - info.arg_names)
    assert undeclared == {}, "these types read args they do not declare (the unknown-args warning would name them): declare them, or pass accepts="
    assert len([n for n in REGISTRY if REGISTRY[n].arg_names is not None]) > 70


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (CheckSpec(type="session:tool-used", value="Read", args={"gtee": 2}), ['args.gtee is not an argument of this check, so it is ignored (did you mean "gte"?)']),
        (CheckSpec(type="session:tool-used", value="Read", args={"min": 2, "outcome": "ok", "thread": "main"}), []),
        (CheckSpec(type="contains", value="x", args={"ignore_case": True}), ["args.ignore_case is not an argument of this check, so it is ignored; it reads no args"]),
        (CheckSpec(type="llm-rubric", value="good", args={"vots": 3, "judge": "local"}), ['args.vots is not an argument of this check, so it is ignored (did you mean "votes"?)']),
        (CheckSpec(type="content-similarity", args={"expected": "a", "ignoreCase": False}), []),
        (CheckSpec(type="custom:exec", args={"command": ["true"], "anything": 1}), []),  # handed to the user's grader
        (CheckSpec(type="no-such-type", args={"x": 1}), []),  # refused on its own
    ],
)
def test_unknown_args_names_each_key_no_check_reads(spec: CheckSpec, expected: list[str]) -> None:
    found = unknown_args(spec)
    assert [f.split(": ", 1)[1].split("; its arguments")[0] for f in found] == expected
    if found and "its arguments" in found[0]:
        assert "gte" in found[0] or "votes" in found[0]


def test_preflight_and_list_warn_of_a_typo_with_its_file_and_line_and_run_still_runs(tmp_path: Path) -> None:
    bench = tmp_path / "bench.yaml"
    bench.write_text(
        "description: typo\nharness: mock\nscenarios:\n  - name: a\n    prompt: hi\n    checks:\n"
        "      - {type: contains, value: hi}\n"
        "      - type: any-of\n        checks:\n          - {type: session:tool-used, value: Read, args: {gtee: 2}}\n"
    )
    want = 'warning: bench.yaml:10: session:tool-used: args.gtee is not an argument of this check, so it is ignored (did you mean "gte"?)'
    listed = benchtape("list", "bench.yaml", cwd=tmp_path)
    assert listed.returncode == 0 and want in listed.stderr and want not in listed.stdout
    run = benchtape("run", "bench.yaml", "--db", tmp_path / "s.db", cwd=tmp_path)
    assert run.returncode in (0, 1) and "preflight: blocked" not in run.stdout + run.stderr  # a warning, never a refusal: madbench runs it
    assert want in run.stdout + run.stderr
