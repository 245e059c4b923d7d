"""One module per harness: how to start the tool, and how its native output becomes actions."""
