"""The interactive drive: an agent's terminal UI in a tmux pane, its on-disk session tailed into the store.

The print path pumps stdout lines into the store; an interactive session prints a screen,
not a stream, so its record is the tool's own on-disk session file (Claude Code's
transcript), tailed as it grows: each complete line is parsed and appended with
`Store.append_line` the moment it is read, so a `kill -9` of benchtape loses nothing the
tool had written. The screen is evidence: the last one is stored (`terminal.screen`).

One session, in order: (the runner has merged the first-run answers into HOME: the adapter's `Tui.seed`),
start the pane, wait for the prompt box, then per turn (the prompt, then each follow-up):
type it (a bracketed paste when it has several lines), press Enter, and wait for the end
of the turn -- the Stop hook's line (the adapter installs the hook), else the
transcript's `turn_duration` record, else a screen that has gone idle -- recording a
`turn.finished`; then type `/exit`. A permission prompt on screen that nobody will
answer ends the session at once as an error naming it, with the screen stored, instead of
a silent wait for the timeout.
"""

from __future__ import annotations

import glob
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from benchtape.adapters.base import Command, Tui, warning
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action
from benchtape.core.payloads import TurnFinished
from benchtape.sandbox.terminal import PaneCommand, Terminal, TerminalError, wait_for

if TYPE_CHECKING:
    from benchtape.store.views import RecordingStore

READY_SECONDS = 60.0  # start to prompt box (observed 1.1-1.7 s; a cold container is slower)
BLOCKED_STABLE = 1.5  # a permission prompt unchanged this long is waiting for a person
IDLE_STABLE = 3.0  # the screen fallback: idle this long after the turn began
EXIT_SECONDS = 10.0
POLL = 0.1
SCREEN_KEEP = 20000  # characters of a stored screen


@dataclass
class Driven:
    status: str
    exit_code: int | None
    timed_out: bool
    wall_ms: float
    tail: str
    parser: Any


class _Tail:
    """Follows the on-disk session file as it grows, one complete line at a time, in a thread;
    each line is parsed and stored at once. Counts `turn_duration` records as it goes."""

    def __init__(self, home: Path, tui: Tui, store: RecordingStore, session_id: str, on_action: Callable[[Action], None]):
        self.home, self.tui, self.store, self.session_id = home, tui, store, session_id
        self.on_action = on_action
        self.parser = tui.parser()
        self.line_no = 0
        self.turn_durations = 0
        self.path: Path | None = None
        self.failure: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="benchtape-tail", daemon=True)

    def start(self) -> _Tail:
        self._thread.start()
        return self

    def finish(self) -> None:
        """Read what is left (the tool has exited), then its subagents' files, whole."""
        self._stop.set()
        self._thread.join(timeout=30)
        for side in sorted(glob.glob(str(self.home / self.tui.sidechains))):
            with open(side, "rb") as f:
                for raw in f.read().splitlines():
                    self._line(raw)

    def _find(self) -> Path | None:
        found = sorted(glob.glob(str(self.home / self.tui.transcript)))
        return Path(found[0]) if found else None

    def _run(self) -> None:
        while self.path is None:
            self.path = self._find()
            if self.path is None:
                if self._stop.is_set():
                    return
                time.sleep(POLL)
        partial = b""
        with open(self.path, "rb") as f:
            while True:
                stopping = self._stop.is_set()  # read once more after the stop, to the end
                chunk = f.read(1 << 16)
                if chunk:
                    partial += chunk
                    *lines, partial = partial.split(b"\n")
                    for raw in lines:
                        self._line(raw)
                    continue
                if stopping:
                    if partial.strip():
                        self._line(partial)
                    return
                time.sleep(POLL)

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            return
        self.line_no += 1
        if '"turn_duration"' in text:
            self.turn_durations += 1
        try:
            actions = self.parser.feed(text)
        except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the record
            actions = [warning(f"the transcript parser failed on this line: {type(exc).__name__}: {exc}", text)]
        if self.failure is not None:
            return
        try:
            self.store.append_line(self.session_id, self.line_no, text, actions)
        except Exception as exc:  # noqa: BLE001 - e.g. a full disk: say so once, keep reading
            self.failure = f"recording stopped at transcript line {self.line_no}: {type(exc).__name__}: {exc}"
            return
        for a in actions:
            self.on_action(a)


