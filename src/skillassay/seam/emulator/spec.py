"""The official Seam OpenAPI document (npm ``@seamapi/types``) as a request validator and parameter oracle.

The document ships inside this package (``data/seam-openapi-<version>.json.gz``: canonical JSON, gzipped),
exported from the pinned npm package by ``scripts/export_seam_openapi.py``; nothing here needs Node.
Validators are compiled once per route (lazily) and reused for every request: a fast one (fastjsonschema:
Python code generated from the schema, a tenth of jsonschema's cost) says whether a request is valid, and
only for one it refuses does jsonschema list the errors (whose messages the answer carries). The fast one
compiles on a background thread, asked for by its route's first request (jsonschema validates meanwhile). A
request the fast one accepts jsonschema would accept too (``tests/services/seam/test_seam_fast_validation.py``
compares them).
"""

from __future__ import annotations

import copy
import gzip
import json
import logging
import os
import queue
import re
import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cache
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft4Validator, FormatChecker

from skillassay.errors import InfrastructureError

log = logging.getLogger(__name__)

SPEC_PACKAGE = "@seamapi/types"
_DATA = resources.files(__package__) / "data"
_SHIPPED = re.compile(r"^seam-openapi-(\d+\.\d+\.\d+)\.json\.gz$")


class SeamSpecError(InfrastructureError):
    """The packaged OpenAPI document is missing or unreadable (a broken installation)."""


def shipped_spec_path() -> Path:
    """The one ``seam-openapi-<version>.json.gz`` in the package data."""
    found = sorted(f.name for f in _DATA.iterdir() if _SHIPPED.match(f.name)) if _DATA.is_dir() else []
    if len(found) != 1:
        raise SeamSpecError(
            f"the skillassay package should hold exactly one Seam OpenAPI document in {_DATA}, found "
            f"{found}: "
            "reinstall skillassay (from a checkout: python scripts/export_seam_openapi.py)"
        )
    return Path(str(_DATA / found[0]))


# The version of @seamapi/types the shipped document was exported from (node/package.json pins the same).
PINNED_TYPES_VERSION = _SHIPPED.match(shipped_spec_path().name).group(1)  # type: ignore[union-attr]


