"""benchtape `regrade` beside Inspect AI's `inspect score`, on the same sessions (optional).

Runs only where inspect-ai is installed: in this interpreter, or in the one
$BENCHTAPE_INSPECT_PYTHON names (keep it out of benchtape's own venv: it is a large install).
Otherwise it says how to enable it and exits 0.

The same N sessions on both sides, each ~100 messages shaped like regrade_query's: the user's
prompt, tool calls paired with their results, thoughts, and a final answer. benchtape stores
them as actions and re-grades them with one `contains` check; Inspect holds them as the samples
of an eval log (built from a real one-sample `mockllm` run, so the log is valid) and re-scores
them with its `includes` scorer, the same question. Both run as fresh processes, as a user runs
them: each is timed at N and at 1 session, so the fixed cost (start-up) and the cost per
session are read apart. `inspect score --stream` is timed too.

    python benchmarks/inspect_compare.py [--sessions 1000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import record  # noqa: E402
from benchmarks.regrade_query import CHECKS, bench_yaml, session_actions  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

TARGET_FASTER = 100.0  # regrade's cost per session at least this many times below inspect score's (issue 48)
BENCH = bench_yaml("benchtape beside inspect score", CHECKS[:1])  # is "done" in the output: as Inspect's includes()

TASK = """\
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def bench():
    return Task(dataset=[Sample(input="fix the thing", target="done")], solver=generate(), scorer=includes())
"""

# Run by the Inspect interpreter: the one-sample log's sample, copied to N sessions' worth.
BUILD = """\
import sys
from pathlib import Path
from inspect_ai.log import EvalResults, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
from inspect_ai.tool import ToolCall

source, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
log = read_eval_log(next(Path(source).glob("*.eval")))
base = log.samples[0]
tools = ("Read", "Grep", "Edit", "Bash")
samples = []
for i in range(n):
    messages = [ChatMessageUser(content="fix the thing")]
    call = 0
    while len(messages) < 93:
        call += 1
        tool, cid = tools[call % 4], f"call_{call:04d}"
        messages.append(ChatMessageAssistant(content="", tool_calls=[ToolCall(id=cid, function=tool, arguments={"file_path": f"src/mod_{call}.py", "pattern": "def .*"})]))
        messages.append(ChatMessageTool(content=f"line {call}\\n" * 8, tool_call_id=cid, function=tool))
        if call % 2 == 0:
            messages.append(ChatMessageAssistant(content=f"step {call}: the next file to look at is mod_{call + 1}"))
    final = f"done: changed {i % 7 + 1} files"
    messages.append(ChatMessageAssistant(content=final))
    output = ModelOutput.from_content(model="mockllm/model", content=final)
    samples.append(base.model_copy(update={"id": i + 1, "epoch": 1, "messages": messages, "output": output, "scores": {}}))
