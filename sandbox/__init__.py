"""Where a session runs: the sandbox levels (none, workspace, home, container), the base
image, staging the seed tree, workspace snapshots, and the guards around a level (the
user's ~/.claude put back, writes outside the workspace).

Who may import it: recorder, replay (grading runs where the session ran), tasks and the app
layer. It imports the core, spec and adapters.
"""
