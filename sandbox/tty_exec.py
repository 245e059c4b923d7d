"""`docker exec -t -i`, for a terminal pane: run one command in a container on this terminal.

    python -m benchtape.sandbox.tty_exec SPEC.json

The interactive drive hosts its terminal (tmux) on the host and runs the agent inside the
session's container (the spec's "docker exec -t -i" shape). This is that exec, through
the Docker SDK benchtape already uses rather than the docker CLI: no CLI of a matching
version is needed, and the environment (a key, say) travels in the exec request, never on
a command line. SPEC.json (written 0600 by the container level, removed once read) holds
the container id, argv, env, workdir, user and the in-container file that receives the
command's pid, so the level can kill its process group there.

The terminal is put in raw mode and bytes are copied both ways until the command ends;
the exec is resized to the terminal's size; the exit status is the command's.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m benchtape.sandbox.tty_exec SPEC.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    os.unlink(argv[0])
    import docker

    client = docker.from_env(timeout=60)
    wrapper = ["/bin/sh", "-c", 'echo $$ > "$BENCHTAPE_TTY_PID"; exec "$@"', "benchtape-tty"]
    exec_id = client.api.exec_create(
        spec["container"],
        wrapper + list(spec["argv"]),
        stdin=True,
        tty=True,
        environment={**spec["env"], "BENCHTAPE_TTY_PID": spec["pidfile"]},
        workdir=spec["workdir"],
        user=spec.get("user") or "",
    )["Id"]
    sock = client.api.exec_start(exec_id, tty=True, socket=True)
    raw = getattr(sock, "_sock", sock)
    _resize(client, exec_id)
    stdin = sys.stdin.fileno()
    restore = _raw_mode(stdin)
    try:
        threading.Thread(target=_to_container, args=(stdin, raw), daemon=True).start()
        _from_container(raw, lambda: not client.api.exec_inspect(exec_id).get("Running"))
    finally:
        restore()
    for _ in range(50):
        info = client.api.exec_inspect(exec_id)
        if not info.get("Running"):
            return int(info.get("ExitCode") or 0)
        time.sleep(0.1)
    return 1


def _from_container(raw: object, exited: object) -> None:
    """Copy the command's output to this terminal until the stream ends -- or until the command
    itself has exited: a child it left behind may hold the container's terminal open, and the
    session is over all the same (the container's removal ends the child)."""
    raw.settimeout(0.2)  # type: ignore[attr-defined]
    last_check, gone_at = 0.0, None
    while True:
        try:
            data = raw.recv(65536)  # type: ignore[attr-defined]
        except TimeoutError:
            data = None
        except OSError:
            return
        if data == b"":
            return
        if data:
            os.write(sys.stdout.fileno(), data)
        now = time.monotonic()
        if gone_at is None and now - last_check > 0.5:
            last_check = now
            if exited():  # type: ignore[operator]
                gone_at = now
        if gone_at is not None and now - gone_at > 0.5 and not data:
            return


def _resize(client: object, exec_id: str) -> None:
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except OSError:
        return
    for _ in range(20):  # the exec must be running before it can be resized
        try:
            client.api.exec_resize(exec_id, height=size.lines, width=size.columns)  # type: ignore[attr-defined]
            return
        except Exception:  # noqa: BLE001
            time.sleep(0.05)


def _to_container(fd: int, raw: object) -> None:
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            return
        if not data:
            return
        try:
            raw.sendall(data)  # type: ignore[attr-defined]
        except OSError:
            return


def _raw_mode(fd: int):  # type: ignore[no-untyped-def]
    try:
        import termios
        import tty

        saved = termios.tcgetattr(fd)
        tty.setraw(fd)
    except Exception:  # noqa: BLE001 - not a terminal: copy bytes as they are
        return lambda: None
    return lambda: termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
