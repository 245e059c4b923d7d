"""`benchtape view` as the user runs it: its own process, real HTTP on loopback, its
descriptors read from /proc, its stderr kept for the test to read."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess

import scenes


class ViewProcess:
    """`benchtape view --port 0` as its own process, from the project folder."""

    def __init__(self, project: scenes.Project):
        self.proc = scenes.popen("view", "--db", project.db, "--port", "0", cwd=project.root)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, f"benchtape view did not start: {line!r} {self.proc.stderr.read() if self.proc.stderr else ''}"
        self.port = int(found[1])

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def descriptors(self) -> list[str]:
        folder = f"/proc/{self.proc.pid}/fd"
        out = []
        for name in os.listdir(folder):
            try:
                out.append(os.readlink(f"{folder}/{name}"))
            except OSError:
                pass  # closed while listed
        return out

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err
