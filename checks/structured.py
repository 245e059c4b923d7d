"""Structured checks: is the final output (or some part of it) JSON, XML, HTML, SQL, or a
well-formed function call? Pass or fail.

`is-*` grade the whole output (surrounding whitespace trimmed, nothing else forgiven: a
Markdown fence around JSON is not JSON); `contains-*` find the first embedded instance.
Schemas are checked when the check is built, so a broken schema is refused up front
rather than failing every session.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from benchtape.checks.common import loads_json, no_value, output_of, short
from benchtape.checks.markup import HtmlSchema, find_xml, parse_xml, scan_html
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.checks.sqltext import check_sql, find_sql
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "Structured"
READS = "final_output"
_MAX_JSON_STARTS = 2000


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _parse_json(text: str) -> tuple[Any, str | None]:
    """(the document, None), or (None, why) when `text` is not strict JSON."""
    try:
        return loads_json(text), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)


# ---------------------------------------------------------------- JSON Schema


def _validator(schema: Any, type: str, what: str = "value") -> Any:
    """A JSON Schema validator, the schema itself checked against its metaschema now.
    jsonschema is imported here, by the first check that declares a schema (listing the
    catalog, or grading without one, never loads it)."""
    import jsonschema.exceptions
    import jsonschema.validators

    if isinstance(schema, str):
        try:
            schema = loads_json(schema)
        except ValueError as exc:
            raise CheckConfigError(f"{type}: '{what}' is a string but not a JSON Schema document: {exc}") from exc
    if not isinstance(schema, (dict, bool)):
        raise CheckConfigError(f"{type}: '{what}' must be a JSON Schema (a mapping)")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise CheckConfigError(f"{type}: '{what}' is not a valid JSON Schema: {exc.message}") from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _schema_errors(validator: Any, instance: Any, limit: int = 5) -> list[str]:
    """The first few schema violations, each bounded: jsonschema's message quotes the
    whole offending instance, which may be most of a huge answer."""
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [short(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}", 300) for e in errors[:limit]]


# ---------------------------------------------------------------- JSON


@register(
    "is-json",
    family=FAMILY,
    summary="the whole output (trimmed) is JSON; with `value`, it also validates against that JSON Schema",
    reads=READS,
    args={"value": "optional JSON Schema (a mapping) the document must satisfy"},
    example="type: is-json\nvalue:\n  type: object\n  required: [status]",
    errors=("'value' that is not a valid JSON Schema",),
)
def is_json(spec: CheckSpec) -> Evaluator:
    validator = None if spec.value is None else _validator(spec.value, spec.type)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        doc, err = _parse_json(output_of(session).strip())
        if err is not None:
            return Result.of(False, f"output is not JSON: {short(err, 120)}", {"json_type": None, "error": err})
        ev: dict[str, Any] = {"json_type": _json_type(doc), "error": None}
        if validator is not None:
            errs = _schema_errors(validator, doc)
            ev["schema_errors"] = errs
            if errs:
                return Result.of(False, f"output is JSON but breaks the schema: {errs[0]}", ev)
        return Result.of(True, "output is JSON" + (" matching the schema" if validator else ""), ev)

    return evaluate


def _embedded_json(text: str, validator: Any) -> tuple[Any, int, int, int, list[str]]:
    """The first `{`/`[` that starts a JSON value (satisfying the schema, if any).

    Returns (value, start, end, tries, last schema errors); start is -1 when none.
    """
    decoder = json.JSONDecoder(parse_constant=_reject)
    tries, last_errors = 0, []
    for i, ch in enumerate(text):
        if ch not in "{[":
            continue
        tries += 1
        if tries > _MAX_JSON_STARTS:
            break
        try:
            value, end = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            continue
        if validator is not None:
            errs = _schema_errors(validator, value)
            if errs:
                last_errors = errs
                continue
        return value, i, end, tries, []
    return None, -1, -1, tries, last_errors


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@register(
    "contains-json",
    family=FAMILY,
    summary="some `{` or `[` in the output starts a valid JSON value (satisfying `value`, a JSON Schema, if given)",
    reads=READS,
    args={"value": "optional JSON Schema the embedded value must satisfy"},
    example="type: contains-json",
    errors=("'value' that is not a valid JSON Schema",),
)
def contains_json(spec: CheckSpec) -> Evaluator:
    validator = None if spec.value is None else _validator(spec.value, spec.type)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        text = output_of(session)
        value, start, end, tries, errs = _embedded_json(text, validator)
        ev: dict[str, Any] = {"found": start >= 0, "start": start if start >= 0 else None, "end": end if start >= 0 else None, "candidates_tried": tries}
        if start < 0:
            if errs:
                ev["schema_errors"] = errs
                return Result.of(False, f"JSON found, but none satisfies the schema: {errs[0]}", ev)
            return Result.of(False, "no JSON value in the output", ev)
        ev["json_type"] = _json_type(value)
        return Result.of(True, f"JSON {ev['json_type']} at offset {start}", ev)

    return evaluate


# ---------------------------------------------------------------- XML


@register("is-xml", family=FAMILY, summary="the whole output (trimmed) is one well-formed XML document", reads=READS, example="type: is-xml", errors=("a value (it takes none)",))
def is_xml(spec: CheckSpec) -> Evaluator:
    no_value(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        found = parse_xml(output_of(session))
        ev = {"root_tag": found.root, "error": found.error}
        return Result.of(found.ok, f"output is XML with root <{found.root}>" if found.ok else f"output is not XML: {found.error}", ev)

    return evaluate


@register("contains-xml", family=FAMILY, summary="some well-formed XML element is embedded in the output", reads=READS, example="type: contains-xml", errors=("a value (it takes none)",))
def contains_xml(spec: CheckSpec) -> Evaluator:
    no_value(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        found = find_xml(output_of(session))
        ev = {"found": found.ok, "root_tag": found.root, "start": found.start if found.ok else None, "end": found.end if found.ok else None}
        return Result.of(found.ok, f"XML element <{found.root}> at offset {found.start}" if found.ok else found.error or "no XML", ev)

    return evaluate


# ---------------------------------------------------------------- HTML

_HTML_ARGS = {"value": "optional schema {rootTag: tag, hasElement: tag or [tags], attrHas: {attribute: substring of its value, '' = any} or [attributes]}"}
_HTML_ERRORS = ("a schema key other than rootTag, hasElement, attrHas", "a schema entry of the wrong shape")


def _html_schema(spec: CheckSpec) -> HtmlSchema | None:
    v = spec.value
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise CheckConfigError(f"{spec.type}: 'value' must be a mapping {{rootTag, hasElement, attrHas}}")
    unknown = sorted(set(v) - {"rootTag", "hasElement", "attrHas"})
    if unknown:
        raise CheckConfigError(f"{spec.type}: unknown schema key(s) {unknown}: use rootTag, hasElement, attrHas")
    root = v.get("rootTag")
    if root is not None and not (isinstance(root, str) and root):
        raise CheckConfigError(f"{spec.type}: rootTag must be a tag name")
    has = v.get("hasElement")
    has_list = [has] if isinstance(has, str) else list(has) if isinstance(has, list) else [] if has is None else None
    if has_list is None or not all(isinstance(t, str) and t for t in has_list):
        raise CheckConfigError(f"{spec.type}: hasElement must be a tag name or a list of them")
    attr = v.get("attrHas")
    if attr is None:
        pairs: list[tuple[str, str]] = []
    elif isinstance(attr, str):
        pairs = [(attr, "")]
    elif isinstance(attr, list) and all(isinstance(a, str) for a in attr):
        pairs = [(a, "") for a in attr]
    elif isinstance(attr, Mapping) and all(isinstance(k, str) and isinstance(x, (str, type(None))) for k, x in attr.items()):
        pairs = [(k.lower(), x or "") for k, x in attr.items()]
    else:
        raise CheckConfigError(f"{spec.type}: attrHas must be an attribute name, a list of them, or a mapping attribute -> substring")
    if root is None and not has_list and not pairs:
        raise CheckConfigError(f"{spec.type}: the schema is empty: give rootTag, hasElement or attrHas, or drop 'value'")
    return HtmlSchema(root.lower() if root else None, tuple(t.lower() for t in has_list), tuple((a.lower(), x) for a, x in pairs))


def _html_check(whole: bool) -> Callable[[CheckSpec], Evaluator]:
    def build(spec: CheckSpec) -> Evaluator:
        schema = _html_schema(spec)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            text = output_of(session)
            body = text.strip()
            scan = scan_html(body)
            ev: dict[str, Any] = {"elements": len(scan.elements), "tags": sorted(set(scan.tags))[:20], "root_tag": scan.tags[0] if scan.tags else None}
            if whole:
                if not (body.startswith("<") and body.endswith(">")):
                    return Result.of(False, "output does not begin with '<' and end with '>'", ev)
                if body[:5].lower() == "<?xml":
                    return Result.of(False, "output is an XML document, not HTML", ev)
                if not scan.starts_with_markup:
                    return Result.of(False, "output starts with text, not a tag", ev)
            if not scan.elements:
                return Result.of(False, "no tag of a known HTML element in the output", ev)
            if schema is not None:
                problems = schema.problems(scan)
                ev["schema_problems"] = problems
                if problems:
                    return Result.of(False, "HTML, but " + "; ".join(problems), ev)
            return Result.of(True, f"output {'is' if whole else 'contains'} HTML ({len(scan.elements)} elements)", ev)

        return evaluate

    return build


register("is-html", family=FAMILY, summary="the whole output (trimmed) is HTML: tags of known HTML elements, starting and ending with a tag (matching the optional schema)", reads=READS, args=_HTML_ARGS, example="type: is-html\nvalue: {rootTag: div, hasElement: [ul, li]}", errors=_HTML_ERRORS)(_html_check(True))
register("contains-html", family=FAMILY, summary="the output contains an explicit tag of a known HTML element (matching the optional schema)", reads=READS, args=_HTML_ARGS, example="type: contains-html\nvalue: {attrHas: {href: 'https://'}}", errors=_HTML_ERRORS)(_html_check(False))


# ---------------------------------------------------------------- SQL


@register(
    "is-sql",
    family=FAMILY,
    summary="the whole output is one or more SQL statements (a recognizer of the common statement shapes, not one dialect's grammar)",
    reads=READS,
    example="type: is-sql",
    errors=("a value (it takes none)",),
)
def is_sql(spec: CheckSpec) -> Evaluator:
    no_value(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        found = check_sql(output_of(session))
        ev = {"statements": found.statements, "keywords": list(found.keywords), "error": found.error}
        return Result.of(found.ok, f"output is SQL ({found.statements} statement{'s' if found.statements != 1 else ''})" if found.ok else f"output is not SQL: {found.error}", ev)

    return evaluate


@register(
    "contains-sql",
    family=FAMILY,
    summary="a SQL statement is embedded in the output: a fenced block that is SQL, or a statement in prose (keyword in capitals or ended by ';')",
    reads=READS,
    example="type: contains-sql",
    errors=("a value (it takes none)",),
)
def contains_sql(spec: CheckSpec) -> Evaluator:
    no_value(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        text = output_of(session)
        found = find_sql(text)
        excerpt = short(text[found.start : found.end], 200) if found.ok else None
        ev = {"found": found.ok, "start": found.start if found.ok else None, "end": found.end if found.ok else None, "excerpt": excerpt, "error": found.error}
        return Result.of(found.ok, f"SQL at offset {found.start}: {short(excerpt or '', 80)!r}" if found.ok else found.error or "no SQL", ev)

    return evaluate


# ---------------------------------------------------------------- function calls


def _function_defs(spec: CheckSpec) -> dict[str, Any] | None:
    """Optional `value`: the functions the call may name, as a list of {name, parameters}
    (OpenAI `tools` entries {type: function, function: {…}} also accepted). Maps a name
    to the validator of its parameters (None when it declares none)."""
    v = spec.value
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    defs: dict[str, Any] = {}
    for item in items:
        if isinstance(item, Mapping) and item.get("type") == "function" and isinstance(item.get("function"), Mapping):
            item = item["function"]
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
            raise CheckConfigError(f"{spec.type}: each function in 'value' needs a name (got {short(repr(item), 80)})")
        params = item.get("parameters")
        defs[item["name"]] = None if params is None else _validator(params, spec.type, f"parameters of {item['name']}")
    if not defs:
        raise CheckConfigError(f"{spec.type}: 'value' lists no functions")
    return defs


def _check_call(name: Any, args: Any, defs: dict[str, Any] | None, where: str) -> list[str]:
    """Problems with one call's name and (already decoded) arguments."""
    if not isinstance(name, str) or not name:
        return [f"{where}: 'name' must be a non-empty string"]
    if not isinstance(args, dict):
        return [f"{where}: arguments of {name} must be a JSON object"]
    if defs is None:
        return []
    if name not in defs:
        return [f"{where}: {name} is not one of the declared functions ({', '.join(sorted(defs))})"]
    validator = defs[name]
    return [f"{where}: {name}: {e}" for e in _schema_errors(validator, args)] if validator is not None else []


