"""The Eval's `control:` audit (madbench v0.23.0 §1.10): before anything runs, each run's
staged inputs are diffed against the baseline run, so an Eval that means to compare
instructions cannot silently compare different testdata too.

Inputs, each with a label that `varies:` patterns match (fnmatch):
  testdata/<path>                 every file of every scenario's testdata tree (sha256)
  agent_env/<path>                every file of harness_config.agent_env
  plugins/<id>/<path>             every file of a plugin folder
  harness_config.system_prompt    the value
  harness_config.args[N]          one per argv position
  harness_config.plugins[N]       each plugin entry (id, path, marketplace)
The diff is always reported; with a `control:` block present, a difference no `varies`
pattern covers makes the Eval CONFOUNDED: it stops before anything is recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from benchtape.spec.bench import BenchSpec

CONFOUNDED = "CONFOUNDED: runs differ in more than their instructions"

Item = tuple[str, int]  # (sha256, bytes)


@dataclass
class Scope:
    """One staged root (or the harness_config values): its label → content."""

    root: str | None
    items: dict[str, Item] = field(default_factory=dict)
    scenarios: list[str] = field(default_factory=list)


class Confounded(Exception):
    """The runs differ in inputs `varies:` does not cover: nothing ran, nothing was recorded (exit 1)."""

    def __init__(self, report: dict[str, Any]):
        self.report = report
        super().__init__(CONFOUNDED)


def audit(runs: list[tuple[str, BenchSpec]], baseline: str | None = None, varies: list[str] | None = None, enforced: bool = False) -> dict[str, Any]:
    """Diff every run against the baseline (default the first). Raises Confounded when enforced and uncovered."""
    names = [n for n, _ in runs]
    baseline = baseline or names[0]
    varies = list(varies or [])
    cache: dict[str, dict[str, Item]] = {}
    inputs = {name: _inputs(bench, cache) for name, bench in runs}
    base = inputs[baseline]
    used: set[str] = set()
    out_runs: list[dict[str, Any]] = []
    for name in names:
        if name == baseline:
            out_runs.append({"name": name, "status": "baseline", "changes": []})
            continue
        changes = _diff(base, inputs[name])
        for c in changes:
            c["covered_by"] = next((p for p in varies if fnmatchcase(c["label"], p)), None)
            if c["covered_by"]:
                used.add(c["covered_by"])
        uncovered = [c for c in changes if not c["covered_by"]]
        status = "same" if not changes else ("unguarded" if not enforced else ("CONFOUNDED" if uncovered else "allowed"))
        out_runs.append({"name": name, "status": status, "changes": changes})
    report = {
        "baseline": baseline,
        "enforced": enforced,
        "varies": varies,
        "unmatched_varies": [p for p in varies if p not in used],
        "runs": out_runs,
        "confounded": any(r["status"] == "CONFOUNDED" for r in out_runs),
    }
    if report["confounded"]:
        raise Confounded(report)
    return report


def render_lines(report: dict[str, Any]) -> list[str]:
    """The `── CONTROL` console block."""
    head = f"── CONTROL  baseline {report['baseline']}"
    head += f" · varies: {', '.join(report['varies'])}" if report["varies"] else (" · no varies" if report["enforced"] else " · no control: block (reported, not enforced)")
    lines = [head]
    for run in report["runs"]:
        if run["status"] == "baseline":
            continue
        lines.append(f"  {run['name']}: {run['status']}" + ("" if run["changes"] else " (stages the same inputs)"))
        for c in run["changes"]:
            lines.append("    " + change_text(c) + (f"  (varies {c['covered_by']})" if c.get("covered_by") else ""))
    for p in report["unmatched_varies"]:
        lines.append(f"  note: varies entry {p!r} matched nothing — probable typo")
    return lines


def confounded_lines(report: dict[str, Any]) -> list[str]:
    lines = [CONFOUNDED]
    for run in report["runs"]:
        for c in run["changes"]:
            if run["status"] == "CONFOUNDED" and not c.get("covered_by"):
                lines.append(f"  {run['name']}: {change_text(c)} — not covered by control.varies")
    lines.append("  nothing ran, nothing was recorded; fix: make the runs stage the same inputs, or add the intended difference to control.varies")
    return lines


def change_text(c: dict[str, Any]) -> str:
    sign = {"added": "+", "removed": "-", "changed": "~"}[c["kind"]]
    delta = c["delta"]
    where = f"  [scenario {', '.join(c['scenarios'])}]" if c.get("scenarios") else ""
    return f"{sign} {c['label']}  {c['kind']} {'+' if delta >= 0 else ''}{delta} B{where}"


# ---------------------------------------------------------------- inputs


def _inputs(bench: BenchSpec, cache: dict[str, dict[str, Item]]) -> dict[str, Scope]:
    scopes: dict[str, Scope] = {}
    for sc in bench.scenarios:
        if sc.testdata is None:
            continue
        key = f"scenario:{sc.name}"
        scopes[key] = Scope(str(sc.testdata), _tree(sc.testdata, "testdata", cache), [sc.name])
    hc = bench.harness_config or {}
    values: dict[str, Item] = {}
    if hc.get("system_prompt") is not None:
        values["harness_config.system_prompt"] = _value(hc["system_prompt"])
    for i, arg in enumerate(hc.get("args") or []):
        values[f"harness_config.args[{i}]"] = _value(arg)
    for i, plugin in enumerate(hc.get("plugins") or []):
        values[f"harness_config.plugins[{i}]"] = _value(plugin)
        path = plugin.get("path") if isinstance(plugin, dict) else None
        if isinstance(path, str) and path:
            p = Path(path) if Path(path).is_absolute() else bench.dir / path
            pid = plugin.get("id") or str(i)
            scopes[f"plugin:{pid}"] = Scope(str(p.resolve()), _tree(p, f"plugins/{pid}", cache))
    agent_env = hc.get("agent_env")
    if isinstance(agent_env, str) and agent_env:
        scopes["agent_env"] = Scope(agent_env, _tree(Path(agent_env), "agent_env", cache))
    elif agent_env is not None:
        values["harness_config.agent_env"] = _value(agent_env)
    scopes["harness_config"] = Scope(None, values)
    return scopes


def tree_items(root: Path, prefix: str) -> dict[str, Item]:
    """Every file under `root` as `prefix/<relative path>` → (sha256, bytes): content, never
    location, so a tree copied elsewhere has the same items (the cell identity hashes these too)."""
    return _tree(root, prefix, {})


def _value(value: Any) -> Item:
    data = value.encode() if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest(), len(data)


def _tree(root: Path, prefix: str, cache: dict[str, dict[str, Item]]) -> dict[str, Item]:
    ck = f"{prefix}\0{root}"
    if ck in cache:
        return cache[ck]
    items: dict[str, Item] = {}
    if root.is_file():
        items[f"{prefix}/{root.name}"] = _file(root)
    elif root.is_dir():
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for fn in sorted(filenames):
                full = Path(dirpath) / fn
                items[f"{prefix}/{full.relative_to(root).as_posix()}"] = _file(full)
    cache[ck] = items
    return items


def _file(path: Path) -> Item:
    if path.is_symlink():
        data = os.readlink(path).encode()
        return hashlib.sha256(b"symlink:" + data).hexdigest(), len(data)
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _diff(base: dict[str, Scope], other: dict[str, Scope]) -> list[dict[str, Any]]:
    """Changes per label; the same change in several scenarios is listed once, naming them."""
    merged: dict[tuple[str, str, int | None, int | None], dict[str, Any]] = {}
    for key in list(base) + [k for k in other if k not in base]:
        a, b = base.get(key), other.get(key)
        if a is not None and b is not None and a.root is not None and a.root == b.root:
            continue  # the same staged root: not audited
        a_items, b_items = (a.items if a else {}), (b.items if b else {})
        owner = b or a
        scenarios = owner.scenarios if owner else []
        for label in sorted(set(a_items) | set(b_items)):
            x, y = a_items.get(label), b_items.get(label)
            if x == y:
                continue
            kind = "added" if x is None else "removed" if y is None else "changed"
            before, after = (x[1] if x else None), (y[1] if y else None)
            entry = merged.setdefault((label, kind, before, after), {"label": label, "kind": kind, "before_bytes": before, "after_bytes": after, "delta": (after or 0) - (before or 0), "scenarios": []})
            entry["scenarios"].extend(s for s in scenarios if s not in entry["scenarios"])
    return sorted(merged.values(), key=lambda c: c["label"])
