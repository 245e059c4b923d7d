"""The `command` harness's process: run the user's argv, then print its transcript.

Run with `python -S` in the sandbox (standard library only), a JSON job on stdin. It starts
the user's command in its own process group with the prompt where the argv template asks for
it, copies each line the command prints to stdout as `{"out": LINE}`, and once the command
exits prints the transcript it was told to read, if any, as `{"transcript": PATH, "format": F}`
then `{"t": LINE}` per line, and last `{"exit": CODE}`. Everything the session is derived from
therefore passes through benchtape's capture file: the raw lines hold it all, and `reparse`
re-derives the session from them without the workspace. It exits with the command's code.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time


def say(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fill(word: str, values: dict) -> str:
    for key, value in values.items():
        word = word.replace("{" + key + "}", value)
    return word


def newest(pattern: str, since: float) -> str | None:
    """The newest file the pattern names that was written after the command started (an old
    transcript left in the folder is not this session's)."""
    found = []
    for path in glob.glob(pattern, recursive=True):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if os.path.isfile(path) and st.st_mtime >= since - 1:
            found.append((st.st_mtime, path))
    return max(found)[1] if found else None


def isolated(argv: list, env: dict) -> list:
    """A Python harness's argv (aider, mini-swe-agent: `python_harness` in the job) run isolated
    (`python -I`) when the box gives the project's PYTHONPATH: the harness would otherwise import
    a package of the task's workspace named like one of its own dependencies (a project under
    test such as jsonschema or click); the commands it runs still get the variable. Only a
    script whose first line names its interpreter by path (as pip and uv write them); any other
    argv is left as it is."""
    if not env.get("PYTHONPATH"):
        return argv
    import shutil

    script = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    try:
        with open(script or argv[0], "rb") as fh:
            first = fh.readline(512)
    except OSError:
        return argv
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    if len(words) != 1 or not words[0].startswith("/") or "python" not in os.path.basename(words[0]):
        return argv
    return [words[0], "-I", script, *argv[1:]]


def main() -> int:
    job = json.loads(sys.stdin.buffer.read() or b"{}")
    scratch = tempfile.mkdtemp(prefix="benchtape-command-")
    prompt_file = os.path.join(scratch, "prompt.txt")
    with open(prompt_file, "w", encoding="utf-8") as fh:
        fh.write(job["prompt"])
    for name, text in (job.get("files") or {}).items():  # a harness's own files beside the prompt (aider's model metadata)
        with open(os.path.join(scratch, os.path.basename(name)), "w", encoding="utf-8") as fh:
            fh.write(text)
    values = {"prompt": job["prompt"], "prompt_file": prompt_file, "scratch": scratch, "workdir": job["cwd"], "root": job["root"], "model": job.get("model") or "", "home": os.environ.get("HOME", ""), "endpoint": job.get("endpoint") or ""}
    argv = [fill(w, values) for w in job["argv"]]
    env = {**os.environ, **({"BENCHTAPE_MODEL_ENDPOINT": job["endpoint"]} if job.get("endpoint") else {}), **{k: fill(v, values) for k, v in (job.get("env") or {}).items()}}
    if job.get("python_harness"):
        argv = isolated(argv, env)
    started = time.time()
    try:
        proc = subprocess.Popen(argv, cwd=job["cwd"], env=env, stdin=subprocess.PIPE if job.get("stdin") else subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        say({"error": f"could not start {argv[0]!r}: {exc}"})
        say({"exit": 127})
        return 127
    if job.get("stdin"):
        def feed() -> None:
            try:
                proc.stdin.write(job["prompt"].encode())  # type: ignore[union-attr]
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass

        threading.Thread(target=feed, daemon=True).start()
    timeout = job.get("timeout")
    timer = None
    killed = []
    if timeout:
        def kill() -> None:
            killed.append(True)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(float(timeout), kill)
        timer.start()
    for raw in proc.stdout:  # type: ignore[union-attr]
        say({"out": raw.decode("utf-8", errors="replace").rstrip("\n")})
    code = proc.wait()
    if timer is not None:
        timer.cancel()
    if killed:
        say({"error": f"the command ran longer than its timeout ({timeout}s) and was killed"})
    spec = job.get("transcript")
    if spec:
        pattern = fill(spec["path"], values)
        if not os.path.isabs(pattern):
            pattern = os.path.join(job["root"], pattern)
        path = newest(pattern, started)
        if path is None:
            say({"error": f"no transcript matched {spec['path']!r} (looked for {pattern})"})
        else:
            say({"transcript": path, "format": spec["format"]})
            with open(path, "rb") as record:
                for line in record:
                    say({"t": line.decode("utf-8", errors="replace").rstrip("\n")})
    say({"exit": code})
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
