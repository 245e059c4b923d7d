"""Registers the command groups that live in their own modules (one module per concern)."""

import importlib

for _name in ("benchtape.cmd_checks", "benchtape.cmd_replay", "benchtape.cmd_import", "benchtape.cmd_sandbox", "benchtape.cmd_init", "benchtape.cmd_report"):
    try:
        importlib.import_module(_name)
    except ModuleNotFoundError as exc:
        if exc.name != _name:
            raise
importlib.import_module("benchtape.cmd_model").register(importlib.import_module("benchtape.cli").app)
