"""Every public route of the spec called once, with parameters built from its request schema: what the
emulator answers where (the coverage test and ``benchmarks/emulator_coverage.py`` read it).

Routes are called in phases (creates, then lists and gets, then other actions and updates, deletes last),
each request filled with ids the earlier answers held (a device id from ``devices/list``, the
``acs_user_id`` an ``acs/users/create`` answered, ...), so a get or an action names a record that exists.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skillassay.seam.emulator.generic import GenericEngine, family_of, public_routes
from skillassay.seam.emulator.schema_values import SchemaValues
from skillassay.seam.emulator.spec import SeamSpec

_PHASES = ("create", "list", "get", "action", "update", "delete")
# a request sender: (path, JSON body) -> (status, body bytes)
Send = Callable[[str, dict[str, Any]], tuple[int, bytes]]


@dataclass(frozen=True)
class RouteAnswer:
    path: str
    handwritten: bool
    status: int
    error_type: str | None
    body: bytes


def _phase(path: str) -> int:
    verb = path.rsplit("/", 1)[-1]
    if verb.startswith(("create", "launch", "get_or_create", "generate")) or "/simulate/create" in path:
        return 0
    if verb == "list" or verb.startswith("list_"):
        return 1
    if verb.startswith("get"):
        return 2
    if verb in ("update", "update_multiple"):
        return 4
    if verb.startswith(("remove", "revoke")):
        return 5
    if path in ("/devices/delete", "/connected_accounts/delete", "/workspaces/reset_sandbox"):
        return 7  # what the others' records belong to goes last
    if verb in ("delete", "deactivate"):
        return 6
    return 3


def _order(path: str, handwritten: bool) -> tuple[int, int, str]:
    """Phase first; the hand-written records (devices, user identities, spaces...) are created first and
    deleted last, as the others point to them; deletes in reverse order, so a family's children go before
    their parent."""
    phase = _phase(path)
    if phase == 0:
        return (phase, 0 if handwritten else 1, path)
    if phase >= 6:
        return (phase, 1 if handwritten else 0, "".join(chr(0x10FFFF - ord(c)) for c in path))
    return (phase, 0, path)


def harvest(body: Any, pool: dict[str, Any], owner: str = "") -> None:
    """The ids of the records an answer holds, by field name (``acs_user_id`` of an ``acs_user`` or of an
    ``acs_users`` item; the ids a record merely points to may be made up), and every ``*_key`` string; the
    first one seen wins."""
    if isinstance(body, dict):
        own = owner.removeprefix("unmanaged_").removesuffix("s") + "_id" if owner else ""
        for name, value in body.items():
            if isinstance(value, str) and value and (name == own or name.endswith("_key")):
                pool.setdefault(name, value)
            elif name.endswith("_ids") and value and isinstance(value, list) and isinstance(value[0], str):
                pool.setdefault(name[:-1], value[0])  # a record's links (a grant's access methods)
            elif isinstance(value, (dict, list)):
                harvest(value, pool, name)
    elif isinstance(body, list):
        for item in body:
            harvest(item, pool, owner)


# Hand-written routes whose request needs more than the schema's first branch says.
_OVERRIDES: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "/events/list": lambda pool: {"since": "2000-01-01T00:00:00.000Z"},
    "/access_grants/create": lambda pool: {
        "user_identity": {"full_name": "Coverage Guest"},
        "device_ids": [pool["device_id"]],
        "requested_access_methods": [{"mode": "code"}],
    },
}


def harvest_fields(body: Any, pool: dict[str, Any]) -> None:
    """Every ``*_id``/``*_key`` string of the records at the top of an answer (for its family's routes)."""
    if not isinstance(body, dict):
        return
    for value in body.values():
        for record in value if isinstance(value, list) else [value]:
            if isinstance(record, dict):
                for name, field in record.items():
                    if isinstance(field, str) and field and name.endswith(("_id", "_key")):
                        pool.setdefault(name, field)


def _harvest(path: str, body: Any, pool: dict[str, Any], own_pool: dict[str, Any]) -> None:
    """An answer's ids: into its resource's pool, and (unless the route is about unmanaged records, whose ids
    the managed routes do not know) into the pool every request draws on."""
    if "/unmanaged/" not in path:
        harvest(body, pool)
    harvest_fields(body, own_pool)


def request_params(
    values: SchemaValues, path: str, schema: Any, pool: Mapping[str, Any], plurals: bool = True
) -> dict[str, Any]:
    """The route's required parameters (and any optional one named like an id in the pool, ``x_ids``
    from ``x_id`` too when ``plurals``)."""
    if path in _OVERRIDES and "device_id" in pool:
        return _OVERRIDES[path](pool)
    hints: dict[str, Any] = dict(pool)
    for name, value in pool.items() if plurals else ():
        hints.setdefault(name + "s", [value])
    built = values.build(schema, hints)
    return built if isinstance(built, dict) else {}


def exercise(spec: SeamSpec, send: Send, handwritten: Mapping[str, Any]) -> list[RouteAnswer]:
    """Call every public route once (see the module's docstring); the answers in calling order."""
    values = SchemaValues(spec.document)
    pool: dict[str, Any] = {}
    status, body = send("/devices/list", {})
    if status == 200:
        harvest(json.loads(body), pool, "devices")
    engine = GenericEngine(spec)  # only to read which resource each route is about
    by_resource: dict[str, dict[str, Any]] = {}

    def resource_pool(path: str) -> dict[str, Any]:
        resource = engine.route(path).resource
        return by_resource.setdefault(resource.kept_in if resource else "", {})

    def ids_for(path: str) -> dict[str, Any]:
        """The ids a request to ``path`` draws on: every managed record's, and for an /unmanaged/ route the
        unmanaged records' (a credential points to its unmanaged user); its own resource's first."""
        ids = dict(pool)
        if "/unmanaged/" in path:
            for name, other in by_resource.items():
                if name.startswith("unmanaged_"):
                    ids.update(other)
        return {**ids, **resource_pool(path)}

    routes = sorted(public_routes(spec), key=lambda p: _order(p, p in handwritten))
    for path in routes:  # a first look at what exists, so no request depends on the order of the lists
        if _phase(path) == 1 and path not in _OVERRIDES:
            params = request_params(values, path, spec.routes[path].raw_schema, ids_for(path), plurals=False)
            for attempt in (params, {}):  # unfiltered too: the filter's ids may be other records'
                status, body = send(path, attempt)
                if status == 200:
                    _harvest(path, json.loads(body), pool, resource_pool(path))
    answers = []
    for path in routes:
        params = request_params(values, path, spec.routes[path].raw_schema, ids_for(path))
        status, body = send(path, params)
        error_type = None
        try:
            parsed = json.loads(body) if body else {}
        except ValueError:
            parsed = {}
        if status == 200:
            _harvest(path, parsed, pool, resource_pool(path))
        elif isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            error_type = parsed["error"].get("type")
        answers.append(RouteAnswer(path, path in handwritten, status, error_type, body))
    return answers


def family(path: str) -> str:
    """The top-level family of a route: ``acs`` for ``/acs/users/create``, ``devices`` for
    ``/devices/simulate/connect``."""
    return path.strip("/").split("/", 1)[0] if family_of(path) != "/" else path


def table(answers: list[RouteAnswer], valid: Callable[[RouteAnswer], bool]) -> list[dict[str, Any]]:
    """Per family: routes, hand-written, generic, answered 200 and schema-valid, 501."""
    rows: dict[str, Counter[str]] = {}
    for answer in answers:
        row = rows.setdefault(family(answer.path), Counter())
        row["routes"] += 1
        row["handwritten" if answer.handwritten else "generic"] += 1
        if answer.status == 501:
            row["not_implemented"] += 1
        elif answer.status == 200 and valid(answer):
            row["valid_200"] += 1
    return [{"family": name, **counts} for name, counts in sorted(rows.items())]
