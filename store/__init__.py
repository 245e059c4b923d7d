"""The event store: one SQLite file, append-only history, content-addressed blobs. All the SQL
is here; every other room asks through a typed view of the one `Store` (benchtape.store.views:
`BrowsingStore` for reading, `GradingStore` for grading, `RecordingStore` for recording).

Who may import it: recorder, replay, tasks, formats, the app layer, and the CLI's renderers (for
types). It imports only the core.
"""
