"""The application layer: benchtape's use cases, below the CLI and the viewer.

What a user can do (run an evaluation or a bench, preflight it, check a task set, write an
evaluation, run the negative control, load a `.env`) lives here once, with typed inputs and
results, so the command line, the web viewer and a notebook all call the same function.

Who may import it: the CLI command modules (`benchtape/cmd_*.py`), the viewer (`view/`), the
public API (`benchtape/__init__.py`) and a user's own script. Nothing below it (core, spec,
store, checks, adapters, models, sandbox, recorder, replay, tasks, formats) may: it composes
those rooms, it is not one of their dependencies. It never prints for people and never exits;
commands render what it returns.
"""
