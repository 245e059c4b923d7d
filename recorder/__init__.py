"""The write side: record sessions into the store. One run loop (`scheduler.Scheduler`) with
its executors (local threads, or Ray: `ray_executor`), one session recorded by `runner.Runner`
into a level's sandbox, bench runs (`bench_run`) and evaluation cells (`cellrun`, `matrix`,
`toolversions`), transcripts imported (`importer`), interactive sessions (`interactive`), what a
killed run left recovered (`recover`, `spool`). It writes through `RecordingStore`.

Benches, staging and sandboxes are not here any more (spec/ and sandbox/ hold them), nor is the
store (store/), nor preflight (benchtape.app.preflight).

Who may import it: the app layer only (replay never does: grading reads the store, not the
recorder). It imports core, spec, store, adapters, models and sandbox.
"""
