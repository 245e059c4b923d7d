"""The floor everything stands on: the event model and its payloads, results, errors, exit codes,
the command runner, judgments, version.

Who may import it: every room. It imports no other room (not even by a module name in a string).
"""
