"""The fuzz worker: runs one input at a time against a checkout, under an address-space limit.

Started by fuzzkit with `CODE_DIR MEM_BYTES`; reads length-prefixed pickles `(kind, payload)`
on stdin and answers `(outcome, detail, seconds, peak_rss_mb)` on its own stdout (stray
prints of the code under test go to stderr). Outcomes: ok, refused (BadInput), unclear (an
OSError or TarError a caller catches, or a bench refusal without a file or a fix), escape (a restore wrote
outside its folder), traceback (anything else), memory (MemoryError: the worker exits).

It must run against older checkouts too (the "before" figures), so it detects the API.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path


def describe(exc: BaseException) -> str:
    """The exception and where in benchtape's code it was raised (the innermost frame of the checkout)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if CODE in f.filename and "fuzz_worker" not in f.filename] or frames
    where = f"{os.path.relpath(ours[-1].filename, CODE)}:{ours[-1].lineno}" if ours else "?"
    return f"{type(exc).__name__} at {where}: {str(exc)[:160]}"


# ---------------------------------------------------------------- targets


def bench_target(payload: dict, folder: Path) -> tuple[str, str]:
    from benchtape.app.api import control_audit, load_inputs, preflight_all
    from benchtape.core.errors import BadInput
    from benchtape.recorder.runner import RunOptions
    from benchtape.spec.audit import Confounded

    (folder / "td").mkdir()
    (folder / "td" / "a.txt").write_text("a\n")
    (folder / "bench.yaml").write_text(payload["bench"], encoding="utf-8", errors="replace")
    path = folder / "bench.yaml"
    if payload.get("eval") is not None:
        path = folder / "eval.yaml"
        path.write_text(payload["eval"], encoding="utf-8", errors="replace")
    try:
        ev, loaded = load_inputs([path], {})
        preflight_all(loaded, RunOptions(), ev)
        if ev is not None:
            try:
                control_audit(ev)
            except Confounded:
                pass
        for bench in loaded:  # what `benchtape list` prints
            for sc in bench.scenarios:
                f"{sc.name} {sc.sandbox.level} {sc.timeout:g} {sc.testdata}"
    except BadInput as exc:
        if not exc.file or not exc.fix:  # the brief: every refusal names the file, the line and the fix
            return "unclear", f"BadInput without {'a fix' if exc.file else 'a file'}: {exc.what[:120]}"
        return "refused", exc.what[:160]
    return "ok", ""


def lines_target(payload: dict, folder: Path) -> tuple[str, str]:
    from benchtape.adapters.transcripts import detect_format, parser_for, read_transcript
    from benchtape.core.errors import BadInput

    fmt, lines = payload["fmt"], payload["lines"]
    path = folder / "t.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "replace"))
    try:
        detect_format(path)
    except BadInput:
        pass
    imported = read_transcript(path, fmt)  # the import
    parser = parser_for(fmt)  # reparse: the stored raw lines fed again
    actions = []
    for line in lines:
        actions += parser.feed(line)
    actions += parser.finish()
    try:  # the store's writer refuses a payload that does not match its kind: no hostile line may make one
        from benchtape.core.payloads import check_payloads
    except ImportError:  # a checkout from before typed payloads
        return "ok", ""
    check_payloads(imported.actions)
    check_payloads(actions)
    return "ok", ""


def tar_target(payload: bytes, folder: Path) -> tuple[str, str]:
    import tarfile

    from benchtape.core.errors import BadInput
    from benchtape.sandbox.snapshot import restore

    jail = folder / "jail"
    jail.mkdir()
    (jail / "outside.txt").write_text("canary")
    dest = jail / "dest"
    outcome, detail = "ok", ""
    try:
        if "sha256" in inspect.signature(restore).parameters:
            restore(payload, dest, sha256=hashlib.sha256(payload).hexdigest())
        else:
            restore(payload, dest)
    except BadInput as exc:
        outcome, detail = "refused", exc.what[:160]
    except (OSError, tarfile.TarError) as exc:  # the graders catch these, with no clear message
        outcome, detail = "unclear", describe(exc)
    escaped = escapes(jail, dest)
    if escaped:
        outcome, detail = "escape", escaped
    cleanup(jail)  # as grading does after every restore: an exception here is a traceback
    return outcome, detail


