"""Speed of restoring a snapshot of many small files, against a floor.

The floor is creating the same empty files directly (one open + close each, in the same
folders): file creation is what restoring them cannot avoid. On a shared, busy disk the
wall times swing several-fold between runs; the CPU time is restore's own cost. Then `restore` of a tar of
those files (sha256 checked), and removing the restored tree. `--code DIR` imports
`restore` from another checkout, to compare before and after.

Run by `make bench`. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import io
import os
import resource
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_tar(n: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i in range(n):
            info = tarfile.TarInfo(f"d{i // 1000}/f{i}.txt")
            tar.addfile(info)
    return buf.getvalue()


def floor(n: int, folder: Path) -> float:
    started = time.monotonic()
    for d in range((n + 999) // 1000):
        os.mkdir(folder / f"d{d}")
    for i in range(n):
        os.close(os.open(folder / f"d{i // 1000}" / f"f{i}.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    return time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose restore() is measured")
    args = ap.parse_args()
    sys.path.insert(0, str(args.code))
    from benchtape.sandbox.snapshot import restore

    try:
        from benchtape.sandbox.trees import remove_tree
    except ImportError:  # a checkout from before it existed
        import shutil

        remove_tree = shutil.rmtree

    data = build_tar(args.files)
    sha = hashlib.sha256(data).hexdigest()
    checks_hash = "sha256" in inspect.signature(restore).parameters
    with tempfile.TemporaryDirectory(prefix="bench-restore-") as tmp:
        base = Path(tmp)
        (base / "floor").mkdir()
        t_floor = floor(args.files, base / "floor")
        started, cpu = time.monotonic(), time.process_time()
        if checks_hash:
            restore(data, base / "restored", sha256=sha)
        else:
            restore(data, base / "restored")
        t_restore, cpu_restore = time.monotonic() - started, time.process_time() - cpu
        started = time.monotonic()
        remove_tree(base / "restored")
        t_remove = time.monotonic() - started
        remove_tree(base / "floor")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"restore {args.files:,} empty files ({len(data) / 1e6:.0f} MB tar, code {args.code}):")
    print(f"  floor (create them directly)  {t_floor:7.1f} s")
    print(f"  restore                       {t_restore:7.1f} s   {t_restore / t_floor:.1f}x the floor{' (sha256 checked)' if checks_hash else ''}")
    print(f"  restore, CPU time only        {cpu_restore:7.1f} s   (wall time on a busy disk is mostly waiting for it)")
    print(f"  remove the restored tree      {t_remove:7.1f} s")
    print(f"  peak RSS                      {peak:7d} MB")


if __name__ == "__main__":
    main()
