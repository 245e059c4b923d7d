"""`benchtape view`: a live, read-only local web viewer over the store.

Pages are rendered on the server by the read side's own renderers (`benchtape.replay.html`,
`compare_html`) over the one session projection; each page's JSON twin (`?format=json`) is
what the CLI's `--json` prints for the same thing, made by the same functions.
"""
