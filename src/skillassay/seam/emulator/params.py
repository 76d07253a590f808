"""Request parameters: query strings decoded the way the SDKs encode them, and validation errors in
Seam's shape.

The SDKs serialise GET/DELETE parameters with sorted keys, arrays as repeated keys (an empty array as
``key=``), nested objects as ``obj.a=1`` and booleans as ``true``/``false``. A query string carries no
types, so values are
coerced using the route's schema before validation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from jsonschema.exceptions import ValidationError

_RESERVED = {"_strict"}


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return set(t)
    if isinstance(t, str):
        return {t}
    found: set[str] = set()
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            found |= _types(branch)
    return found


_MAX_DIGITS = 100  # longer numbers stay strings, which the validator refuses (400), as in JSON bodies


def _scalar(value: str, schema: dict[str, Any]) -> Any:
    types = _types(schema)
    if "boolean" in types and value in ("true", "false"):
        return value == "true"
    if "integer" in types and len(value) <= _MAX_DIGITS:
        try:
            return int(value)
        except ValueError:
            pass
    if "number" in types and len(value) <= _MAX_DIGITS:
        try:
            num = float(value)
        except ValueError:
            pass
        else:
            # "inf", "nan", "1e999": not numbers in JSON; left as strings they fail validation
            if math.isfinite(num):
                return int(num) if num.is_integer() and "." not in value else num
    if "null" in types and value == "null":
        return None
    return value


def coerce_query(
    items: list[tuple[str, str]],
    properties: dict[str, Any],
    resolve: Callable[[dict[str, Any]], dict[str, Any]] = lambda s: s,
) -> dict[str, Any]:
    """Turn (key, value) pairs into the JSON object the route's schema expects."""
    grouped: dict[str, list[str]] = {}
    nested: dict[str, list[tuple[str, str]]] = {}
    for key, value in items:
        if key in _RESERVED:
            continue
        key = key.removesuffix("[]")
        if "." in key:
            head, rest = key.split(".", 1)
            nested.setdefault(head, []).append((rest, value))
        else:
            grouped.setdefault(key, []).append(value)
    out: dict[str, Any] = {}
    for key, values in grouped.items():
        schema = resolve(properties.get(key, {}))
        types = _types(schema)
        if "array" in types:
            if values == [""]:
                out[key] = []
            else:
                item_schema = resolve(schema.get("items", {}))
                out[key] = [_scalar(v, item_schema) for v in values]
        elif len(values) > 1 and not types:
            out[key] = values
        else:
            out[key] = _scalar(values[-1], schema)
    for key, pairs in nested.items():
        schema = resolve(properties.get(key, {}))
        sub_props = {k: resolve(v) for k, v in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            sub_props = {**{k: extra for k, _ in pairs if k not in sub_props}, **sub_props}
        out[key] = coerce_query(pairs, sub_props, resolve)
    return out


# -- errors in Seam's (zod ``format()``) shape: {"param": {"_errors": [...]}, "_errors": [...]} --------------

_JSON_TYPE = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}


def _received(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _message(error: ValidationError) -> tuple[list[Any], str]:
    path = list(error.absolute_path)
    v = error.validator
    if v == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return [*path, missing], "Required"
    if v == "type":
        expected = error.validator_value
        if isinstance(expected, list):
            expected = " | ".join(t for t in expected if t != "null")
        return path, f"Expected {expected}, received {_received(error.instance)}"
    if v == "format":
        return path, f"Invalid {error.validator_value}"
    if v == "minLength":
        return path, f"String must contain at least {error.validator_value} character(s)"
    if v == "maxLength":
        return path, f"String must contain at most {error.validator_value} character(s)"
    if v == "enum":
        expected = " | ".join(repr(x) for x in cast("list[Any]", error.validator_value))
        return path, f"Invalid enum value. Expected {expected}, received {error.instance!r}"
    if v == "pattern":
        return path, "Invalid"
    if v in ("oneOf", "anyOf"):
        return path, "Invalid input"
    return path, error.message


def format_validation_errors(errors: list[ValidationError]) -> tuple[str, dict[str, Any]]:
    """(message, validation_errors) for a 400 ``invalid_input`` answer."""
    tree: dict[str, Any] = {"_errors": []}
    first = None
    for err in errors:
        path, msg = _message(err)
        node = tree
        for part in path:
            node = node.setdefault(str(part), {"_errors": []})
        node["_errors"].append(msg)
        if first is None:
            where = ".".join(str(p) for p in path)
            first = f"{where}: {msg}" if where else msg
    return (first or "Invalid input"), tree
