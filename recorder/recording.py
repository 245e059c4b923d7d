"""Recording one session: its output lines into the store as they arrive, and its workspace as a snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence, cast

from benchtape.adapters.base import warning
from benchtape.core.limits import OutputBudget, OutputLimits
from benchtape.core.model import Action
from benchtape.core.payloads import TreeFacts, WorkspaceSnapshot
from benchtape.core.redact import Redactor
from benchtape.sandbox.capture import Captured, Ending
from benchtape.sandbox.levels import Event, Process
from benchtape.sandbox.snapshot import snapshot
from benchtape.store.database import Blob
from benchtape.store.views import RecordingStore


class Recording:
    """One session's output on its way into the store: each line stored with the actions parsed
    from it in one transaction, as it arrives; past the session's output limit only the last
    lines are held, stored at the end after a marker of what was dropped."""

    WARNINGS_KEPT = 100  # adapter warnings stored one by one; past that, counted (each one repeats its line)

    def __init__(self, store: RecordingStore, session_id: str, parser: Any, harness: str, limits: OutputLimits, on_event: Event):
        self.store, self.session_id, self.parser, self.harness, self.on_event = store, session_id, parser, harness, on_event
        self.budget = OutputBudget(limits)
        self.line_no = 0
        self.failures: list[str] = []
        self.warnings = 0
        self.warnings_dropped = 0

    def pump(self, proc: Process) -> None:
        """Drain every line even when parsing or storing one fails: the harness must never wait on benchtape."""
        for line in proc.lines(self.budget.limits.line):
            self.line_no += 1
            if self.budget.admit(self.line_no, line):
                self.store_line(self.line_no, line)

    def store_line(self, line_no: int, line: Captured) -> None:
        if line.cut:  # cut JSON is not JSON: say what happened instead of a parse warning
            actions = [Action("error", {"message": f"output line {line_no} is {line.size:,} bytes, over the limit of {self.budget.limits.line:,} per line (BENCHTAPE_MAX_LINE): stored cut to its head and tail, not parsed"})]
        else:
            try:
                actions = self.parser.feed(line.text)
            except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the stream
                actions = [warning(f"the {self.harness} adapter failed on this line: {type(exc).__name__}: {exc}", line.text)]
            actions = self._fewer_warnings(actions)
        if self.failures:
            return
        try:
            self.store.append_line(self.session_id, line_no, line.text, actions)
        except Exception as exc:  # noqa: BLE001 - e.g. a full disk: say so once, keep draining
            self.failures.append(f"recording stopped at line {line_no}: {type(exc).__name__}: {exc}")
            return
        for a in actions:
            self.on_event("action", {"session_id": self.session_id, "kind": a.kind, "thread": a.thread, "data": a.data})

    def _fewer_warnings(self, actions: list[Action]) -> list[Action]:
        """A flood of lines the adapter cannot read (a harness printing junk) would store each line
        twice and make the session a gigabyte to load: past WARNINGS_KEPT they are only counted
        (the lines themselves are in `raw`, for `reparse`)."""
        kept = []
        for a in actions:
            if a.kind == "adapter.warning":
                self.warnings += 1
                if self.warnings > self.WARNINGS_KEPT:
                    self.warnings_dropped += 1
                    continue
            kept.append(a)
        return kept

    def finish(self, ending: Ending) -> None:
        """After the last line: the marker and the held tail, what the parser still owes, and
        notes on what happened around the harness's exit."""
        note = self.budget.note()
        if note is not None and not self.failures:
            self.store.append(self.session_id, [Action("error", {"message": note})])
            for line_no, line in self.budget.tail:
                self.store_line(line_no, line)
        try:
            tail = self.parser.finish()
        except Exception as exc:  # noqa: BLE001
            tail = [warning(f"the {self.harness} adapter failed at end of stream: {type(exc).__name__}: {exc}", "")]
        if self.warnings_dropped:
            tail.append(Action("adapter.warning", {"what": f"{self.warnings_dropped:,} more line(s) the {self.harness} adapter could not read are in raw only (the first {self.WARNINGS_KEPT} are above)", "line": "", "source": "recorder"}))
        if ending.leftovers_killed:
            tail.append(Action("adapter.warning", {"what": f"the harness left {ending.leftovers_killed} process(es) running when it exited; they were killed", "line": "", "source": "sandbox"}))
        if ending.late_bytes:
            tail.append(Action("adapter.warning", {"what": f"{ending.late_bytes:,} bytes were written to the harness's output after it exited (by a process it left running); not recorded as its output", "line": "", "source": "sandbox"}))
        if ending.rewrites:
            self.budget.cut_lines += 1  # some output is missing: the session is truncated, never ok
            tail.append(Action("error", {"message": f"the harness's output file was truncated {ending.rewrites} time(s) while it ran (something reopened its stdout with O_TRUNC, e.g. `> /dev/stdout`); output written before that and not yet read is missing"}))
        tail += [Action("error", {"message": m}) for m in self.failures]
        if tail:
            self.store.append(self.session_id, tail)


def home_paths_of(harness: str | None, home: str | Path | None, root: str | Path, part: str = "bookkeeping") -> tuple[str, ...]:
    """The harness's own paths under HOME, where the sandbox made HOME the workspace (levels
    home and container do; the level decides, and says so through the opened workspace's
    `home`): its `bookkeeping` globs, which workspace snapshots leave out, or (`part="own_state"`)
    the files it rewrites at every start, which the staged snapshot names for the diff."""
    if not harness or home is None or Path(home) != Path(root):
        return ()
    from benchtape.adapters.base import get_adapter

    try:
        return tuple(getattr(get_adapter(harness), part))
    except KeyError:
        return ()


def workspace_snapshot(store: RecordingStore, root: Path, redact: Redactor | None, *, blobs: list[Blob], stage: str | None = None, leave_out: Sequence[str] = (), own_state: Sequence[str] = ()) -> list[Action]:
    """The tree under root as a blob (the final workspace, or `stage` staged; known secrets
    redacted in its files; `leave_out`, the harness's bookkeeping, left out), or the error
    that stopped it: not the agent's doing, so an infrastructure_error. The blob joins
    `blobs`, for the caller to write with the returned action (Store.append's `blobs`).
    `own_state`: the tool's own state files in the tree, named in the action for the diff."""
    try:
        data, facts = snapshot(root, redact=redact, leave_out=leave_out) if root.exists() else (b"", TreeFacts(files=0, bytes=0))
        if data:
            blob = store.prepare_blob(data)
            blobs.append(blob)
            # facts is snapshot()'s TreeFacts, which never holds stage or own_state (mypy's extra checks cannot know)
            snap = cast(WorkspaceSnapshot, {"sha256": blob.sha256, **facts})
            if stage:
                snap["stage"] = stage
            if own_state:
                snap["own_state"] = list(own_state)
            return [Action("workspace.snapshot", snap)]
    except OSError as exc:
        return [Action("error", {"message": f"{'staged tree' if stage else 'workspace'} snapshot failed: {exc}", "cause": "sandbox"})]
    return []
