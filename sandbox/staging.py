"""Staging the seed tree each scenario's sandbox is copied from.

Order (madbench §1.6): `repo:` checkout → `testdata:` copied over it → `setup:` or
`generate:` run ONCE per bench run (so `--repeat` and every scenario with the same
inputs reuse one tree) → the result seeds every scenario's sandbox (sandbox.prepare
copies it fresh). A staging failure stops the run before any session is spent.

`generate:` prints `NAME=VALUE` lines: the answer key, handed to the checks as vars and
to nobody else. So its values never enter the sandbox env, its stderr is redacted, and
the run is refused when a value is findable in the staged tree or the prompt.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from benchtape.core.errors import BadInput, BenchtapeError, ExitCode
from benchtape.core.leaks import find_in_text, find_in_tree
from benchtape.core.redact import redactor, secret_values
from benchtape.sandbox.checkout import CheckoutFailed, export_repo
from benchtape.sandbox.trees import remove_tree, walk
from benchtape.spec.bench import BenchSpec, ScenarioSpec
from benchtape.spec.roots import outside_fix, real, within

DEFAULT_STAGING_TIMEOUT = 300.0
STDERR_TAIL = 2000
PROGRAM_ENV = ("PATH", "HOME", "LANG", "TMPDIR")
VAR_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")

Event = Callable[[str, dict[str, Any]], None]


class StagingFailed(BenchtapeError):
    """Staging could not produce a tree (or produced one that leaks the answer): nothing ran."""

    exit_code = ExitCode.BLOCKED

    def render(self) -> str:
        return f"staging failed — nothing ran, no spend: {self}"


@dataclass
class Seeds:
    """Scenario name → the staged tree to copy (None: an empty workspace), plus generated vars."""

    trees: dict[str, Path | None] = field(default_factory=dict)
    generated: dict[str, dict[str, Any]] = field(default_factory=dict)
    temps: list[Path] = field(default_factory=list)
    pictures: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # `image: generated:<name>`, resolved in $MADBENCH_IMAGE_DIR

    def get(self, name: str) -> Path | None:
        return self.trees.get(name)

    def scenario(self, sc: ScenarioSpec) -> ScenarioSpec:
        """The scenario as its session sends it: a `generated:` picture is the file its
        generator wrote (checked at staging), after the bench's own pictures."""
        found = self.pictures.get(sc.name)
        return replace(sc, image=(*sc.image, *found), generated_images=()) if found else sc

    def vars(self, name: str) -> dict[str, Any]:
        return dict(self.generated.get(name) or {})

    def values(self) -> dict[str, str]:
        """Every generated value of this run, by var name (for the report leak check)."""
        out: dict[str, str] = {}
        for scenario, found in self.generated.items():
            for var, value in found.items():
                key = var if out.get(var, value) == value else f"{var} (scenario {scenario})"
                out[key] = str(value)
        return out

    def cleanup(self) -> None:
        for t in self.temps:
            remove_tree(t)


def stage_seeds(bench: BenchSpec, scenarios: list[ScenarioSpec], on_event: Event | None = None) -> Seeds:
    """Stage each distinct set of inputs once; refuse the run on any failure or leak."""
    emit = on_event or (lambda kind, data: None)
    refuse_outside(bench, scenarios)
    seeds = Seeds()
    groups: dict[tuple[Any, ...], list[ScenarioSpec]] = {}
    for sc in scenarios:
        groups.setdefault(_key(sc), []).append(sc)
    try:
        for group in groups.values():
            first = group[0]
            if first.repo is None and first.setup is None and first.generate is None:
                for sc in group:
                    seeds.trees[sc.name] = first.testdata
                continue
            temp = Path(tempfile.mkdtemp(prefix="benchtape-staged-"))
            seeds.temps.append(temp)
            tree, found = _stage(bench, group, temp, emit)
            for sc in group:
                seeds.trees[sc.name] = tree
                seeds.generated[sc.name] = dict(found)
                if sc.generated_images:
                    seeds.pictures[sc.name] = _generated_pictures(sc, temp / "images")
    except BaseException:
        seeds.cleanup()
        raise
    return seeds


def _generated_pictures(sc: ScenarioSpec, folder: Path) -> tuple[Path, ...]:
    """Each `image: generated:<name>` as the file the generator wrote into $MADBENCH_IMAGE_DIR,
    checked as a bench's own picture is; one it did not write (or not as a picture) stops the
    run before any session is spent."""
    from benchtape.spec.bench_images import check_image

    out: list[Path] = []
    for name in sc.generated_images:
        path = folder / name
        inside = Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
        problem = check_image(path) if inside else f"{name!r} names a file outside $MADBENCH_IMAGE_DIR"
        if problem is not None:
            raise StagingFailed(
                f"scenario {sc.name!r}: `image: generated:{name}`: the generate program did not leave a picture to send: {problem.replace(str(path), '$MADBENCH_IMAGE_DIR/' + name)}\n"
                f"  fix: have `generate:` write a PNG, JPEG, GIF or WebP of at most 5 MB to \"$MADBENCH_IMAGE_DIR/{name}\""
            )
        out.append(path)
    return tuple(out)