def _stops(path: Path, session: str = "") -> list[dict[str, Any]]:
    """The Stop hook's lines so far (one JSON object per finished turn) of this session: at level
    workspace the log is in your own ~/.claude, shared by every session (and by a Claude Code you
    run meanwhile), so a line of another session's is not this one's turn end."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    docs = [doc for doc in map(decode, data.splitlines()) if isinstance(doc, dict)]
    return [doc for doc in docs if not session or doc.get("session_id") in (None, session)]




def _rule(line: str) -> bool:
    """A line drawn with box characters (a dialog's frame), not words."""
    text = line.strip()
    return bool(text) and sum(0x2500 <= ord(c) <= 0x257F for c in text) > len(text) / 2


class Driver:
    """One interactive session: what `Runner.record` calls instead of the stdout pump."""

    def __init__(self, store: RecordingStore, session_id: str, cancel: threading.Event, on_event: Callable[[str, dict[str, Any]], None]):
        self.store, self.session_id, self.cancel, self.on_event = store, session_id, cancel, on_event

    def _note(self, actions: list[Action]) -> None:
        self.store.append(self.session_id, actions)

    def _on_action(self, a: Action) -> None:
        self.on_event("action", {"session_id": self.session_id, "kind": a.kind, "thread": a.thread, "data": a.data})

    def drive(self, cmd: Command, home: Path, pane: PaneCommand, prompts: list[str], timeout: float, agent_env: Mapping[str, str]) -> Driven:
        tui = cmd.tui
        assert tui is not None
        started = time.monotonic()
        deadline = started + timeout
        tail = _Tail(home, tui, self.store, self.session_id, self._on_action)
        term: Terminal | None = None
        try:
            term = Terminal(pane)
            term.start()
        except Exception as exc:  # noqa: BLE001 - a pane that cannot start (no tmux, a dead engine) is the session's error
            term.close() if term is not None else pane.cleanup()
            self._note([Action("error", {"message": f"could not start {cmd.argv[0]} in a terminal: {exc}"})])
            return Driven("error", None, False, 0.0, str(exc), tail.parser)
        tail.start()
        outcome, exit_code, why_screen = "ok", None, "exit"
        self._closed = False  # said goodbye, then lingered and was killed: the session itself ended cleanly
        try:
            try:
                outcome = self._session(term, tui, tail, prompts, home, deadline, started)
                if outcome in ("ok",):
                    exit_code = self._leave(term, tui)
            except TerminalError as exc:  # the terminal went away under the session (its server killed)
                outcome = "lost"
                self._note([Action("error", {"message": f"the terminal hosting the agent went away mid-session: {exc}"})])
            why_screen = {"ok": "exit", "blocked": "permission prompt", "exited": "exited", "timeout": "timeout", "interrupted": "interrupted", "not_ready": "never ready", "lost": "terminal lost", "not_attached": "image not attached"}[outcome]
        finally:
            screen = term.screen()
            if exit_code is None and not self._closed:
                exit_code = term.exit_status()
            term.close()
            tail.finish()
            closing = [Action("terminal.screen", {"why": why_screen, "text": re.sub(r"\n{3,}", "\n\n", screen)[-SCREEN_KEEP:], "columns": term.columns, "rows": term.rows})]
            if tail.failure:
                closing.append(Action("error", {"message": tail.failure}))
            try:
                closing += tail.parser.finish()
            except Exception as exc:  # noqa: BLE001
                closing.append(warning(f"the transcript parser failed at end of file: {type(exc).__name__}: {exc}", ""))
            if tail.path is None:
                closing.append(Action("error", {"message": f"the tool wrote no session file ({tui.transcript} under its HOME): nothing it did was recorded"}))
            self._note(closing)
        wall_ms = (time.monotonic() - started) * 1000
        clean = exit_code == 0 or (exit_code is None and self._closed)
        status = {"ok": "ok" if clean else "error", "timeout": "timeout", "interrupted": "interrupted"}.get(outcome, "error")
        if outcome == "ok" and not clean:
            self._note([Action("error", {"message": f"the terminal UI exited with code {exit_code} after /exit"})])
        return Driven(status, exit_code, outcome == "timeout", wall_ms, screen[-2000:], tail.parser)

    # ------------------------------------------------------------ the turns
    def _session(self, term: Terminal, tui: Tui, tail: _Tail, prompts: list[str], home: Path, deadline: float, started: float) -> str:
        ready = re.compile(tui.ready)
        blocked = re.compile(tui.blocked)
        got = self._until(term, deadline, lambda s: bool(ready.search(s)) or bool(blocked.search(s)))
        if got != "met":
            return got
        if blocked.search(term.screen()):
            return self._blocked(term, blocked, "before the first prompt")
        stop_log = home / tui.stop_log
        for i, prompt in enumerate(prompts):
            turn_began = time.monotonic()
            if i == 0 and not self._attach(term, tui):
                return "not_attached"
            self._type(term, prompt)
            ended = self._turn_end(term, tui, tail, stop_log, i, ready, blocked, deadline, turn_began)
            if isinstance(ended, str):  # why the turn cannot end: timeout, interrupted, exited, blocked
                if ended == "exited":
                    self._note([Action("error", {"message": f"the terminal UI exited during turn {i + 1} (status {term.exit_status()})"})])
                return self._blocked(term, blocked, f"in turn {i + 1}") if ended == "blocked" else ended
            reason, last = ended
            self._caught_up(tail, i)
            data: TurnFinished = {"turn": i + 1, "reason": reason, "duration_ms": round((time.monotonic() - turn_began) * 1000, 1)}
            if last is not None:
                data["last_assistant_message"] = last
            self._note([Action("turn.finished", data)])
        return "ok"

    def _caught_up(self, tail: _Tail, index: int) -> None:
        """Let the tail read the turn's last lines before its `turn.finished` is recorded: the Stop
        hook fires before the TUI writes the turn's closing `turn_duration` record."""
        if wait_for(lambda: tail.turn_durations > index, 3.0, every=0.05):
            return
        seen = -1
        while seen != tail.line_no:  # no turn_duration (an older version): wait for the file to go quiet
            seen = tail.line_no
            time.sleep(0.3)

    def _attach(self, term: Terminal, tui: Tui) -> bool:
        """Paste each file of `tui.attach` into the prompt box and wait until the screen shows it
        attached; False (an error noted, the screen kept) when one never is: the prompt must not
        go without the picture the scenario sends."""
        for n, path in enumerate(tui.attach, start=1):
            term.paste(path + " ")
            marker = tui.attached.replace("{n}", str(n))
            def shown(marker: str = marker) -> bool:
                return marker in term.screen()

            if not wait_for(shown, 5.0):
                self._note([Action("error", {"message": f"the terminal UI did not attach {path} (no {marker} on screen after pasting its path)", "screen": term.screen()[-2000:]})])
                return False
        return True

    def _type(self, term: Terminal, prompt: str) -> None:
        if "\n" in prompt:
            term.paste(prompt)
        else:
            term.type(prompt)
        first = prompt.strip().splitlines()[0][:40] if prompt.strip() else ""
        wait_for(lambda: first in term.screen() or "Pasted text" in term.screen(), 2.0)
        time.sleep(0.2)
        term.keys("Enter")

    def _turn_end(self, term: Terminal, tui: Tui, tail: _Tail, stop_log: Path, index: int, ready: re.Pattern[str], blocked: re.Pattern[str], deadline: float, began: float) -> str | tuple[str, str | None]:
        """("stop_hook" | "turn_duration" | "screen", last message) once turn `index` ended, or
        why it cannot end: blocked, exited, timeout, interrupted."""
        blocked_since: float | None = None
        idle_since: float | None = None
        while True:
            stops = _stops(stop_log, tui.session)
            if len(stops) > index:
                last = stops[index].get("last_assistant_message")
                return "stop_hook", last if isinstance(last, str) else None
            if tail.turn_durations > index:
                return "turn_duration", None
            if self.cancel.is_set():
                return "interrupted"
            if time.monotonic() >= deadline:
                return "timeout"
            if term.exited():
                return "exited"
            screen = term.screen()
            now = time.monotonic()
            if blocked.search(screen):
                blocked_since = blocked_since or now
                if now - blocked_since >= BLOCKED_STABLE:
                    return "blocked"
            else:
                blocked_since = None
            quiet = bool(ready.search(screen)) and "esc to interrupt" not in screen
            idle_since = (idle_since or now) if quiet and now - began > 1.0 else None
            if idle_since is not None and now - idle_since >= IDLE_STABLE + 2.0:
                return "screen", None  # neither the hook nor the transcript said so: the screen did
            time.sleep(POLL)

    def _blocked(self, term: Terminal, blocked: re.Pattern[str], when: str) -> str:
        screen = term.screen()
        lines = [ln.strip() for ln in screen.splitlines() if ln.strip() and not _rule(ln) and not ln.strip().startswith("Tip:")]
        at = next((i for i, ln in enumerate(lines) if blocked.search(ln)), len(lines))
        dialog = " / ".join(lines[max(0, at - 4) : at + 1])
        self._note([Action("error", {
            "message": f"blocked {when} at a permission prompt nobody can answer ({dialog}); the session was ended, not left to time out. "
                       "Run it with `args: [--permission-mode, bypassPermissions]`, or allow the tool (`--allowedTools`)",
            "reason": "permission_prompt",
        })])
        return "blocked"

    def _until(self, term: Terminal, deadline: float, seen: Callable[[str], bool]) -> str:
        limit = min(deadline, time.monotonic() + READY_SECONDS)
        while True:
            if seen(term.screen()):
                return "met"
            if self.cancel.is_set():
                return "interrupted"
            if term.exited():
                self._note([Action("error", {"message": f"the terminal UI exited before its prompt was ready (status {term.exit_status()})"})])
                return "exited"
            if time.monotonic() >= limit:
                if time.monotonic() >= deadline:
                    return "timeout"
                self._note([Action("error", {"message": f"the terminal UI showed no prompt within {READY_SECONDS:g}s (a first-run dialog the pre-seed did not answer?); see the stored screen"})])
                return "not_ready"
            time.sleep(POLL)

    def _leave(self, term: Terminal, tui: Tui) -> int | None:
        """`/exit` once the UI is idle (typed while it is busy, it would be queued behind the
        turn), its menu given a moment to pop up, then Enter; once more after Escape; Ctrl-D
        twice if that did not do it. A tool that said goodbye (its session closed) but whose
        process lingers is given a few seconds, then killed: noted, not an error."""
        ready = re.compile(tui.ready)
        goodbye = re.compile(tui.goodbye) if tui.goodbye else None

        def said_goodbye() -> bool:
            return goodbye is not None and bool(goodbye.search(term.screen()))

        for attempt in range(2):
            wait_for(lambda: (lambda s: bool(ready.search(s)) and "esc to interrupt" not in s)(term.screen()), EXIT_SECONDS / 2)
            if attempt:
                term.keys("Escape")
                time.sleep(0.3)
            term.type(tui.exit_text)
            wait_for(lambda: tui.exit_text in term.screen(), 2.0)
            time.sleep(0.5)
            term.keys("Enter")
            if wait_for(lambda: term.exited() or said_goodbye(), EXIT_SECONDS):
                break
        else:
            term.keys("C-d")
            time.sleep(0.3)
            term.keys("C-d")
        if wait_for(term.exited, EXIT_SECONDS / 2):
            if wait_for(lambda: term.exit_status() is not None, 2.0):
                return term.exit_status()
            self._closed = said_goodbye()  # exited, its status not yet collected by tmux: clean when it said goodbye
            return None
        if said_goodbye():
            self._note([Action("adapter.warning", {"what": f"the terminal UI closed its session (its goodbye is on screen) but its process had not exited {EXIT_SECONDS / 2:g}s later; it was killed", "line": "", "source": "terminal"})])
            self._closed = True
            return None
        self._note([Action("error", {"message": "the terminal UI did not exit on /exit or Ctrl-D; it was killed", "screen": term.screen()[-2000:]})])
        return None