def rewrite_nullable(node: Any) -> Any:
    """OpenAPI 3.0 ``nullable: true`` -> JSON Schema ``type: [T, "null"]`` (what Draft 4 understands)."""
    if isinstance(node, list):
        return [rewrite_nullable(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: rewrite_nullable(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        t = out.get("type")
        if isinstance(t, str):
            out["type"] = [t, "null"]
        elif isinstance(t, list) and "null" not in t:
            out["type"] = [*t, "null"]
        elif t is None:
            # No type: a oneOf/enum/$ref or an unconstrained schema; allow null alongside.
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
            if any(k in out for k in ("oneOf", "anyOf", "allOf", "$ref")):
                out = {"anyOf": [out, {"type": "null"}]}
    return out


def unions_as_any_of(node: Any) -> Any:
    """``oneOf`` -> ``anyOf``: Seam validates requests with zod, whose unions accept a value that matches
    any branch; JSON Schema's ``oneOf`` refuses one that matches two (``acs/credentials/list`` has an empty
    branch beside ``{acs_user_id}``: ``{"acs_user_id": ...}`` matches both)."""
    if isinstance(node, list):
        return [unions_as_any_of(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: unions_as_any_of(v) for k, v in node.items() if k != "oneOf"}
    if "oneOf" in node:
        branches = unions_as_any_of(node["oneOf"])
        if "anyOf" in out:
            out = {
                **{k: v for k, v in out.items() if k != "anyOf"},
                "allOf": [*out.get("allOf", []), {"anyOf": out["anyOf"]}, {"anyOf": branches}],
            }
        else:
            out["anyOf"] = branches
    return out


def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    uuid.UUID(value)
    return len(value) == 36


def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parse_datetime(value)
    return True


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.match(value))


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    return bool(parts.scheme and (parts.netloc or parts.scheme in ("mailto", "urn")))


_CHECKED_FORMATS: dict[str, Callable[[object], bool]] = {
    "uuid": _is_uuid,
    "date-time": _is_datetime,
    "email": _is_email,
    "uri": _is_uri,
}


def _never_raises(check: Callable[[object], bool]) -> Callable[[object], bool]:
    def ok(value: object) -> bool:
        try:
            return check(value)
        except ValueError:
            return False

    return ok


def _formats_in(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("format"), str):
            found.add(node["format"])
        for value in node.values():
            _formats_in(value, found)
    elif isinstance(node, list):
        for value in node:
            _formats_in(value, found)
    return found


def _fast_formats(schema: dict[str, Any]) -> dict[str, Callable[[object], bool]]:
    """The formats jsonschema checks here, as fastjsonschema wants them (a bool, never an exception); any
    other format the schema names passes, as jsonschema's checker (which knows only these) lets it."""
    formats = {name: _never_raises(check) for name, check in _CHECKED_FORMATS.items()}
    for name in _formats_in(schema, set()) - formats.keys():
        formats[name] = _anything
    return formats


def _anything(value: object) -> bool:
    return True


@cache
def _format_checker() -> FormatChecker:
    """The formats requests are checked for (jsonschema imported only when a route is first validated: the
    rubric reads routes and parameters, never validates)."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("uuid", raises=ValueError)(_is_uuid)
    checker.checks("date-time", raises=ValueError)(_is_datetime)
    checker.checks("email")(_is_email)
    checker.checks("uri")(_is_uri)
    return checker


def parse_datetime(value: str) -> datetime:
    """ISO 8601 / RFC 3339 with ``Z`` or an offset; raises ValueError otherwise."""
    v = value.strip()
    if v.endswith(("Z", "z")):
        v = v[:-1] + "+00:00"
    dt = datetime.fromisoformat(v)
    if dt.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone")
    return dt


class RouteSpec:
    """One route: its HTTP methods, its parameter schema (the POST body schema) and a compiled validator."""

    def __init__(self, path: str, operations: dict[str, Any], root: dict[str, Any]):
        self.path = path
        self.methods = frozenset(m.upper() for m in operations)
        self._operations = operations
        self._root = root
        self._lock = threading.Lock()
        self._validator: Draft4Validator | None = None
        self._fast: Callable[[Any], bool] | None = None
        self._fast_compiled = False
        self._properties: dict[str, Any] | None = None
        post = operations.get("post") or next(iter(operations.values()))
        body = post.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if body is None:
            # GET/DELETE-only routes: build the object schema from the query parameters.
            props, required = {}, []
            for op in operations.values():
                for param in op.get("parameters", []):
                    props[param["name"]] = param.get("schema", {})
                    if param.get("required"):
                        required.append(param["name"])
            body = {"type": "object", "properties": props}
            if required:
                body["required"] = sorted(set(required))
        self.raw_schema = body

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = self._root
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    @property
    def validator(self) -> Draft4Validator:
        if self._validator is None:
            with self._lock:
                if self._validator is None:
                    schema = unions_as_any_of(rewrite_nullable(copy.deepcopy(self.raw_schema)))
                    # $refs point into the document; keep components reachable for resolution.
                    schema["components"] = self._root_components()
                    from jsonschema import Draft4Validator

                    Draft4Validator.check_schema({k: v for k, v in schema.items() if k != "components"})
                    self._validator = Draft4Validator(schema, format_checker=_format_checker())
        return self._validator

    @property
    def fast_validator(self) -> Callable[[Any], bool] | None:
        """The schema compiled to Python (whether a value is valid); None for a schema with ``$ref``s (none in
        the document today: jsonschema alone resolves them)."""
        if not self._fast_compiled:
            with self._lock:
                if not self._fast_compiled:
                    self._fast = _compile_fast(self.raw_schema)
                    self._fast_compiled = True
        return self._fast

    def is_valid(self, params: dict[str, Any]) -> bool:
        """Whether the fast validator accepts ``params``; False also when it has none or is not compiled yet
        (then asked for, never waited for: jsonschema decides meanwhile)."""
        if not self._fast_compiled:
            _COMPILER.want(self)
            return False
        fast = self._fast
        return fast is not None and fast(params)

    def _root_components(self) -> dict[str, Any]:
        return _nullable_components(id(self._root), self._root)

    @property
    def properties(self) -> dict[str, Any]:
        """Every top-level parameter the route accepts (merged over allOf/oneOf/anyOf branches)."""
        if self._properties is None:
            self._properties = _collect_properties(self.raw_schema, self._resolve)
        return self._properties

    def validate(self, params: dict[str, Any], limit: int | None = None) -> list[Any]:
        """The validation errors (the first ``limit`` found, when given: a body with 70,000 bad items must not
        cost 70,000 error objects), in path order."""
        if self.is_valid(params):
            return []
        errors = self.validator.iter_errors(params)
        found = list(errors if limit is None else islice(errors, limit))
        return sorted(
            found, key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in e.absolute_path]
        )


def _compile_fast(raw_schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    if '"$ref"' in json.dumps(raw_schema):
        return None
    import fastjsonschema

    schema = unions_as_any_of(rewrite_nullable(copy.deepcopy(raw_schema)))
    schema["$schema"] = "http://json-schema.org/draft-04/schema#"
    # use_default=False: the generated code would otherwise write the schema's defaults into the request
    check = fastjsonschema.compile(
        schema, formats=_fast_formats(schema), use_default=False, detailed_exceptions=False
    )

    def valid(value: Any) -> bool:
        try:
            check(value)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return valid


class _Compiler:
    """Compiles fast validators on one daemon thread, in the order asked: a route's first requests (and an
    emulator's start) never wait for one (about 1 ms a route, 50 ms for push_data), nor pay for it in CPU
    their workspace is charged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: set[RouteSpec] = set()
        self._queue: queue.SimpleQueue[RouteSpec] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def want(self, route: RouteSpec) -> None:
        with self._lock:
            if route in self._asked:
                return
            self._asked.add(route)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="seam-validators", daemon=True)
                self._thread.start()
        self._queue.put(route)

    def _run(self) -> None:
        while True:
            route = self._queue.get()
            try:
                _ = route.fast_validator
            except Exception:  # a schema fastjsonschema cannot compile: jsonschema alone validates the route
                log.exception("no fast validator for %s", route.path)

    def forget_thread(self) -> None:
        """In a forked child: the thread is the parent's; what it had not compiled yet is asked again."""
        self._lock = threading.Lock()
        self._asked = {r for r in self._asked if r._fast_compiled}
        self._queue = queue.SimpleQueue()
        self._thread = None


_COMPILER = _Compiler()
os.register_at_fork(after_in_child=_COMPILER.forget_thread)

_components_cache: dict[int, dict[str, Any]] = {}
_components_lock = threading.Lock()


def _nullable_components(key: int, root: dict[str, Any]) -> dict[str, Any]:
    with _components_lock:
        if key not in _components_cache:
            _components_cache[key] = unions_as_any_of(rewrite_nullable(root.get("components", {})))
        return _components_cache[key]


def _collect_properties(schema: dict[str, Any], resolve) -> dict[str, Any]:
    schema = resolve(schema)
    props: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        props[name] = resolve(sub)
    for key in ("allOf", "oneOf", "anyOf"):
        for branch in schema.get(key, []):
            for name, sub in _collect_properties(branch, resolve).items():
                props.setdefault(name, sub)
    return props


def route_name(route: str) -> str:
    """``customers.push_data``, ``customers.pushData`` or ``/customers/push_data`` as a route path."""
    r = route.strip()
    if "/" not in r:
        r = r.replace(".", "/")
    r = re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), r)
    return "/" + r.strip("/")