def staged_paths(sc: ScenarioSpec) -> list[tuple[str, Path]]:
    """Every host path whose content is copied into the scenario's workspace or image."""
    out: list[tuple[str, Path]] = []
    if sc.testdata is not None:
        out.append(("testdata", sc.testdata))
    url = str((sc.repo or {}).get("url") or "")
    if url.startswith("file://"):
        out.append(("repo", Path(url[len("file://"):])))
    elif url and not re.match(r"^[a-z+]+://|^git@", url):
        out.append(("repo", Path(url)))
    out += [("share.paths (copy)", Path(s["from"])) for s in sc.sandbox.share_paths if s.get("access") == "copy"]
    if sc.sandbox.dockerfile is not None:
        out.append(("dockerfile", sc.sandbox.dockerfile))
    return out


def refuse_outside(bench: BenchSpec, scenarios: list[ScenarioSpec]) -> None:
    """The loader refused staged paths outside the bench's tree; a link swapped since then is refused here."""
    roots = bench.staging_roots()
    for sc in scenarios:
        for key, path in staged_paths(sc):
            if not within(path, roots):
                raise StagingFailed(
                    f"scenario {sc.name!r}: `{key}` {path} resolves to {real(path)}, outside the bench's folder; "
                    f"staging it would copy host files into the workspace and the stored snapshot\n  fix: {outside_fix(bench.dir, path)}"
                )


COPIED = ("testdata", "share.paths (copy)")  # the staged paths copied file by file (a repo is cloned, a dockerfile built)
SPECIAL = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def refuse_special_files(scenarios: Iterable[ScenarioSpec]) -> None:
    """Bad input (exit 2) when a folder copied into every session's workspace holds a FIFO, a
    socket or a device: none can be copied (a FIFO had been a `shutil.Error` traceback at each
    session's copy, after the run and its grading were stored). The front ends ask this before
    the store is opened; each folder is walked once, however many scenarios share it."""
    walked: set[Path] = set()
    for sc in scenarios:
        for key, path in staged_paths(sc):
            if key not in COPIED or path in walked:
                continue
            walked.add(path)
            found = special_file(path)
            if found is not None:
                where, what = found
                raise BadInput(
                    f"the `{key}` of scenario {sc.name!r} ({path}) holds {what}, which cannot be copied into a session's workspace",
                    file=where,
                    fix="remove it from the folder (a test that needs one can make it as it runs, e.g. with mkfifo)",
                )