# the one-sample run ends in an error here (no network for its token counter): the log is made whole
results = EvalResults(total_samples=n, completed_samples=n)
write_eval_log(log.model_copy(update={"samples": samples, "status": "success", "error": None, "results": results}), out)
"""


def inspect_python() -> str | None:
    """An interpreter that has inspect-ai, or None."""
    for python in (os.environ.get("BENCHTAPE_INSPECT_PYTHON"), sys.executable):
        if python and subprocess.run([python, "-c", "import inspect_ai"], capture_output=True).returncode == 0:
            return python
    return None


def offline(argv: list[str]) -> list[str]:
    """Inspect's processes in a network namespace of their own (loopback only): its token
    counter would fetch an encoding from the internet, and nothing here may leave the machine."""
    return ["unshare", "--net", *argv] if shutil.which("unshare") and os.geteuid() == 0 else argv


def timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def best(argv: list[str], cwd: Path, rounds: int, output: Path | None = None) -> float:
    """The fastest of `rounds` runs (`output`: a file the command writes, removed before each
    run: `inspect score` asks before overwriting one)."""
    times = []
    for _ in range(rounds):
        if output is not None:
            output.unlink(missing_ok=True)
        times.append(timed(argv, cwd))
    return min(times)


def inspect_logs(python: str, tmp: Path, n: int) -> tuple[Path, Path]:
    """Eval logs of n and of 1 session(s)."""
    (tmp / "task.py").write_text(TASK)
    (tmp / "build.py").write_text(BUILD)
    inspect = offline([python, "-m", "inspect_ai"])
    subprocess.run([*inspect, "eval", "task.py", "--model", "mockllm/model", "--log-dir", str(tmp / "one"), "--display", "none"], cwd=tmp, check=True, capture_output=True)
    logs = []
    for count in (n, 1):
        path = tmp / f"sessions-{count}.eval"
        subprocess.run(offline([python, "build.py", str(tmp / "one"), str(count), str(path)]), cwd=tmp, check=True, capture_output=True)
        logs.append(path)
    return logs[0], logs[1]


def benchtape_stores(tmp: Path, n: int) -> tuple[Path, Path]:
    """Stores of n and of 1 session(s), one run each, through the real Store.append."""
    stores = []
    for count in (n, 1):
        db = tmp / f"sessions-{count}.db"
        store = Store(db)
        run_id = store.new_run("run", bench_path="bench.yaml", harness="mock")
        for i in range(count):
            store.append(store.new_session(run_id, "bench", harness="mock"), session_actions(i))
        store.close()
        stores.append(db)
    return stores[0], stores[1]


def per_session(at_n: float, at_1: float, n: int) -> float:
    return max(at_n - at_1, 0.0) / (n - 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)  # best of 3 moved the per-session ratio between 54x and 137x on 2 cores
    args = ap.parse_args()
    python = inspect_python()
    if python is not None and offline(["x"]) == ["x"]:
        print("inspect score comparison: skipped (it needs `unshare --net`, as root, to keep Inspect off the network)")
        return 0
    if python is None:
        print("inspect score comparison: skipped (inspect-ai is not installed; `python -m venv /tmp/inspect && /tmp/inspect/bin/pip install inspect-ai`, then BENCHTAPE_INSPECT_PYTHON=/tmp/inspect/bin/python make bench)")
        return 0
    n = args.sessions
    tmp = Path(tempfile.mkdtemp(prefix="benchtape-inspect-"))
    try:
        big_log, one_log = inspect_logs(python, tmp, n)
        big_db, one_db = benchtape_stores(tmp, n)
        (tmp / "bench.yaml").write_text(BENCH)
        os.sync()
        score = offline([python, "-m", "inspect_ai", "score", "--scorer", "includes", "--display", "none"])
        regrade = [sys.executable, "-m", "benchtape", "regrade", "--bench", "bench.yaml", "--all", "--plain"]
        scored = tmp / "scored.eval"
        inspect_n = best([*score, "--output-file", str(scored), str(big_log)], tmp, args.rounds, scored)
        inspect_1 = best([*score, "--output-file", str(scored), str(one_log)], tmp, args.rounds, scored)
        stream_n = best([*score, "--stream", "8", "--output-file", str(scored), str(big_log)], tmp, args.rounds, scored)
        ours_n = best([*regrade, "--db", str(big_db)], tmp, args.rounds)
        ours_1 = best([*regrade, "--db", str(one_db)], tmp, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ours, theirs, streamed = per_session(ours_n, ours_1, n), per_session(inspect_n, inspect_1, n), per_session(stream_n, inspect_1, n)
    print(textwrap.dedent(f"""\
        {n} sessions of ~100 messages, one 'is "done" in the output' check; fresh processes, wall time, best of {args.rounds}
          benchtape regrade        {ours_n:6.2f} s at {n}, {ours_1:5.2f} s at 1  → {ours * 1e3:7.3f} ms a session
          inspect score            {inspect_n:6.2f} s at {n}, {inspect_1:5.2f} s at 1  → {theirs * 1e3:7.3f} ms a session ({theirs / ours:.0f}× benchtape's)
          inspect score --stream   {stream_n:6.2f} s at {n}                → {streamed * 1e3:7.3f} ms a session ({streamed / ours:.0f}× benchtape's)
          end to end at {n}: benchtape {inspect_n / ours_n:.0f}× faster than inspect score, {stream_n / ours_n:.0f}× than --stream"""))
    faster = theirs / ours if ours else float("inf")
    print(f"  per session: benchtape {faster:.0f}× faster than inspect score (target ≥ {TARGET_FASTER:g}×) {'OK' if faster >= TARGET_FASTER else 'MISSED'}")
    record("regrade beside inspect score, per session", f"{ours * 1e3:.3f} ms ({faster:.0f}× faster)", f"inspect score {theirs * 1e3:.2f} ms, --stream {streamed * 1e3:.2f} ms", f"≥ {TARGET_FASTER:g}× inspect score", faster >= TARGET_FASTER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
