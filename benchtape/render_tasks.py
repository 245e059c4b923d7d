"""How `task …` and `doctor` results read on a terminal (plain lines), and as JSON."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from benchtape.core.termtext import printable


def say(line: str) -> None:
    """One line of a task command's output: names and titles come from a repository nobody here
    wrote, so control characters in them are escaped (core/termtext.py), a newline included."""
    print(printable(line))


def print_json(doc: Any) -> None:
    sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def scan_table(result: Any) -> None:
    shown = result.candidates[: result.limit]
    say(f"{result.repo}: {result.scanned} mainline commits scanned in {result.seconds:.2f}s; {len(result.candidates)} candidates, {len(result.skipped)} skipped")
    if shown:
        say(f"{'id':>12}  {'kind':6}  {'score':>5}  {'date':10}  {'impl':>4}  {'tests':>5}  title")
    for c in shown:
        d = c.to_dict()
        mark = " (task exists)" if c.existing else ""
        say(f"{d['id']:>12}  {d['kind']:6}  {d['score']:>5.1f}  {d['date'][:10]}  {len(d['implementation']):>4}  {len(d['tests']):>5}  {d['title'][:60]}{mark}")
    if len(result.candidates) > len(shown):
        # ranked by score, so newer candidates can sit below the cut: name both ways to reach them
        more = f"--limit {min(200, len(result.candidates))} shows more; " if len(shown) < 200 else ""  # 200 is --limit's most: past it only --since narrows
        say(f"… {len(result.candidates) - len(shown)} more not shown: {more}--since DATE (or 90d) keeps only the newest")
    if result.reasons:
        say("skipped:")
        for why, n in sorted(result.reasons.items(), key=lambda kv: -kv[1]):
            say(f"  {n:>4}  {why}")
    if shown:
        say(f"next: benchtape task create {shown[0].landing.id}")


def created_lines(c: Any) -> None:
    say(f"created task {c.id} in {c.folder} (unvalidated)")
    say(f"  from {c.landing.kind} {c.landing.fix.sha[:12]}, base {c.landing.base[:12]}; prompt from the {c.prompt_source} text")
    say(f"  tests.patch: {', '.join(c.tests)}")
    say(f"  reference.patch: {', '.join(c.reference)}" + (f"  (noise dropped: {', '.join(c.noise)})" if c.noise else ""))
    say(f"  verify.command: {c.command}   ({c.command_note})")
    for line in c.environment:
        say(f"  environment: {line}")
    if c.runner is None:
        say("  ! write the verify command in task.yaml before validating")
    for f in c.leaks:
        say(f"  ! leak: {f.describe()}")
    if c.unnamed:
        say(f"  ! {c.unnamed_warning()}")
    if c.promised:
        say(f"  ! {c.promise_warning()}")
    if c.thin_warning:
        say(f"  ! {c.thin_warning}")
    if c.no_code_warning:
        say(f"  ! {c.no_code_warning}")
    say(f"next: review {c.folder}/prompt.md, then " + (f"benchtape task lint --fix {c.id}" if c.leaks else f"benchtape task validate {c.id}"))


def lint_lines(results: list[Any]) -> None:
    for r in results:
        if not r.findings and not r.fixed and not r.fragments:
            say(f"{r.id}: clean")
            continue
        say(f"{r.id}: {len(r.findings)} finding(s) in {r.prompt}" + (" — redacted" if r.fixed else ""))
        for f in r.findings:
            say(f"  {f.describe()}")
        if r.fixed and r.remaining:
            say(f"  still: {'; '.join(f.describe() for f in r.remaining)}")
        for g in r.fragments:
            say(f"  {g.describe()}")
    if any(not r.clean and not r.fixed for r in results):
        say("next: benchtape task lint --fix")


def validated_lines(result: Any) -> None:
    say(f"validated at level {result.level} (run {result.run_id}): {result.why}" if result.why else f"validated at level {result.level} (run {result.run_id})")
    for t in result.tasks:
        if t.refused:
            first, *rest = t.refused.splitlines() or [""]
            say(f"  {t.id}: refused — {first}")
            for line in rest:  # a failed build's output: each line on its own, escaped as any other
                if line.strip():
                    say(f"      | {line}")
            say(f"      next: {t.next}")
            continue
        say(f"  {t.id}: {'VALID' if t.validated else 'not valid'} ({t.where})")
        width = max((len(name) for name in t.phases), default=9)  # `reference.3`, `base.suite`: the columns stay in line
        said: set[str] = set()  # a reason the runs again gave again (reference.2, reference.3) is printed once
        for name, p in t.phases.items():
            d = p.to_dict()
            counts = _phase_counts(d, p.judgement)
            diag = f" — {d['diagnosis']}" if d["diagnosis"] else ""
            say(f"      {name:{width}} {d['status']:18} exit {d['exit']}  {counts}{diag}   log {d['log_path']}")
            if d["diagnosis"] and p.judgement.detail:
                say(f"      {'':{width}} why: " + ("the same as above" if p.judgement.detail in said else p.judgement.detail[:600]))
                said.add(p.judgement.detail)
        if t.tests is not None:
            say(f"      tests     FAIL_TO_PASS {len(t.tests.fail_to_pass)}: {', '.join(t.tests.fail_to_pass[:3])}{' …' if len(t.tests.fail_to_pass) > 3 else ''}; PASS_TO_PASS {len(t.tests.pass_to_pass)}")
            failing = t.tests.fail_with_fix
            if failing:  # out of both lists, as SWE-bench leaves them: said, so a VALID task hides none of them
                say(f"      {'':9} in neither list: {len(failing)} fail with the fix too: {', '.join(failing[:3])}{' …' if len(failing) > 3 else ''}")
        if t.health is not None and not t.health.held:
            say(f"      health    {t.health.diagnosis}: {t.health.detail}")
        for note in t.notes:
            say(f"      note: {note}")
        if not t.validated:
            say(f"      next: {t.next}")


def task_table(rows: list[Any]) -> None:
    if not rows:
        say("no tasks; next: benchtape task scan")
        return
    import shutil
    import textwrap

    width = max(60, shutil.get_terminal_size((120, 24)).columns - 27)
    for r in rows:
        # the whole reason, wrapped under its column (cut at 80 characters it read "… base comm")
        lines = textwrap.wrap(r.why, width) or [""]
        say(f"{r.id:>12}  {r.state:11}  {lines[0]}")
        for more in lines[1:]:
            say(f"{'':>12}  {'':11}  {more}")
        if r.state != "valid":
            say(f"{'':>12}  next: {r.next}")


def doctor_lines(report: Any) -> None:
    marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    for c in report.checks:
        say(f"{marks[c.status]}  {c.name}: {c.detail}")
        if c.next and c.status != "ok":
            say(f"      next: {c.next}")
    failed = [c for c in report.checks if c.status == "fail"]
    say(f"{len(failed)} failed" if failed else "everything benchtape needs is here")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def _ago(epoch: float) -> str:
    """'3 days ago', for a list read at a glance."""
    import time

    ago = max(0.0, time.time() - epoch)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if ago >= size:
            n = int(ago // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def _env_line(e: Any) -> str:
    if e.node:
        what = f"{e.project or '(unnamed project)'}, node {e.node}, node_modules by {e.installer or '?'}"
    else:
        what = f"{e.project or '(unnamed project)'}, Python {e.python or '?'}" + ("" if e.project_installed else ", project not installed")
    when = ("last used " + _ago(e.last_used)) if e.last_used else "never used"
    state = "" if e.complete else "  (a build that never finished)"
    held = "  IN USE" if e.in_use else ""
    return f"{e.key}  {_mb(e.bytes):>8}  {when:24}  {what}{state}{held}"


def env_lines(cache: Any, found: list[Any]) -> None:
    if not found:
        say(f"no cached environments in {cache}")
        return
    for e in found:
        say(_env_line(e))
    say(f"{len(found)} environment{'s' if len(found) != 1 else ''}, {_mb(sum(e.bytes for e in found))}, in {cache}; next: benchtape task envs --prune --unused-for 30d")


def pruned_lines(cache: Any, unused_for: str, pruned: Any) -> None:
    for e in pruned.removed:
        say(f"removed {_env_line(e)}")
    for e in pruned.kept_in_use:
        say(f"kept    {_env_line(e)}: a running benchtape uses it")
    for e, why in pruned.failed:
        say(f"FAILED  {_env_line(e)}: could not remove it ({why})")
    say(f"freed {_mb(pruned.freed)} in {cache}: {len(pruned.removed)} removed, {pruned.kept} used within {unused_for} kept" + (f", {len(pruned.kept_in_use)} in use kept" if pruned.kept_in_use else "") + (f", {len(pruned.failed)} could not be removed" if pruned.failed else ""))


def _phase_counts(d: dict[str, Any], judgement: Any) -> str:
    """What a phase's row says it ran: a reward, the runner's counts, the patch that did not apply
    (never "runner not recognised" for a run that never started), or that no runner was read."""
    if d.get("reward") is not None:
        return f"reward {d['reward']:g}"
    if d["runner"]:
        # passed, not `ran`: `ran` leaves a test that errored out, and read "ran 1" where unittest said "Ran 2 tests" (tomli #202)
        return f"passed {d['passed']}, failed {d['failed']}, errors {d['errored']}"
    if d["status"] == "patch_apply_failed":
        return f"{d.get('patch') or 'a patch'} does not apply: nothing ran"
    return judgement.detail if judgement.held and judgement.detail else "runner not recognised"
