"""Recorded judgments at scale: what regrading costs when the judge checks did not change.

A store of N sessions (distinct outputs) is graded live with 3 judge checks against the
scripted model server's Chat Completions (a keyless OpenAI-compatible provider with a
concurrency limit), then:

- regraded in `reuse` mode: every request is byte-identical to a stored one, so the
  target is ZERO requests sent;
- regraded with `--rejudge`: every request is sent again (3 × N), by G grading threads,
  while the provider admits at most `--concurrency` at once. The in-flight count is taken
  where requests leave (a transport wrapper outside the limiter), not from the limiter's
  own bookkeeping.

The grading loop here is the one the grading function runs per session (build the
checks once; evaluate each session with `CheckContext(judge=…)`) with the judge
`benchtape regrade` builds (`benchtape.replay.grading_judges.judge_for_grading`, mode `reuse`, or `rejudge`
for `--rejudge`), driven from 16 threads so the provider's concurrency limit is exercised
(`regrade` itself grades one session at a time; tests/e2e/test_judges_paths.py proves the
commands end to end).

Run by `make bench`; `--sessions 200` for a quick run. Not a test: it prints numbers and
exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from benchtape.checks.registry import CheckContext, build  # noqa: E402
from benchtape.core.model import Action
from benchtape.core.results import CheckSpec  # noqa: E402
from benchtape.models.judge_service import JudgeService  # noqa: E402
from benchtape.models.providers import OpenAITransport  # noqa: E402
from benchtape.models.server import serve  # noqa: E402
from benchtape.replay.grading_judges import judge_for_grading  # noqa: E402
from benchtape.spec.judge_config import JudgesConfig, ProviderSpec  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

CHECKS = [
    CheckSpec("llm-rubric", value="The answer names the failing test and the fix."),
    CheckSpec("answer-relevancy"),
    CheckSpec("toxicity"),
]
REPLY = 'Reasoning first. {"reason": "fine", "score": 0.9, "pass": true}'
HARMLESS = 'Nothing toxic. {"reason": "plain technical text", "score": 0.02}'


class InFlight:
    """Counts requests between leaving and their answer, across threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def transport(self, spec, env):
        meter = self

        class Metered(OpenAITransport):
            def complete(self, model, prompt, params):
                with meter.lock:
                    meter.now += 1
                    meter.peak = max(meter.peak, meter.now)
                try:
                    return super().complete(model, prompt, params)
                finally:
                    with meter.lock:
                        meter.now -= 1

        return Metered(spec, env)


def make_store(path: Path, sessions: int) -> list[str]:
    store = Store(path)
    run_id = store.new_run("import", harness="mock")
    ids = []
    for n in range(sessions):
        sid = store.new_session(run_id, "judged", harness="mock")
        text = f"test_add_{n} failed because add() subtracted; changed line {n % 40 + 1} to return a + b"
        store.append(
            sid,
            [
                Action("session.started", {"scenario": "judged", "harness": "mock", "prompt": "Say which test fails and fix it."}),
                Action("message.user", {"text": "Say which test fails and fix it."}),
                Action("final_output", {"text": text}),
                Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 10.0}),
            ],
        )
        ids.append(sid)
    store.close()
    return ids


def grading(store: Store, ids: list[str], mode: str, config: JudgesConfig, threads: int, meter: InFlight | None = None) -> tuple[float, dict, dict]:
    """(seconds, judge stats, verdict status counts) of one grading of every session."""
    grading_id = store.new_grading("regrade" if mode != "ask" else "live", checkset_sha256="bench", catalog_version="bench")
    service = JudgeService(config, {}, transports=meter.transport) if meter else JudgeService(config, {})
    judge = judge_for_grading(store, grading_id, mode=mode, judges=config, service=service)
    checks = [build(s) for s in CHECKS]
    statuses: dict[str, int] = {}
    lock = threading.Lock()

    def one(sid: str) -> None:
        session = store.load_session(sid)
        ctx = CheckContext(judge=judge)
        results = [c.evaluate(session, ctx) for c in checks]
        store.add_verdicts(grading_id, sid, [{"check_path": f"checks[{i}]", "type": c.type, "metric": c.metric, "spec": c.spec.to_dict(), "spec_sha256": c.identity, "result": r} for i, (c, r) in enumerate(zip(checks, results))])
        with lock:
            for r in results:
                statuses[r.status] = statuses.get(r.status, 0) + 1

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, ids))
    return time.perf_counter() - started, judge.stats.to_dict(), statuses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=4, help="the provider's limit")
    ap.add_argument("--threads", type=int, default=16, help="grading threads")
    args = ap.parse_args()
    n, want = args.sessions, args.sessions * len(CHECKS)
    with tempfile.TemporaryDirectory(prefix="benchtape-judges-") as scratch:  # a 21 MB store, gone after
        tmp = Path(scratch)
        db = tmp / "judges.db"
        ids = make_store(db, n)
        usage = {"tokens_in": 400, "tokens_out": 40}
        script = {"chat": [{"reply": HARMLESS, "usage": usage, "match": "rating the toxicity"}] * (2 * n) + [{"reply": REPLY, "usage": usage}] * (2 * (want - n))}
        failures = []
        with serve(script) as srv:
            provider = ProviderSpec("local", "openai", "judge-1", srv.openai_url, None, concurrency=args.concurrency, timeout=30, retries=2, price={"input": 0.5, "output": 1.5})
            config = JudgesConfig(providers={"local": provider}, default="local", explicit_default=True)
            store = Store(db)

            def sent() -> int:
                return len(srv.entries(api="chat"))

            secs, stats, statuses = grading(store, ids, "ask", config, args.threads)
            print(f"live grading    {n} sessions × {len(CHECKS)} judge checks: {sent()} requests sent, {secs:.1f} s, verdicts {statuses}")
            spend = store.judgment_totals(store.gradings()[-1]["id"])
            print(f"                judge spend recorded with the grading: {spend['requests']} requests, {spend['input_tokens']} in / {spend['output_tokens']} out tokens, ${spend['cost_usd']:.4f}")

            before = sent()
            secs, stats, statuses = grading(store, ids, "reuse", config, args.threads)
            reuse_sent = sent() - before
            print(f"regrade         {reuse_sent} requests sent (target 0), {stats['reused']} answered from stored judgments, {secs:.2f} s ({n / secs:.0f} sessions/s), verdicts {statuses}")
            if reuse_sent != 0 or stats["reused"] != want:
                failures.append(f"regrade sent {reuse_sent} requests (want 0) and reused {stats['reused']} (want {want})")

            before = sent()
            meter = InFlight()
            secs, stats, statuses = grading(store, ids, "rejudge", config, args.threads, meter)
            rejudge_sent = sent() - before
            print(f"regrade --rejudge {rejudge_sent} requests sent (target {want}), {args.threads} grading threads, at most {meter.peak} in flight (limit {args.concurrency}), {secs:.1f} s, verdicts {statuses}")
            if rejudge_sent != want or meter.peak > args.concurrency:
                failures.append(f"--rejudge sent {rejudge_sent} (want {want}) with {meter.peak} in flight (limit {args.concurrency})")
            rows = store.db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            print(f"judgments table {rows} rows (live + rejudge; reuse adds none), {db.stat().st_size / 1e6:.1f} MB store")
            store.close()
    for f in failures:
        print(f"MISSED: {f}")
    print(orjson.dumps({"sessions": n, "regrade_requests": reuse_sent, "rejudge_requests": rejudge_sent, "peak_in_flight": meter.peak, "limit": args.concurrency}).decode())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
