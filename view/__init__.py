"""`benchtape view`: a live, read-only local web viewer over the store.

Pages ask the application layer (benchtape.app: the same functions the CLI's commands call, over
a `BrowsingStore`) and are rendered on the server by the read side's HTML renderers
(`benchtape.replay.html`, `compare_html`); each page's JSON twin (`?format=json`) is what the
CLI's `--json` prints for the same thing, made by the same functions.

What it may import: the app layer, the core and those two renderers, nothing else (the layout
test holds it). Who may import it: the CLI (`benchtape view` starts it).
"""
