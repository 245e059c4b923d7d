"""Where a session runs: the sandbox levels (none, workspace, home, container), the base
image, staging the seed tree, workspace snapshots, and the guards around a level (what a
tool keeps in the user's HOME put back, writes outside the workspace).

It knows no harness by name: a harness hands it a launch plan (core/launch_plan.py: mounts, home
JSON, what of your HOME to put back) and its command's argv and env through `spawn`.

Who may import it: recorder, replay (grading runs where the session ran), tasks and the app
layer. It imports the core, spec and tools (the pinned agent CLIs mounted into a container),
never the adapters (tests/test_layout.py).
"""
