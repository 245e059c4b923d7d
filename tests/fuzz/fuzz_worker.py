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


SECRET = "host-secret-5d1e: the host read this file"


def _link(path: Path, how: str | None, folder: Path, secret: Path) -> None:
    """Make `path` (a file or folder of the task) a link of the kind `how` names."""
    if how is None:
        return
    if how == "inside" and path.name != "instruction.md":
        return  # only the prompt has a sibling to point at here
    kept = path.with_name(path.name + ".orig")
    if path.exists() or path.is_symlink():
        path.rename(kept)
    target = {"outside": secret if kept.is_file() or not kept.exists() else secret.parent, "inside": kept, "dangling": folder / "nowhere", "folder": secret.parent}[how]
    path.symlink_to(target)


def harbor_target(payload: dict, folder: Path) -> tuple[str, str]:
    """A hostile Harbor task folder through the loader, and hostile verifier output through the
    reward reader: refused (BadInput with a file), or loaded with nothing from the host in what
    was read and every timeout finite; a reward only a finite number from a regular file."""
    import math

    from benchtape.core.errors import BadInput
    from benchtape.spec.harbor_task import load_harbor_task

    secret = folder / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    (secret.parent / "test.sh").write_text(SECRET + "\n")
    task = folder / "task"
    shutil.copytree(Path(CODE) / "fixtures-red" / "harbor" / "hello-file", task)
    (task / "task.toml").write_bytes(payload["toml"])
    for name, how in payload["links"].items():
        _link(task / name, how, folder, secret)
    outcome, detail = "ok", ""
    try:
        loaded = load_harbor_task(task)
    except BadInput as exc:
        if not exc.file:
            return "unclear", f"BadInput without a file: {exc.what[:120]}"
        if SECRET in exc.render():
            return "escape", "a host file's text in the error"
        outcome, detail = "refused", exc.what[:160]
    else:
        if SECRET in loaded.prompt() or SECRET in (loaded.runtime.tests_dir / "test.sh").read_text(errors="replace"):
            return "escape", "a host file read as the task's"
        numbers = [loaded.verify.timeout, loaded.runtime.agent_timeout, loaded.runtime.build_timeout, loaded.runtime.cpus]
        if any(v is not None and not (math.isfinite(v) and v < 1e7) for v in numbers):
            return "unclear", f"a non-finite or absurd number was accepted: {numbers}"
    reward_outcome = _reward_case(payload, folder, secret)
    return (reward_outcome if reward_outcome[0] != "ok" else (outcome, detail))


def _reward_case(payload: dict, folder: Path, secret: Path) -> tuple[str, str]:
    import math

    from benchtape.sandbox.verifier import read_reward

    logs = folder / "logs"
    logs.mkdir()
    shape, text = payload["shape"], payload["reward"]
    linked = shape.startswith("link")
    if shape in ("txt", "json"):
        (logs / f"reward.{shape}").write_text(text)
    elif shape == "link-txt":
        secret.write_text(text)
        (logs / "reward.txt").symlink_to(secret)
    elif shape == "link-json":
        secret.write_text(text)
        (logs / "reward.json").symlink_to(secret)
    elif shape == "link-folder":
        shutil.rmtree(logs)
        (secret.parent / "reward.txt").write_text(text)
        logs.symlink_to(secret.parent)
    elif shape == "fifo":
        os.mkfifo(logs / "reward.txt")
    elif shape == "dir":
        (logs / "reward.txt").mkdir()
    elif shape == "big":
        (logs / "reward.txt").write_text("1" + " " * (4 << 20))
    try:
        reward = read_reward(logs) if shape != "link-folder" else read_reward(folder, "logs")
    except ValueError as exc:
        if SECRET in str(exc):
            return "escape", "a host file's text in the reward's error"
        return "ok", ""
    if reward is not None and linked:
        return "escape", f"a reward read through a link ({shape})"
    if reward is not None and not math.isfinite(reward):
        return "escape", f"a non-finite reward counted: {reward}"
    return "ok", ""


def repo_target(payload: dict, folder: Path) -> tuple[str, str]:
    """A real git change with hostile file names through the harvest's split and the patch
    guard: every changed path is seen by `changed_paths` (else a guarded path slips by), every
    path under tests/ lands in the hidden tests, the patch applies, and no name prints a
    control character."""
    from benchtape.sandbox.patches import apply_patch, changed_paths
    from benchtape.tasks.classify import split
    from benchtape.tasks.gitlog import file_diffs

    repo = folder / "repo"
    repo.mkdir()

    def git(*args: str, stdin: bytes | None = None) -> bytes:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_CEILING_DIRECTORIES": str(folder)}
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=f", "-c", "user.email=f@f", "-c", "core.quotePath=true", *args], input=stdin, check=True, capture_output=True, env=env, timeout=30).stdout

    git("init", "-q")
    files = payload["files"]
    for f in files:
        if f["change"] != "add":
            p = repo / f["path"]
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("base\n")
    (repo / "keep.txt").write_text("k\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD").decode().strip()
    for i, f in enumerate(files):
        p = repo / f["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        if f["change"] in ("modify", "add"):
            p.write_text("fixed\n")
        elif f["change"] == "binary":
            p.write_bytes(b"\0\1\2" + bytes([i]))
        elif f["change"] == "delete" and p.exists():
            p.unlink()
        elif f["change"] == "rename" and p.exists():
            p.rename(p.with_name(p.name + "-moved"))
    git("add", "-A")
    if not git("status", "--porcelain"):
        return "ok", "no change"
    git("commit", "-qm", "fix")
    fix = git("rev-parse", "HEAD").decode().strip()
    changed = [n.decode("utf-8", "replace") for n in git("diff", "--name-only", "-z", "--no-renames", base, fix).split(b"\0") if n]
    diffs = file_diffs(repo, base, fix)
    if sorted(p for p, _ in diffs) != sorted(changed):
        return "escape", f"the harvest's file list differs from git's: {[p for p, _ in diffs]!r} vs {changed!r}"
    for path, block in diffs:
        if path not in changed_paths(block):
            return "escape", f"changed_paths misses {path!r} in its own diff block"
    whole = git("diff", "--binary", "--full-index", base, fix)
    seen = changed_paths(whole)
    missed = [p for p in changed if p not in seen]
    if missed:
        return "escape", f"the guard misses {missed!r}"
    parts = split(changed, ("tests/**", "**/tests/**"), ())
    leaked = [p for p in changed if p.startswith("tests/") and p not in parts.tests]
    if leaked:
        return "escape", f"test files in the reference patch: {leaked!r}"
    try:
        from benchtape.core.termtext import printable
    except ImportError:
        printable = None
    if printable is not None and any(any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in printable(p)) for p in changed):
        return "escape", "a control character survives printable()"
    tree = folder / "tree"
    tree.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tree)], input=git("archive", "--format=tar", base), check=True, timeout=30)
    apply_patch(tree, whole)
    return "ok", f"{len(changed)} paths"


TARGETS = {"harbor": harbor_target, "repo": repo_target, "bench": bench_target, "lines": lines_target, "tar": tar_target, "path": path_target, "server": server_target, "fault": fault_target}


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
