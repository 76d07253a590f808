"""Values built from the OpenAPI document's schemas: what the generic engine (``generic.py``) answers for a
route nobody hand-wrote.

``SchemaValues.build(schema, hints)`` makes a value valid against ``schema``: an object gets its required
properties (and any optional one a hint names), each from the hint of the same name when the hint fits
the property's schema, otherwise generated (ids new UUIDs, timestamps now, enums their first value, nested
objects from their own schema, nullable values null). Whether a hint fits is checked with a compiled
validator per sub-schema (cached), so a request parameter that shares a name but not a type with a
response field never makes the answer invalid.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from jsonschema import Draft4Validator

from skillassay.seam.emulator.spec import rewrite_nullable
from skillassay.seam.emulator.store import new_id, now_iso

_MAX_DEPTH = 12  # the document has recursive references; nothing real nests deeper


class SchemaValues:
    def __init__(self, document: dict[str, Any]):
        self._document = document
        self._components = rewrite_nullable(document.get("components", {}))
        self._validators: dict[int, tuple[Any, Draft4Validator]] = {}
        self._lock = threading.Lock()

    # -- schema plumbing ---------------------------------------------------------------------------
    def resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = self._document
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    @staticmethod
    def ref_name(node: Any) -> str | None:
        """``acs_user`` for ``{"$ref": "#/components/schemas/acs_user"}``."""
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            return str(node["$ref"]).rsplit("/", 1)[-1]
        return None

    def object_parts(self, schema: Any) -> tuple[dict[str, Any], list[str]]:
        """(properties, required) of an object schema, merged over its allOf branches."""
        schema = self.resolve(schema)
        props: dict[str, Any] = dict(schema.get("properties", {}))
        required: list[str] = list(schema.get("required", []))
        for branch in schema.get("allOf", []):
            sub_props, sub_required = self.object_parts(branch)
            for name, sub in sub_props.items():
                props.setdefault(name, sub)
            required += [r for r in sub_required if r not in required]
        return props, required

    def fits(self, value: Any, schema: Any) -> bool:
        key = id(schema)
        found = self._validators.get(key)
        if found is None or found[0] is not schema:
            compiled = rewrite_nullable(self.resolve(schema))
            if isinstance(compiled, dict):
                compiled = {**compiled, "components": self._components}
            # the schema is kept with its validator: its id is never reused for another while cached
            found = (schema, Draft4Validator(compiled))
            with self._lock:
                self._validators[key] = found
        return bool(found[1].is_valid(value))

    # -- values ------------------------------------------------------------------------------------
    def build(self, schema: Any, hints: dict[str, Any] | None = None, name: str = "", depth: int = 0) -> Any:
        hints = hints or {}
        schema = self.resolve(schema)
        if not isinstance(schema, dict) or depth > _MAX_DEPTH:
            return None
        for combinator in ("oneOf", "anyOf"):
            branches = [b for b in schema.get(combinator, []) if self.resolve(b).get("type") != "null"]
            if branches:
                return self.build(self._pick(branches, hints), hints, name, depth + 1)
        if "allOf" in schema:  # each part built (a oneOf inside one picks its branch), merged
            merged: dict[str, Any] = {}
            own = {k: v for k, v in schema.items() if k != "allOf"}
            for part in [own, *schema["allOf"]]:
                value = self.build(part, hints, name, depth + 1)
                if isinstance(value, dict):
                    for k, v in value.items():
                        merged.setdefault(k, v)
            return merged
        if "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            return values[0] if values else None
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind == "object" or (kind is None and ("properties" in schema or "allOf" in schema)):
            return self._object(schema, hints, depth)
        if schema.get("nullable") is True:
            return None
        if kind == "array":
            item = schema.get("items", {})
            return [self.build(item, hints, name, depth + 1) for _ in range(int(schema.get("minItems", 0)))]
        if kind == "string":
            return self._string(schema, name)
        if kind in ("integer", "number"):
            low = schema.get("minimum", 0)
            return low + 1 if schema.get("exclusiveMinimum") is True else low
        if kind == "boolean":
            return False
        return None

    def _pick(self, branches: list[Any], hints: dict[str, Any]) -> Any:
        """The branch whose constant (enum) properties the hints agree with, else the first whose required
        properties the hints all hold, else the first."""
        for branch in branches:
            props, _ = self.object_parts(branch)
            constants = {
                k: self.resolve(v)["enum"]
                for k, v in props.items()
                if isinstance(self.resolve(v), dict) and "enum" in self.resolve(v)
            }
            named = {k: v for k, v in constants.items() if k in hints}
            if named and all(hints[k] in allowed for k, allowed in named.items()):
                return branch
        for branch in branches:
            _, required = self.object_parts(branch)
            if required and all(r in hints for r in required):
                return branch
        return branches[0]

    def _object(self, schema: dict[str, Any], hints: dict[str, Any], depth: int) -> dict[str, Any]:
        props, required = self.object_parts(schema)
        out: dict[str, Any] = {}
        for prop, sub in props.items():
            if prop in hints:
                value = hints[prop]
                if self.fits(value, sub):
                    out[prop] = value
                    continue
                if isinstance(value, dict):  # a partial object: what fits of it, the rest built
                    out[prop] = self.build(sub, value, prop, depth + 1)
                    continue
            if prop in required:
                out[prop] = self.build(sub, {}, prop, depth + 1)
        return out

    @staticmethod
    def _string(schema: dict[str, Any], name: str) -> str:
        fmt = schema.get("format")
        if fmt == "uuid":
            return new_id()
        if fmt == "date-time":
            return now_iso()
        if fmt == "email":
            return "user@example.com"
        if fmt == "uri":
            return "https://example.com/"
        if fmt == "date":
            return now_iso()[:10]
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        candidates = [name or "value", "1234", "a"]
        for text in candidates:
            if len(text) < low:
                text = text + ("0" if text.isdigit() else "x") * (low - len(text))
            if high is not None:
                text = text[: int(high)]
            if "pattern" not in schema or re.search(schema["pattern"], text):
                return text
        return candidates[0]
