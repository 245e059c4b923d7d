"""The negative control's run options: every scenario under the no-op agent."""

from __future__ import annotations

from benchtape.adapters.endpoints import is_scripted
from benchtape.core.errors import BadInput
from benchtape.recorder.runner import RunOptions
from benchtape.spec.bench import BenchSpec


def control_options(benches: list[BenchSpec], *, allow_host_writes: bool, argv: list[str] | None = None, harness: str | None = None, model: str | None = None) -> RunOptions:
    """The no-op agent, scripts ignored: the mock, or a real binary whose scripted model says the
    prompt back (never a real model: a negative control must not spend). One at a time when a
    scenario runs in the real directory."""
    from benchtape.app.preflight import known_harness

    harness = harness or "mock"
    if harness != "mock" and known_harness(harness) and not is_scripted(model):  # an unknown one is preflight's finding
        raise BadInput(f"the negative control through {harness} needs --model scripted (the no-op scripted model): a real model would spend and do something", fix="add --model scripted, or drop --harness to use the mock")
    serial = any(sc.sandbox.level == "none" for b in benches for sc in b.scenarios)
    # allow_network for the mock: the no-op agent reaches for nothing, whatever network it is given
    # (a real binary keeps the bench's network rules: it would reach for its model)
    return RunOptions(harness=harness, model=model if harness != "mock" else None, noop=True, run_kind="control", allow_host_writes=allow_host_writes, allow_network=harness == "mock", concurrency=1 if serial else 4, argv=list(argv or []))
