"""One module per harness: how to start the tool, and how its native output becomes actions.

Who may import it: models, sandbox, recorder, tasks, formats and the app layer. It imports the
core and spec.
"""
