"""The application layer: benchtape's use cases, below the CLI and the viewer.

What a user can do (run an evaluation or a bench, preflight it, check a task set, write an
evaluation, run the negative control, load a `.env`) lives here once, with typed inputs and
results, so the command line, the web viewer and a notebook all call the same function.

One module per concern: `api` (run benches, grade live: the public Python API's home),
`evaluation_run` and `task_check` (an evaluation, and the negative control of a task set),
`preflight` and `controls`, `sessions` (browsing: the CLI's read commands and the viewer's
pages), `gradings`, `comparison`, `reports`, `exporting`, `ingest`, `runs`, `evaluations`,
`evaluation_create`, `tasks`, `catalog`, `maintenance`, `envfile`, and `stores` (how `--db`
becomes a typed store view). Several are thin on purpose: the door through which the front
ends reach a room, so the layout test can hold them to it; the use cases both front ends
share (`comparison.compare`, `maintenance.verify`) are one function here.

Who may import it: the CLI (`benchtape/cmd_*.py` and its core), the CLI's renderers, the viewer
(`view/`), the public API (`benchtape/__init__.py`) and a user's own script. Nothing below it
(core, spec, store, checks, adapters, models, sandbox, recorder, replay, tasks, formats) may:
it composes those rooms. It imports no front end (no renderer, command or viewer module): a
screen is handed in (`evaluation_run.EvaluationScreen`).
"""
