"""The order of the PHP SDK's (Packagist ``seamapi/seam``) method parameters, for its positional arguments.

Every method of the PHP SDK takes the route's parameters as PHP arguments, by name or by position
(``$seam->access_codes->create($device_id, null, null, "1234")``), in an order its generator derives from
Seam's API definition: the route's request body, its properties in the document's order (an ``allOf``'s
parts and a ``oneOf``'s branches one after the other, each property once), undocumented ones
(``x-undocumented``) left out; then sorted, keeping that order within each rank, as: a ``get`` method's
own id first (``access_code_id`` of ``access_codes/get``, the route's ``x-response-key`` and ``_id``), then
the required parameters (required by the body, by a part of its ``allOf`` or by every branch of a
``oneOf``), then the rest. (Read from the SDK's code generator; on the shipped document this gives the
generated clients' own order for 194 of their 197 methods with parameters, the other three differing only
by parameters newer documents add.)

The order is derived from the OpenAPI document that ships with skillassay and committed as
``data/php_sdk_params.json``, so grading never loads the whole document; ``scripts/export_seam_openapi.py``
rewrites it and a test checks it is the shipped document's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).parent / "data" / "php_sdk_params.json"

_ID_FIRST, _REQUIRED, _OPTIONAL = 0, 1, 2


def _flatten(
    schema: Mapping[str, Any], resolve: Callable[[Mapping[str, Any]], Mapping[str, Any]], required: bool
) -> list[tuple[str, bool]]:
    """(name, required) of a request body's documented properties, in the document's order."""
    schema = resolve(schema)
    out: list[tuple[str, bool]] = []
    named = set(schema.get("required") or []) if required else set()
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, Mapping) and not resolve(prop).get("x-undocumented"):
            out.append((name, name in named))
    for part in schema.get("allOf") or []:
        out.extend(_flatten(part, resolve, required))
    for key in ("oneOf", "anyOf"):
        branches = [_flatten(b, resolve, required) for b in schema.get(key) or []]
        # required when every branch requires it (each branch's own required ones are not, alone)
        always = set.intersection(*({n for n, r in b if r} for b in branches)) if branches else set()
        out.extend((name, name in always) for b in branches for name, _r in b)
    return out


def _order(route: str, operation: Mapping[str, Any], resolve) -> list[str]:
    body = ((operation.get("requestBody") or {}).get("content") or {}).get("application/json") or {}
    seen: dict[str, bool] = {}
    for name, required in _flatten(body.get("schema") or {}, resolve, True):
        seen[name] = seen.get(name, False) or required
    own_id = f"{operation.get('x-response-key')}_id" if route.rsplit("/", 1)[-1] == "get" else None

    def rank(name: str) -> int:
        return _ID_FIRST if name == own_id else _REQUIRED if seen[name] else _OPTIONAL

    return sorted(seen, key=rank)  # sorted() is stable: the document's order within a rank


def derive(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """Route path -> the PHP SDK method's parameter names in order, from the OpenAPI document."""
    components = document.get("components") or {}

    def resolve(node: Mapping[str, Any]) -> Mapping[str, Any]:
        for _ in range(8):
            ref = node.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#/components/"):
                return node
            found: Any = components
            for step in ref.removeprefix("#/components/").split("/"):
                found = found.get(step, {}) if isinstance(found, Mapping) else {}
            node = found if isinstance(found, Mapping) else {}
        return node

    out: dict[str, list[str]] = {}
    for route, operations in sorted((document.get("paths") or {}).items()):
        operation = operations.get("post") or {}
        if operation.get("requestBody"):
            out[route] = _order(route, operation, resolve)
    return out


def render(version: str, params: Mapping[str, list[str]]) -> str:
    """The text of ``DATA_FILE`` for the document of ``@seamapi/types`` ``version``."""
    return json.dumps({"types_version": version, "params": dict(sorted(params.items()))}, indent=1) + "\n"


@functools.cache
def _committed() -> dict[str, list[str]]:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return {k: list(v) for k, v in data["params"].items()}


def parameter_order(method: str) -> list[str]:
    """The PHP SDK method's parameters in order (``access_codes.create`` -> ``["device_id", ...]``); empty
    for a method of no known route."""
    return list(_committed().get("/" + method.replace(".", "/"), []))
