"""What a user wrote: bench files, Eval files, evaluations, tools, tasks, params, pricing, scripts,
the YAML source they come from, and the Eval control audit (which inputs a run may differ by).
Loading is strict and every refusal names the file, the line and the fix.

Who may import it: checks, adapters, models, sandbox, recorder, replay, tasks and the app layer
(benchtape.app). It imports only the core.
"""
