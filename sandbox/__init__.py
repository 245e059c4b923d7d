"""Where a session runs: the sandbox levels (none, workspace, home, container), the base
image, staging the seed tree, workspace snapshots, and the guards around a level (the
user's ~/.claude put back, writes outside the workspace)."""
