"""The official Seam OpenAPI document (npm ``@seamapi/types``) as a request validator and parameter oracle.

The package ships the document only as an ES module, so it is turned into JSON once with node and cached
per version. Validators are compiled once per route (lazily) and reused for every request.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import threading
import uuid
import warnings
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft4Validator, FormatChecker

from skillassay.errors import InfrastructureError

PINNED_TYPES_VERSION = "1.977.0"
_OPENAPI_MODULE = "lib/seam/connect/openapi.js"


class SeamSpecError(InfrastructureError):
    """The OpenAPI document could not be found or read."""


def _repo_node_dir() -> Path:
    # src/skillassay/services/seam/spec.py -> repo root is parents[4]
    return Path(__file__).resolve().parents[4] / "node" / "node_modules"


def node_modules_dir() -> Path:
    env = os.environ.get("SKILLASSAY_NODE_DIR")
    if env:
        path = Path(env)
        # Accept either the node/ directory or node/node_modules itself.
        return path / "node_modules" if (path / "node_modules").is_dir() else path
    return _repo_node_dir()


def cache_dir() -> Path:
    env = os.environ.get("SKILLASSAY_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "skillassay"


def _types_package() -> tuple[Path, str]:
    pkg = node_modules_dir() / "@seamapi" / "types"
    manifest = pkg / "package.json"
    if not manifest.is_file():
        raise SeamSpecError(
            f"npm package @seamapi/types not found under {node_modules_dir()}: run `npm ci --prefix node` "
            "(or set SKILLASSAY_NODE_DIR to a node_modules directory that has it)"
        )
    version = json.loads(manifest.read_text())["version"]
    return pkg, version


def _export_openapi_json(pkg: Path, target: Path) -> None:
    module = pkg / _OPENAPI_MODULE
    script = (
        "import(process.argv[1]).then(m => process.stdout.write(JSON.stringify(m.default)))"
        ".catch(e => { console.error(e); process.exit(1) })"
    )
    try:
        out = subprocess.run(
            ["node", "-e", script, module.as_uri()], check=True, capture_output=True, timeout=120
        ).stdout
    except FileNotFoundError as exc:
        raise SeamSpecError(
            "`node` is needed once to export the Seam OpenAPI document; install Node.js"
        ) from exc
    except subprocess.CalledProcessError as exc:
        raise SeamSpecError(
            f"could not export {module} with node: {exc.stderr.decode(errors='replace')[-500:]}; "
            "run `npm ci --prefix node`"
        ) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(out)
    tmp.replace(target)  # atomic: concurrent runs never read half a file


def _rewrite_nullable(node: Any) -> Any:
    """OpenAPI 3.0 ``nullable: true`` -> JSON Schema ``type: [T, "null"]`` (what Draft 4 understands)."""
    if isinstance(node, list):
        return [_rewrite_nullable(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewrite_nullable(v) for k, v in node.items() if k != "nullable"}
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


_format_checker = FormatChecker(formats=())


@_format_checker.checks("uuid", raises=ValueError)
def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    uuid.UUID(value)
    return len(value) == 36


@_format_checker.checks("date-time", raises=ValueError)
def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parse_datetime(value)
    return True


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@_format_checker.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.match(value))


@_format_checker.checks("uri")
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    return bool(parts.scheme and (parts.netloc or parts.scheme in ("mailto", "urn")))


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
        responses = post.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
        self.response_schema = responses.get("schema", {})
        self.response_key = post.get("x-response-key")

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
                    schema = _rewrite_nullable(copy.deepcopy(self.raw_schema))
                    # $refs point into the document; keep components reachable for resolution.
                    schema["components"] = self._root_components()
                    Draft4Validator.check_schema({k: v for k, v in schema.items() if k != "components"})
                    self._validator = Draft4Validator(schema, format_checker=_format_checker)
        return self._validator

    def _root_components(self) -> dict[str, Any]:
        return _nullable_components(id(self._root), self._root)

    @property
    def properties(self) -> dict[str, Any]:
        """Every top-level parameter the route accepts (merged over allOf/oneOf/anyOf branches)."""
        if self._properties is None:
            self._properties = _collect_properties(self.raw_schema, self._resolve)
        return self._properties

    def validate(self, params: dict[str, Any]) -> list[Any]:
        return sorted(self.validator.iter_errors(params), key=lambda e: list(e.absolute_path))


_components_cache: dict[int, dict[str, Any]] = {}
_components_lock = threading.Lock()


def _nullable_components(key: int, root: dict[str, Any]) -> dict[str, Any]:
    with _components_lock:
        if key not in _components_cache:
            _components_cache[key] = _rewrite_nullable(root.get("components", {}))
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


@lru_cache(maxsize=4)
def _load(path: str, version: str) -> SeamSpec:
    return SeamSpec(json.loads(Path(path).read_text()), version)


def openapi_json_path() -> tuple[Path, str]:
    """The cached JSON export of the installed @seamapi/types (exported with node on first use)."""
    pkg, version = _types_package()
    target = cache_dir() / f"seam-openapi-{version}.json"
    if not target.is_file():
        _export_openapi_json(pkg, target)
    return target, version


def load_spec() -> SeamSpec:
    """The Seam spec from the installed npm ``@seamapi/types`` (cached per process and on disk)."""
    path, version = openapi_json_path()
    if version != PINNED_TYPES_VERSION:
        warnings.warn(
            f"@seamapi/types {version} is installed but skillassay pins {PINNED_TYPES_VERSION}; "
            "results record the installed version (run `npm ci --prefix node` for the pinned one)",
            stacklevel=2,
        )
    return _load(str(path), version)