def _decode_arguments(raw: Any, *, string_only: bool) -> tuple[Any, str | None]:
    if isinstance(raw, str):
        doc, err = _parse_json(raw)
        return (None, f"arguments are not JSON: {short(err, 80)}") if err is not None else (doc, None)
    if string_only:
        return None, "arguments must be a JSON-encoded string"
    return raw, None


@register(
    "is-valid-function-call",
    family=FAMILY,
    summary="the output is a function-call object {name, arguments} (arguments an object or a JSON string of one); with `value`, the name is declared and the arguments satisfy its parameters",
    reads=READS,
    args={"value": "optional list of function definitions {name, parameters (JSON Schema)}"},
    example="type: is-valid-function-call\nvalue:\n  - name: get_weather\n    parameters: {type: object, required: [city]}",
    errors=("a function definition without a name", "parameters that are not a valid JSON Schema"),
)
def is_valid_function_call(spec: CheckSpec) -> Evaluator:
    defs = _function_defs(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        doc, err = _parse_json(output_of(session).strip())
        if err is not None:
            return Result.of(False, f"output is not JSON: {short(err, 120)}", {"name": None, "errors": [err]})
        if isinstance(doc, dict) and isinstance(doc.get("function_call"), dict):
            doc = doc["function_call"]
        if not isinstance(doc, dict):
            return Result.of(False, f"output is a JSON {_json_type(doc)}, not a function-call object", {"name": None, "errors": ["not an object"]})
        if "arguments" not in doc:
            problems = ["the call has no 'arguments'"]
            args = None
        else:
            args, err = _decode_arguments(doc["arguments"], string_only=False)
            problems = [err] if err else _check_call(doc.get("name"), args, defs, "call")
        name = doc.get("name") if isinstance(doc.get("name"), str) else None
        ev = {"name": name, "argument_keys": sorted(args) if isinstance(args, dict) else None, "errors": problems}
        return Result.of(not problems, f"valid call to {name}" if not problems else problems[0], ev)

    return evaluate


@register(
    "is-valid-openai-tools-call",
    family=FAMILY,
    summary="the output is an OpenAI tools-call array [{type: function, function: {name, arguments (a JSON string of an object)}}] (or {tool_calls: [...]}); with `value`, every call names a declared tool with valid arguments",
    reads=READS,
    args={"value": "optional list of tool definitions ({type: function, function: {name, parameters}} or {name, parameters})"},
    example='type: is-valid-openai-tools-call\nvalue:\n  - type: function\n    function: {name: search, parameters: {type: object, properties: {q: {type: string}}, required: [q]}}',
    errors=("a tool definition without a name", "parameters that are not a valid JSON Schema"),
)
def is_valid_openai_tools_call(spec: CheckSpec) -> Evaluator:
    defs = _function_defs(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        doc, err = _parse_json(output_of(session).strip())
        if err is not None:
            return Result.of(False, f"output is not JSON: {short(err, 120)}", {"calls": [], "errors": [err]})
        if isinstance(doc, dict) and isinstance(doc.get("tool_calls"), list):
            doc = doc["tool_calls"]
        if not isinstance(doc, list) or not doc:
            return Result.of(False, "output is not a non-empty array of tool calls", {"calls": [], "errors": ["not a non-empty array"]})
        problems: list[str] = []
        names: list[str | None] = []
        for i, call in enumerate(doc):
            where = f"call {i + 1}"
            if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(call.get("function"), dict):
                problems.append(f"{where}: must be {{type: function, function: {{name, arguments}}}}")
                names.append(None)
                continue
            if "id" in call and not isinstance(call["id"], str):
                problems.append(f"{where}: 'id' must be a string")
            fn = call["function"]
            names.append(fn.get("name") if isinstance(fn.get("name"), str) else None)
            if "arguments" not in fn:
                problems.append(f"{where}: the function has no 'arguments'")
                continue
            args, err = _decode_arguments(fn["arguments"], string_only=True)
            problems.extend([f"{where}: {err}"] if err else _check_call(fn.get("name"), args, defs, where))
        ev = {"calls": names, "errors": problems}
        return Result.of(not problems, f"{len(doc)} valid tool call(s): {', '.join(n or '?' for n in names)}" if not problems else problems[0], ev)

    return evaluate
