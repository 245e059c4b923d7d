"""`benchtape export --format atif|inspect|otlp`: which stored sessions, written where.

One session's ATIF trajectory goes to a file (or stdout); a run's or the whole store's go to a
new folder, one `<session id>.json` each (what `benchtape import atif FOLDER` reads back). A
run's sessions (or one session) go to Inspect as one `.eval` log per setup; any selection goes
to OpenTelemetry as a trace per session, to a receiver or an OTLP/JSON file. Every file is
written beside its target first and moved in: a failure leaves nothing half-written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from benchtape.core.errors import BadInput
from benchtape.core.leaks import ReportLeak, report_leaks
from benchtape.core.model import Session
from benchtape.formats.grades import Grading, stored_grading
from benchtape.replay.document import session_json
from benchtape.replay.report import new_folder, write_bytes_atomic
from benchtape.replay.select import Selection, rows, sessions
from benchtape.store.views import BrowsingStore


def atif_document(store: BrowsingStore, session_id: str) -> bytes:
    """One session's ATIF trajectory as the bytes of its file (indented JSON, as Harbor writes it)."""
    from benchtape.formats.atif_export import trajectory

    session = store.load_session(session_id)
    grading = stored_grading(store, session_id)
    _refuse_leaks(store, [(session_id, session, grading)], "ATIF trajectory")
    return _json(trajectory(session, grading))


def write_atif_file(store: BrowsingStore, session_id: str, dest: Path) -> Path:
    data = atif_document(store, session_id)
    try:
        write_bytes_atomic(dest, data)
    except OSError as exc:
        raise BadInput(f"cannot write there: {exc.strerror or exc}", file=str(dest), fix="name a file in a writable place") from None
    return dest


def write_atif_folder(store: BrowsingStore, selection: Selection, dest: Path) -> list[Path]:
    """Every selected session's trajectory into a new (or empty) folder, `<session id>.json` each."""
    from benchtape.formats.atif_export import trajectory

    with new_folder(dest) as tmp:
        names = []
        for row, session in sessions(store, rows(store, selection)):
            grading = stored_grading(store, row.id)
            _refuse_leaks(store, [(row.id, session, grading)], f"the ATIF trajectories in {dest}")
            (tmp / f"{row.id}.json").write_bytes(_json(trajectory(session, grading)))
            names.append(row.id)
        if not names:
            raise BadInput("no session to export in that selection", fix="`benchtape sessions` lists what is stored")
    return [dest / f"{n}.json" for n in names]


def write_inspect_logs(store: BrowsingStore, selection: Selection, dest: Path) -> tuple[list[Path], int]:
    """The selected sessions (one run's, or one session) as Inspect `.eval` logs, one per setup;
    (their paths, samples)."""
    from benchtape.formats.inspect_export import Graded, eval_logs, require_inspect, write

    require_inspect()
    items = [Graded(row, session, stored_grading(store, row.id)) for row, session in sessions(store, rows(store, selection))]
    if not items:
        raise BadInput("no session to export in that selection", fix="`benchtape sessions` lists what is stored")
    _refuse_leaks(store, [(g.row.id, g.session, g.grading) for g in items], f"Inspect log {dest}")
    run_ids = {g.row.run_id for g in items}
    run = store.run(next(iter(run_ids))) if len(run_ids) == 1 else None
    return write(eval_logs(items, run), dest), len(items)


def write_otlp(store: BrowsingStore, selection: Selection, *, endpoint: str | None = None, dest: Path | None = None, project: str | None = None) -> tuple[int, int]:
    """The selected sessions as OpenTelemetry traces (one per session), sent to an OTLP/HTTP
    receiver or written to a file as OTLP/JSON; (sessions, spans). The traces carry the
    verdicts' reasons: refused, like a report, when one would publish the answer key."""
    from benchtape.formats.inspect_export import task_name
    from benchtape.formats.otlp_export import Item, otlp_json, require_otlp, send, spans

    require_otlp()
    items = []
    for row, session in sessions(store, rows(store, selection)):
        cell = session.started.get("cell") or {}
        label = cell.get("label") or " ".join(x for x in (row.harness or session.harness, row.model or session.model) if x)
        items.append(Item(row, session, stored_grading(store, row.id), str(label) if label else None))
    if not items:
        raise BadInput("no session to export in that selection", fix="`benchtape sessions` lists what is stored")
    _refuse_leaks(store, [(i.row.id, i.session, i.grading) for i in items], "the OpenTelemetry traces")
    # each session under its own run's project (its bench's or evaluation's name), whatever else
    # the selection holds: `--all` put every trace under "benchtape", `--run` the same traces
    # under the run's name, so one trace sat in two projects of the same receiver
    names = {run_id: task_name(store.run(run_id)) for run_id in {i.row.run_id for i in items}}
    found = spans(items, (lambda item: project) if project else (lambda item: names[item.row.run_id]))
    if endpoint is not None:
        send(found, endpoint)
    if dest is not None:
        try:
            write_bytes_atomic(dest, otlp_json(found))
        except OSError as exc:
            raise BadInput(f"cannot write there: {exc.strerror or exc}", file=str(dest), fix="name a file in a writable place") from None
    return len(items), len(found)


def _refuse_leaks(store: BrowsingStore, items: list[tuple[str, Session, Grading]], what: str) -> None:
    """A format carries the verdicts' reasons: like a report, it is not written when a reason
    would publish a generated value (the answer key) the session did not say itself."""
    found = []
    for session_id, session, grading in items:
        row = store.session_row(session_id)
        generated = store.generated_vars(row.run_id, row.scenario) if row is not None else {}
        if generated and grading.verdicts:
            doc = {"session": session_json(session), "verdicts": [{"path": v["check_path"], "reason": v.get("reason")} for v in grading.verdicts]}
            found += [f"session {session_id}: {hit}" for hit in report_leaks({"results": [doc]}, generated)]
    if found:
        listed = "\n    ".join(found[:20])
        raise ReportLeak(f"{what} was NOT written: a generated value (the answer key) would be published in a check's reason:\n    {listed}")


def _json(doc: dict[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