class SeamSpec:
    """The pinned OpenAPI document: routes, validators, and what a route accepts."""

    def __init__(self, document: dict[str, Any], version: str):
        self.document = document
        self.version = version
        self.routes: dict[str, RouteSpec] = {
            path: RouteSpec(path, ops, document)
            for path, ops in document.get("paths", {}).items()
            if isinstance(ops, dict)
        }

    def route(self, route: str) -> RouteSpec | None:
        return self.routes.get(route_name(route))

    def _require(self, route: str) -> RouteSpec:
        spec = self.route(route)
        if spec is None:
            raise KeyError(f"the Seam API ({self.version}) has no route {route_name(route)}")
        return spec

    def parameters(self, route: str) -> list[str]:
        return sorted(self._require(route).properties)

    def required_parameters(self, route: str) -> list[str]:
        spec = self._require(route)
        schema = spec._resolve(spec.raw_schema)
        required = set(schema.get("required", []))
        for branch in schema.get("allOf", []):
            required |= set(spec._resolve(branch).get("required", []))
        return sorted(required)

    def unknown_parameters(self, route: str, names: Iterable[str]) -> list[str]:
        """The names the real API does not accept on this route (in the order given)."""
        known = self._require(route).properties
        return [n for n in names if n not in known]

    def accepts(self, route: str, names: Iterable[str] = ()) -> bool:
        """True when the route exists and takes every given parameter name."""
        spec = self.route(route)
        return spec is not None and not self.unknown_parameters(route, names)


@cache
def _load_shipped(path: str) -> SeamSpec:
    try:
        document = json.loads(gzip.decompress(Path(path).read_bytes()))
    except (OSError, ValueError) as exc:
        raise SeamSpecError(f"cannot read the packaged Seam OpenAPI document {path}: {exc}") from exc
    return SeamSpec(document, PINNED_TYPES_VERSION)


def load_spec() -> SeamSpec:
    """The pinned Seam spec shipped in the package (parsed once per process)."""
    return _load_shipped(str(shipped_spec_path()))