def escapes(jail: Path, dest: Path) -> str:
    """Anything written in the jail beside dest, or a link under dest that resolves outside it."""
    if (jail / "outside.txt").read_text() != "canary":
        return "outside.txt was overwritten"
    others = sorted(p.name for p in jail.iterdir() if p.name not in ("outside.txt", "dest"))
    if others:
        return f"written beside the restore folder: {others[:3]}"
    real_dest = os.path.realpath(dest)
    stack = [str(dest)] if dest.is_dir() and not dest.is_symlink() else []
    while stack:  # iterative: an old restore may have made folders thousands deep
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for e in entries:
            if e.is_symlink():
                real = os.path.realpath(e.path)
                if real != real_dest and not real.startswith(real_dest + os.sep):
                    return f"link {e.path} -> {os.readlink(e.path)} escapes"
            elif e.is_dir(follow_symlinks=False):
                stack.append(e.path)
    return ""


def cleanup(folder: Path) -> None:
    try:
        from benchtape.sandbox.trees import remove_tree
    except ImportError:  # before the fix, grading cleaned up with rmtree
        shutil.rmtree(folder, ignore_errors=True)
        return
    remove_tree(folder)


def path_target(payload: str, folder: Path) -> tuple[str, str]:
    """`benchtape list PATH` on a path that is no bench (a file the kernel cannot read, a device)."""
    from benchtape.app.api import load_inputs
    from benchtape.core.errors import BadInput

    try:
        load_inputs([Path(payload)], {})
    except BadInput as exc:
        if not exc.file or not exc.fix:
            return "unclear", f"BadInput without {'a fix' if exc.file else 'a file'}: {exc.what[:120]}"
        return "refused", exc.what[:160]
    return "ok", ""


def server_target(payload: bytes, folder: Path) -> tuple[str, str]:
    """Raw bytes at the scripted model server: answered or closed within a few seconds (a
    silent client at its idle limit), and the server answers the next request."""
    import socket

    from benchtape.models.server import serve

    def exchange(port: int, data: bytes) -> tuple[bytes, bool]:
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.settimeout(5)
            s.sendall(data)
            got = b""
            try:
                while chunk := s.recv(65536):
                    got += chunk
            except (TimeoutError, ConnectionResetError):
                return got, False
            return got, True

    with serve(idle_seconds=1.0) as srv:
        got, closed = exchange(srv.port, payload)
        if not closed:
            raise AssertionError(f"the connection was held open: {got[:80]!r}")
        after, _ = exchange(srv.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        if b" 200 " not in after.split(b"\r\n", 1)[0]:
            raise AssertionError(f"the server stopped serving: {after[:80]!r}")
    status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/1.") else "closed"
    return ("refused" if status.startswith("4") else "ok"), status


def fault_target(payload: dict, folder: Path) -> tuple[str, str]:
    """kill -9 of a recording `benchtape run` at a random moment, then `benchtape recover`:
    no printed call lost, nothing left running, no temp folder, ~/.claude as it was."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))
    from killkit import run_trial

    trial = run_trial(folder / "trial", level=payload["level"], calls=200, kill_window=(0.0, 0.6), seed=payload["seed"])
    if not trial.clean or trial.ledger == 0:
        raise AssertionError(f"kill -9 then recover left it unclean: {trial}")
    return "ok", f"killed after {trial.killed_after}s, {trial.stored} calls kept"


TARGETS = {"bench": bench_target, "lines": lines_target, "tar": tar_target, "path": path_target, "server": server_target, "fault": fault_target}


def force_remove(folder: Path) -> None:
    """The worker's own scratch cleanup, whatever the input left (not part of any figure)."""
    subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=False)


def main() -> None:
    global CODE
    CODE = os.path.realpath(sys.argv[1])
    sys.path.insert(0, CODE)
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ["DOCKER_HOST"] = "unix:///nonexistent/benchtape-fuzz.sock"  # preflight answers at once
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    scratch = Path(tempfile.mkdtemp(prefix="benchtape-fuzz-", dir=os.getcwd()))  # in the run's folder: gone with it should this worker be killed
    try:
        while True:
            head = inp.read(4)
            if len(head) < 4:
                return
            kind, payload = pickle.loads(inp.read(struct.unpack(">I", head)[0]))
            folder = scratch / "in"
            folder.mkdir()
            started = time.monotonic()
            memory = False
            try:
                outcome, detail = TARGETS[kind](payload, folder)
            except MemoryError:
                outcome, detail, memory = "memory", "MemoryError", True
            except BaseException as exc:  # noqa: BLE001 - the point: anything else is a traceback
                outcome, detail = "traceback", describe(exc)
            seconds = time.monotonic() - started
            force_remove(folder)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            answer = pickle.dumps((outcome, detail, seconds, peak))
            out.write(struct.pack(">I", len(answer)) + answer)
            out.flush()
            if memory:
                return  # a worker that ran out of memory is replaced
    finally:
        force_remove(scratch)


CODE = ""

if __name__ == "__main__":
    main()
