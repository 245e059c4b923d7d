"""The floor everything stands on: the event model and its payloads, results, errors, exit codes, the command runner, judgments, version."""
