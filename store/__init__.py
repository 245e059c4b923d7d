"""The event store: one SQLite file, append-only history, content-addressed blobs."""
