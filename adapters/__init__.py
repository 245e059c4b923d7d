"""One module per harness: how to start the tool, and how its native output becomes actions.

A harness also says what the sandbox must lay out for it (`base.launch_plan`: the mounts, its
first-run JSON under HOME, what it keeps in your HOME to put back at level workspace): the
sandbox carries the plan out without knowing which harness made it.

Who may import it: recorder, tasks, formats and the app layer (never models or the sandbox).
It imports the core, spec and tools (the pinned agent CLIs).
"""
