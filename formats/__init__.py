"""The interchange formats at benchtape's edge: ATIF trajectories and Inspect AI logs.

Exports render a stored session through one grouping (conversation.py) into each format,
built with the format's own published package (`atif`; `inspect_ai`, an optional extra).
Reading ATIF is an adapter (benchtape.adapters.atif_trajectory), so an import keeps its raw
lines and can be re-parsed like any other.

Who may import it: the app layer only (benchtape.app.exporting). It imports core, store,
adapters and replay.
"""
