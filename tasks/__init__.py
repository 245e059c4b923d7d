"""Tasks from a repository's history: scan (harvest), create, lint, validate (a hidden verifier
proved in clean sandboxes), list, doctor, init.

Who may import it: the app layer only. It imports core, spec, store, sandbox and adapters.
"""
