"""The versioned document kinds of the evaluation layer (the berbench form): `Evaluation`,
`Tool`, `Workflow`, `Pricing`, `Project`, `UserConfig`, `Task`. Every one starts with `apiVersion` and `kind`, is decoded
strictly (unknown or duplicate keys refused, naming the closest valid key), and a document
found where another kind belongs is refused rather than half-read.

Shared by the loaders of each kind so the header, the scalar-or-list axis rule and the
"did you mean" wording exist once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput, closest
from benchtape.spec.bench import _Loader, refuse_terminal_bench
from benchtape.spec.yamlsrc import LineDict, LineList, load_yaml_file

API_VERSION = "benchtape/v1alpha1"
# berbench's G3 documents load unchanged, so the spec's own examples are valid input.
API_VERSIONS = (API_VERSION, "bench.ber.run/v1alpha1")
HEADER_KEYS = {"apiVersion", "kind"}
KINDS = ("Evaluation", "Tool", "Workflow", "Pricing", "Project", "UserConfig", "Task")


class DocLoader(_Loader):
    """The bench loader's strictness helpers (err, where, mapping, strict, duration) for one document."""

    def header(self, doc: Any, kinds: tuple[str, ...]) -> tuple[LineDict, str]:
        """The document as a mapping and its kind, once apiVersion and kind are valid for this place."""
        if doc is None:
            raise BadInput("the file is empty", file=self.file, fix=f"start it with `apiVersion: {API_VERSION}` and `kind: {kinds[0]}`")
        if not isinstance(doc, LineDict):
            raise BadInput("the document must be a mapping at the top level", file=self.file, line=getattr(doc, "line", 1))
        version = doc.get("apiVersion")
        if version is None:
            refuse_terminal_bench(doc, self.file)
            raise self.err("no `apiVersion:`", doc, None, f"add `apiVersion: {API_VERSION}` as the first line")
        if version not in API_VERSIONS:
            near = closest(str(version), API_VERSIONS)
            raise self.err(f"unsupported apiVersion {version!r}", doc, "apiVersion", f"did you mean `{near}`?" if near else f"use `apiVersion: {API_VERSION}`")
        kind = doc.get("kind")
        if kind is None:
            raise self.err("no `kind:`", doc, None, f"add `kind: {kinds[0]}`")
        if kind not in kinds:
            if kind in KINDS:
                raise self.err(f"a `kind: {kind}` document does not belong here (this place holds {' or '.join(kinds)})", doc, "kind", _place_fix(str(kind)))
            near = closest(str(kind), kinds)
            raise self.err(f"unknown kind {kind!r}", doc, "kind", f"did you mean `{near}`?" if near else f"use `kind: {kinds[0]}`")
        return doc, str(kind)

    def axis(self, node: LineDict, key: str, what: str | None = None) -> list[str] | None:
        """A scalar or a list of scalars (the same thing when it has one item); None when absent.

        Values are compared as text: `2.1.0` and `high` stay as written, and a YAML 1.1
        boolean (`off`, `no`) or a float (`2.1`) is refused by the caller as an unknown value
        rather than silently turned into something else."""
        if key not in node or node[key] is None:
            return None
        value = node[key]
        what = what or f"`{key}`"
        if isinstance(value, dict):
            raise self.err(f"{what} must be a value or a list of values, not a mapping", node, key)
        items = list(value) if isinstance(value, list) else [value]
        if not items:
            raise self.err(f"{what} is an empty list", node, key, f"give at least one value (or drop `{key}:` where there is a default to take)")
        out: list[str] = []
        for item in items:
            if isinstance(item, (dict, list)) or item is None:
                raise self.err(f"{what}: every item must be a plain value, got {item!r}", node, key)
            text = _text(item)
            if text in out:
                raise self.err(f"{what} lists {text!r} twice", node, key, "list each value once: a repeated value would measure the same setup twice")
            out.append(text)
        return out

    def choose(self, value: str, valid: list[str], what: str, node: Any, key: str | None, fix_tail: str = "", of: str | None = None) -> str:
        """`value` when it is one of `valid`; else an error naming the closest valid one
        ("unknown model 'sonet' for claude-code", with `what`="model", `of`="for claude-code")."""
        if value in valid:
            return value
        near = closest(value, valid)
        listing = ", ".join(valid) if valid else "none"
        fix = f"did you mean {near!r}? (valid: {listing})" if near else f"valid: {listing}"
        raise self.err(f"unknown {what} {value!r}" + (f" {of}" if of else ""), node, key, fix + fix_tail)

    def strings(self, node: LineDict, key: str, what: str | None = None) -> list[str]:
        """A list of strings (a single string is a one-item list). Without `what`, the bench
        loader's own reading (so the override keeps the signature it overrides)."""
        if what is None:
            return super().strings(node, key)
        value = node.get(key)
        if value is None:
            return []
        items = list(value) if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, str) or not item.strip():
                raise self.err(f"{what}: every entry must be a non-empty string, got {item!r}", node, key)
        return [str(i) for i in items]

    def string_map(self, node: LineDict, key: str, what: str) -> dict[str, str]:
        value = node.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.err(f"{what} must map names to values", node, key)
        out: dict[str, str] = {}
        for k, v in value.items():
            if isinstance(v, (dict, list)) or v is None:
                raise self.err(f"{what}: {k} must be a plain value, got {v!r}", value, k)
            out[str(k)] = _text(v)
        return out


def load_document(path: Path, kinds: tuple[str, ...]) -> tuple[DocLoader, LineDict, str]:
    """Read a file and check its header; the loader carries the file for every later error."""
    loader = DocLoader(path)
    doc, kind = loader.header(load_yaml_file(path), kinds)
    return loader, doc, kind


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _place_fix(kind: str) -> str:
    return {
        "Evaluation": "evaluations live in .benchtape/evaluations/NAME.yaml",
        "Tool": "tool overlays live in .benchtape/tools/NAME.yaml (or ~/.config/benchtape/tools/)",
        "Workflow": "workflows live in .benchtape/tools/NAME.yaml (or ~/.config/benchtape/tools/)",
        "Pricing": "pricing lives in .benchtape/pricing.yaml or ~/.config/benchtape/pricing.yaml",
        "Project": "a project's config lives in .benchtape/config.yaml (or .ber/bench/config.yaml)",
        "UserConfig": "the user's config lives in ~/.config/benchtape/config.yaml",
        "Task": "a task lives in .benchtape/tasks/<id>/task.yaml",
    }.get(kind, "move it to the folder for its kind")


__all__ = ["API_VERSION", "API_VERSIONS", "HEADER_KEYS", "DocLoader", "LineList", "load_document"]
