"""`make fuzz`: a long fuzz run that prints its figures (inputs, tracebacks, hangs, peak memory).

    python tests/fuzz/run_fuzz.py --inputs 2000            # per kind (bench, lines, tar; harbor, repo up to --box-inputs)
    python tests/fuzz/run_fuzz.py --code /path/to/checkout  # the same corpus against other code

Besides the generated corpus, every fixed hostile and fault case (corpus.hostile: huge
bench and Eval files, unreadable paths, raw bytes at the model server, a kill -9 and
recover) runs once, in the same bounded worker. Then a real `benchtape view` takes
`--viewer-requests` hypothesis-drawn requests of each kind (hostile paths, query values, Host
headers, pages of a store with a script in every field; viewer_fuzz.py), within
`--viewer-seconds`.

Exit 1 when any input gave a traceback, hung, ran out of memory, crashed the worker or
escaped a restore; the failing inputs are saved (pickles of (kind, payload, detail)).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tests/: realdatakit, as pytest's rootdir gives the suite

from corpus import ROOT, corpus, hostile  # noqa: E402
from fuzzkit import run  # noqa: E402
from viewer_fuzz import run_viewer_fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=2000, help="inputs per kind")
    ap.add_argument("--box-inputs", type=int, default=300, help="at most this many hostile Harbor folders and hostile repositories (each makes real files and git commits)")
    ap.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random, printed)")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout to fuzz (default: this one)")
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per input before it counts as a hang")
    ap.add_argument("--mem-limit", type=int, default=2048, help="MiB of address space for the worker")
    ap.add_argument("--save", type=Path, default=Path(".benchtape/fuzz-failures"), help="where failing inputs are saved")
    ap.add_argument("--viewer-requests", type=int, default=500, help="requests per kind at a real `benchtape view` (0: none)")
    ap.add_argument("--viewer-seconds", type=float, default=300.0, help="the viewer fuzz's whole time budget")
    args = ap.parse_args()
    seed_value = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"generating {args.inputs} inputs per kind with hypothesis (seed {seed_value}) ...", flush=True)
    boxes = min(args.inputs, args.box_inputs)  # each a real git repository or task folder: bounded
    inputs = corpus(args.inputs, args.inputs, args.inputs, seed_value, n_harbor=boxes, n_repo=boxes) + hostile()  # and each fixed hostile and fault case once
    print(f"running {len(inputs)} inputs against {args.code} ({args.time_limit:g} s and {args.mem_limit} MiB per input) ...", flush=True)
    figures = run(inputs, code=args.code, time_limit=args.time_limit, mem_bytes=args.mem_limit << 20, save=args.save)
    print(figures.report(f"fuzz figures (seed {seed_value}, code {args.code})"))
    if figures.failures:
        print(f"failing inputs saved in {args.save}")
    bad = figures.bad
    if args.viewer_requests:
        print(f"{args.viewer_requests} requests per kind at a real `benchtape view` (at most {args.viewer_seconds:g} s) ...", flush=True)
        viewer = run_viewer_fuzz(args.viewer_requests, seed_value, time_limit=args.time_limit, budget_s=args.viewer_seconds)
        print(viewer.report(f"viewer fuzz figures (seed {seed_value})"))
        bad += viewer.bad
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