def special_file(root: Path) -> tuple[str, str] | None:
    """The first entry at or under `root` that is no file, folder or link, and what it is
    (links are copied as links, never followed)."""
    listing = walk(root) if root.is_dir() else [(str(root.parent), [], [root.name])]
    for top, _, names in listing:
        for name in names:
            path = os.path.join(top, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:  # gone since it was listed, or never there: the copy says so
                continue
            for test, what in SPECIAL:
                if test(mode):
                    return path, what
    return None


def _key(sc: ScenarioSpec) -> tuple[Any, ...]:
    repo = tuple(sorted((k, str(v)) for k, v in (sc.repo or {}).items()))
    return (repo, str(sc.testdata or ""), str(sc.setup or ""), str(sc.generate or ""))


def _label(group: list[ScenarioSpec]) -> str:
    more = f" (and {len(group) - 1} more sharing its staged tree)" if len(group) > 1 else ""
    return f"scenario {group[0].name!r}{more}"


def _stage(bench: BenchSpec, group: list[ScenarioSpec], temp: Path, emit: Event) -> tuple[Path, dict[str, str]]:
    first = group[0]
    timeout = max(sc.staging_timeout or DEFAULT_STAGING_TIMEOUT for sc in group)
    tree, images = temp / "tree", temp / "images"
    images.mkdir()
    if first.repo is not None:
        try:
            export_repo(first.repo, tree, timeout=timeout)
        except CheckoutFailed as exc:
            raise StagingFailed(f"{_label(group)}: repo: {exc}") from None
    else:
        tree.mkdir()
    if first.testdata is not None:
        shutil.copytree(first.testdata, tree, symlinks=True, dirs_exist_ok=True)
    program = first.generate or first.setup
    if program is None:
        return tree, {}
    kind = "generate" if first.generate is not None else "setup"
    secrets = secret_values(os.environ, [n for sc in group for n in sc.sandbox.secret_env])
    stdout, stderr, seconds = _run_program(group, kind, program, tree, images, timeout, secrets)
    left = special_file(tree)
    if left is not None:  # copying the tree into each session's workspace would fail (a FIFO: a traceback per session)
        where, what = left
        raise StagingFailed(
            f"{_label(group)}: the `{kind}:` program {program} left {what} in the tree it prepares ({os.path.relpath(where, tree)}), which cannot be copied into a session's workspace\n"
            "  fix: have the program remove it before it exits (a test that needs one can make it as it runs, e.g. with mkfifo)"
        )
    found: dict[str, str] = {}
    if kind == "generate":
        found = _parse_vars(stdout, group, program)
        secrets = list(found.values()) + secrets
        _refuse_leaks(bench, group, tree, found)
    redact = redactor(secrets)
    emit("staging.finished", {
        "scenarios": [sc.name for sc in group],
        "program": str(program),
        "kind": kind,
        "seconds": round(seconds, 3),
        "stderr": redact(stderr),
        "stdout": redact(stdout) if kind == "setup" else None,
        "vars": sorted(found),
    })
    return tree, found


def _run_program(group: list[ScenarioSpec], kind: str, program: Path, tree: Path, images: Path, timeout: float, secrets: list[str]) -> tuple[str, str, float]:
    """Run the program in its own process group (a timeout kills all of it), env scrubbed."""
    env = {k: os.environ[k] for k in PROGRAM_ENV if k in os.environ}
    env.update({"BENCHTAPE": "1", "BENCHTAPE_TESTDATA_DIR": str(tree), "BENCHTAPE_IMAGE_DIR": str(images)})
    env.update({"MADBENCH": "1", "MADBENCH_TESTDATA_DIR": str(tree), "MADBENCH_IMAGE_DIR": str(images)})  # the names a madbench program reads
    started = time.monotonic()
    try:
        proc = subprocess.Popen([str(program)], cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise StagingFailed(f"{_label(group)}: {kind}: {program} could not start: {exc}") from None
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = b"", b""
    seconds = time.monotonic() - started
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if timed_out or proc.returncode != 0:
        # Parse what a generate program printed so its values are redacted from the tail too.
        printed = [m.group(2) for line in stdout.splitlines() if (m := VAR_LINE.match(line.rstrip("\r")))] if kind == "generate" else []
        redact = redactor([v for v in printed if v] + secrets)
        why = f"timed out after {timeout:g}s (staging_timeout); its process group was killed" if timed_out else f"exited with code {proc.returncode} after {seconds:.1f}s"
        tail = redact(stderr[-STDERR_TAIL:]).strip()
        raise StagingFailed(f"{_label(group)}: {kind}: {program} {why}" + ("\n  stderr (tail):\n    " + tail.replace("\n", "\n    ") if tail else "\n  (no stderr)"))
    return stdout, stderr, seconds


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _parse_vars(stdout: str, group: list[ScenarioSpec], program: Path) -> dict[str, str]:
    """Strict `NAME=VALUE` lines; anything else is refused, naming the line (blank lines are ignored)."""
    found: dict[str, str] = {}
    for n, line in enumerate(stdout.splitlines(), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        m = VAR_LINE.match(line)
        if m is None:
            shown = redactor(secret_values(os.environ))(line if len(line) <= 120 else line[:117] + "...")
            raise StagingFailed(f"{_label(group)}: generate: {program} printed a stray line {n} on stdout: {shown!r}\n  fix: stdout is only `NAME=VALUE` lines; print diagnostics to stderr")
        name, value = m.group(1), m.group(2)
        if name in found:
            raise StagingFailed(f"{_label(group)}: generate: {program} printed {name}= twice (line {n})\n  fix: print each name once")
        if value == "":
            raise StagingFailed(f"{_label(group)}: generate: {program} printed an empty value for {name} (line {n})\n  fix: an empty answer cannot be kept secret; print a value")
        found[name] = value
    return found


def _refuse_leaks(bench: BenchSpec, group: list[ScenarioSpec], tree: Path, found: dict[str, str]) -> None:
    """Everything the agent is given: the tree, the prompt, its env literals, the harness config (system prompt, settings)."""
    if not found:
        return
    hits = find_in_tree(tree, found)
    hits += find_in_text(json.dumps(bench.harness_config, default=str), found, "harness_config (the agent is given it)")
    for sc in group:
        hits += find_in_text(sc.prompt, found, f"the prompt of scenario {sc.name!r}")
        hits += find_in_text("\n".join(sc.sandbox.env.values()), found, f"the sandbox env of scenario {sc.name!r}")
    if hits:
        listed = "\n    ".join(hits[:20]) + (f"\n    ... and {len(hits) - 20} more" if len(hits) > 20 else "")
        raise StagingFailed(
            f"{_label(group)}: generate: refused: a generated value can be found by the agent:\n    {listed}"
            "\n  fix: the agent must derive the answer; keep the value out of the staged files, their names and the prompt"
        )
