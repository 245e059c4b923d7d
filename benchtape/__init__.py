"""benchtape: benchmark agentic coding tools; record once, grade many times.

The small public API: `load_benches`, `run_benches`, `RunOptions`, `Store`.
"""

from recorder.version import VERSION as __version__  # noqa: F401
