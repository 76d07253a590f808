"""The generic engine: every public Seam route nobody hand-wrote answers from the OpenAPI document, with
state.

A route is read from the spec once (``GenericRoute``, cached): its shape from its path (``/X/create``,
``/X/list`` and ``/X/list_*``, ``/X/get``, ``/X/update``, ``/X/delete``, any other verb an action), its
resource from the response's top-level key (the component a ``$ref`` names, e.g. ``acs_user``; for a route
answering only ``ok`` or an action attempt, the resource of a sibling route in the same family), and the
resource's id field (``<resource>_id``). Records are built from the resource's schema (``schema_values``),
filled from the request's parameters where names and types match, and kept per workspace in a store of
their own (``GenericState``), apart from the hand-written Workspace records; a look-up by id also finds the
hand-written records of that resource (a device, a user identity, an ACS system...), which updates change
only in place, field by field. Seeded records (what no route creates: encoders, bridges...) point at the
hand-written ones (an encoder belongs to the families' ACS system). Routes the spec says answer an
``action_attempt`` make one that settles (the engine's own machinery); creates, updates and deletes emit
the spec's event of that resource when it has one; a missing record is ``<resource>_not_found`` (404).

Hand-written handlers always win: ``RouteTable`` looks the hand-written table up first, on every request.
Every route the generic engine answers is **approximate** (``approximate_routes``): the harness must not
score an app's failure on such a route as the agent's failure without looking (issue 27, item 3).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from skillassay.seam.emulator.automations import Engine
from skillassay.seam.emulator.errors import not_found
from skillassay.seam.emulator.families import routes as _family_routes  # noqa: F401 - registers them in HANDLERS
from skillassay.seam.emulator.handlers import HANDLERS, Ctx, Handler, _page
from skillassay.seam.emulator.schema_values import SchemaValues
from skillassay.seam.emulator.spec import SeamSpec
from skillassay.seam.emulator.store import Workspace, new_id, now_iso, public

# The public API: the spec's routes without Seam's console (/seam/*) and partner (/unstable_partner/*) ones.
PRIVATE_PREFIXES = ("/seam/", "/unstable_partner/")

# Resource -> the Workspace collection that holds hand-written records of it.
HANDWRITTEN_COLLECTIONS = {
    "device": "devices",
    "connected_account": "connected_accounts",
    "access_code": "access_codes",
    "user_identity": "user_identities",
    "access_grant": "access_grants",
    "access_method": "access_methods",
    "space": "spaces",
    "webhook": "webhooks",
    # the access control systems the families write (families/acs.py, seeded by families/acs_seed.py)
    "acs_system": "acs_systems",
    "acs_entrance": "acs_entrances",
    "acs_access_group": "acs_access_groups",
    "acs_user": "acs_users",
    "acs_credential": "acs_credentials",
}

# The event a change emits, by shape (when the spec has ``<resource>.<suffix>``), first match wins.
_EVENT_SUFFIXES = {
    "create": ("created", "added"),
    "delete": ("deleted", "removed"),
    "deactivate": ("deactivated",),
    "update": ("changed",),
}
_CREATE_VERBS = ("create", "launch", "get_or_create", "generate_instant_key")
_META_KEYS = ("ok", "pagination", "action_attempt")
# what no request changes on a record, whatever it sends (the record's workspace, its birth)
_NEVER_SET = frozenset({"workspace_id", "created_at"})


def public_routes(spec: SeamSpec) -> list[str]:
    return sorted(p for p in spec.routes if not p.startswith(PRIVATE_PREFIXES))


def approximate_routes(spec: SeamSpec, handlers: Mapping[str, Handler] | None = None) -> frozenset[str]:
    """The public routes the generic engine answers (no hand-written handler): their answers are the spec's
    shape with plausible state, not Seam's real semantics."""
    written = HANDLERS if handlers is None else handlers
    return frozenset(p for p in public_routes(spec) if p not in written)


def family_of(path: str) -> str:
    """``/acs/users`` for ``/acs/users/create``: the path without its verb."""
    return path.rsplit("/", 1)[0] or "/"


def _shape(verb: str) -> str:
    if verb == "list" or verb.startswith("list_"):
        return "list"
    if verb in ("get", "update", "delete", "deactivate"):
        return verb
    if verb.startswith(_CREATE_VERBS):
        return "create"
    return "action"


@dataclass(frozen=True)
class Resource:
    name: str  # the component's name: acs_user, device, noise_threshold
    schema: Any  # the component's schema (unresolved node)
    id_field: str | None
    # where its records are kept: the name, but ``unmanaged_<name>`` for the /unmanaged/ routes whose answers
    # reuse the managed component (user_identities/unmanaged/*): never the managed, hand-written records
    store: str = ""

    @property
    def kept_in(self) -> str:
        return self.store or self.name


@dataclass(frozen=True)
class GenericRoute:
    path: str
    shape: str  # create | list | get | update | delete | deactivate | action
    key: str | None  # the response's top-level resource key (acs_user, acs_users), None when only ok
    resource: Resource | None  # what the route acts on
    response: Any  # the 200 schema, resolved; None when the route answers no body
    action_type: str | None  # the action attempt's type, when the response has one


class GenericState:
    """Generic records, per workspace: ``records(ws)[resource][id] -> record``. Read and changed under
    ``ws.lock`` (handlers run under it)."""

    def __init__(self) -> None:
        self._by_ws: weakref.WeakKeyDictionary[Workspace, dict[str, dict[str, dict]]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def records(self, ws: Workspace) -> dict[str, dict[str, dict]]:
        found = self._by_ws.get(ws)
        if found is None:
            with self._lock:
                found = self._by_ws.setdefault(ws, {})
        return found

    def seeded(self, ws: Workspace) -> bool:
        """False the first time it is asked for a workspace (the caller seeds it), True after."""
        records = self.records(ws)
        if "_seeded" in records:
            return True
        records["_seeded"] = {}
        return False

    def collection(self, ws: Workspace, resource: str) -> dict[str, dict]:
        return self.records(ws).setdefault(resource, {})


class GenericEngine:
    """Answers every public route of the spec from its schemas (see the module's docstring)."""

    def __init__(self, spec: SeamSpec):
        self.spec = spec
        self.values = SchemaValues(spec.document)
        self.state = GenericState()
        self._routes: dict[str, GenericRoute] = {}
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()

    # -- reading the spec --------------------------------------------------------------------------
    def _operation(self, path: str) -> dict[str, Any]:
        ops = self.spec.document["paths"][path]
        return dict(ops.get("post") or next(iter(ops.values())))

    def _response_schema(self, path: str) -> Any:
        response = self._operation(path).get("responses", {}).get("200", {})
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        return self.values.resolve(schema) if schema is not None else None

    def _key(self, path: str) -> str | None:
        op = self._operation(path)
        schema = self._response_schema(path)
        if schema is None:
            return None
        props, _ = self.values.object_parts(schema)
        key = op.get("x-response-key")
        if key and key in props and key != "action_attempt":
            return str(key)
        candidates = [p for p in props if p not in _META_KEYS]
        return candidates[0] if candidates else None

    def _resource_of_key(self, path: str, key: str) -> Resource:
        props, _ = self.values.object_parts(self._response_schema(path))
        node = props[key]
        resolved = self.values.resolve(node)
        if resolved.get("type") == "array":
            node = resolved.get("items", {})
        name = self.values.ref_name(node) or _singular(key)
        item_props, item_required = self.values.object_parts(node)
        id_field: str | None = f"{name.removeprefix('unmanaged_')}_id"
        if id_field not in item_props:
            id_field = next(
                (r for r in item_required if r.endswith("_id") and r != "workspace_id"),
                None,
            )
        unmanaged = "/unmanaged/" in path and not name.startswith("unmanaged_")
        return Resource(
            name=name, schema=node, id_field=id_field, store=f"unmanaged_{name}" if unmanaged else ""
        )

    def _family_resource(self, path: str) -> Resource | None:
        """The resource of the route's siblings (get first, then list, then create)."""
        family = family_of(path)
        for verb in ("get", "list", "create"):
            sibling = f"{family}/{verb}"
            if sibling in self.spec.routes and sibling != path:
                key = self._key(sibling)
                if key is not None:
                    return self._resource_of_key(sibling, key)
        return None

    def route(self, path: str) -> GenericRoute:
        found = self._routes.get(path)
        if found is not None:
            return found
        key = self._key(path)
        resource = self._resource_of_key(path, key) if key is not None else None
        family = self._family_resource(path)
        shape = _shape(path.rsplit("/", 1)[-1])
        if shape in ("update", "delete", "deactivate", "action") and family is not None:
            resource = family  # the thing acted on, whatever the answer carries
        elif resource is None:
            resource = family
        response = self._response_schema(path)
        action_type = None
        if response is not None and "action_attempt" in self.values.object_parts(response)[0]:
            action_type = self._operation(path).get("x-action-attempt-type")
        generic = GenericRoute(path, shape, key, resource, response, action_type)
        with self._lock:
            self._routes[path] = generic
        return generic

    # -- dispatch ----------------------------------------------------------------------------------
    def handler(self, path: str) -> Handler | None:
        """The generic handler of a public route (None for a route outside the public API)."""
        found = self._handlers.get(path)
        if found is not None:
            return found
        if path not in self.spec.routes or path.startswith(PRIVATE_PREFIXES):
            return None

        def handle(ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
            return self.answer(self.route(path), ctx, params)

        with self._lock:
            self._handlers[path] = handle
        return handle

    def answer(self, route: GenericRoute, ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
        if route.response is None:
            return {}
        if route.shape != "list":
            self._check_references(route, ctx.ws, params)
        if route.shape == "create" and route.key is not None:
            return self._create(route, ctx, params)
        if route.shape == "list":
            return self._list(route, ctx, params)
        if route.shape == "get":
            return self._respond(route, ctx, primary=self._find(route, ctx.ws, params))
        if route.shape in ("delete", "deactivate"):
            return self._delete(route, ctx, params)
        return self._act(route, ctx, params)

    def _check_references(self, route: GenericRoute, ws: Workspace, params: dict[str, Any]) -> None:
        """A hand-written record a create or an action names (``device_id``, ``user_identity_id``, ...) must
        exist, as in Seam: else ``<resource>_not_found``. The route's own id is looked up by the action."""
        own = route.resource.id_field if route.resource else None
        for resource, attribute in HANDWRITTEN_COLLECTIONS.items():
            field = f"{resource}_id"
            wanted = params.get(field)
            if field == own or not isinstance(wanted, str) or wanted in getattr(ws, attribute):
                continue
            if any(wanted in records for records in self.state.records(ws).values()):
                continue  # a generic record of the same kind (a sandbox phone is a device)
            raise not_found(resource, f"{_label(resource)} not found: {wanted}")

    # -- seeds -------------------------------------------------------------------------------------
    @cached_property
    def seeded_resources(self) -> list[Resource]:
        """Resources no route creates (ACS systems, entrances, encoders, bridges, unmanaged devices...): a
        sandbox has them already, so each workspace starts with one of each (and its own workspace)."""
        by_name: dict[str, Resource] = {}
        created: set[str] = set()
        for path in public_routes(self.spec):
            if path in HANDLERS:
                continue
            generic = self.route(path)
            if generic.resource is None or generic.resource.kept_in in HANDWRITTEN_COLLECTIONS:
                continue
            if generic.shape in ("get", "list") and generic.key is not None:
                resource = self._resource_of_key(path, generic.key)
                by_name.setdefault(resource.kept_in, resource)
            elif generic.shape == "create" and generic.key is not None:
                created.add(self._resource_of_key(path, generic.key).kept_in)
        return [r for name, r in sorted(by_name.items()) if name not in created or name == "workspace"]

    def _seed(self, ws: Workspace) -> None:
        """One record of each seeded resource, pointing at the workspace's hand-written records: its first
        device (and that device's account), and for what belongs to an access control system (an encoder, a
        credential pool) the hand-written ACS system and its account."""
        common: dict[str, Any] = {"workspace_id": ws.workspace_id}
        device = next(iter(ws.devices.values()), None)
        if device is not None:
            common.update(device_id=device["device_id"], connected_account_id=device["connected_account_id"])
        system = next(iter(ws.acs_systems.values()), None)
        of_system = (
            {"acs_system_id": system["acs_system_id"], "connected_account_id": system["connected_account_id"]}
            if system is not None
            else {}
        )
        ids = {r.id_field: new_id() for r in self.seeded_resources if r.id_field and r.id_field not in common}
        for resource in self.seeded_resources:
            owner = of_system if "acs_system_id" in self.values.object_parts(resource.schema)[0] else {}
            hints = {
                **self._hints(ws, {}),
                **ids,
                **common,
                **owner,
                "name": f"Sandbox {_label(resource.name)}",
            }
            if resource.name == "workspace":
                hints.update(name=ws.name, company_name=ws.name, is_sandbox=True)
            elif resource.id_field:
                hints[resource.id_field] = ids.get(resource.id_field) or new_id()
            record = self.values.build(resource.schema, hints)
            if isinstance(record, dict):
                record_id = record.get(resource.id_field or "") or new_id()
                self.state.collection(ws, resource.kept_in)[record_id] = record

    # -- records -----------------------------------------------------------------------------------
    def _collections(self, ws: Workspace, resource: Resource) -> list[dict[str, dict]]:
        """Where records of ``resource`` live: the generic store, then the hand-written one."""
        found = [self._store(ws, resource.kept_in)]
        attribute = HANDWRITTEN_COLLECTIONS.get(resource.kept_in)
        if attribute is not None:
            found.append(getattr(ws, attribute))
        return found

    def _find(self, route: GenericRoute, ws: Workspace, params: dict[str, Any]) -> dict:
        resource = route.resource
        if resource is None:
            raise not_found("resource")
        if resource.id_field and params.get(resource.id_field):
            wanted = params[resource.id_field]
            for collection in self._collections(ws, resource):
                if wanted in collection:
                    return collection[wanted]
            raise not_found(resource.name, f"{_label(resource.name)} not found: {wanted}")
        matching = self._matching(self._all(ws, resource), params)
        if not matching:
            raise not_found(resource.name)
        return matching[0]

    def _store(self, ws: Workspace, resource: str) -> dict[str, dict]:
        """The generic records of one resource in a workspace (seeded on first use)."""
        if not self.state.seeded(ws):
            self._seed(ws)
        return self.state.collection(ws, resource)

    def _all(self, ws: Workspace, resource: Resource) -> Iterator[dict]:
        for collection in self._collections(ws, resource):
            yield from collection.values()

    @staticmethod
    def _matching(records: Iterator[dict], params: dict[str, Any]) -> list[dict]:
        """Records agreeing with every parameter that names one of their fields (``x`` equal, ``x_ids``
        holding ``x_id``)."""
        out = []
        for record in records:
            ok = True
            for name, value in params.items():
                if name in record and not isinstance(value, (dict, list)):
                    ok = record[name] == value
                elif name.endswith("_ids") and name[:-1] in record and isinstance(value, list):
                    ok = record[name[:-1]] in value
                if not ok:
                    break
            if ok:
                out.append(record)
        return out

    def _hints(self, ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
        ts = now_iso()
        return {"created_at": ts, "updated_at": ts, **params, "workspace_id": ws.workspace_id}

    def _create(self, route: GenericRoute, ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
        resource = self._resource_of_key(route.path, route.key or "")
        hints = self._hints(ctx.ws, params)
        if resource.id_field:
            hints[resource.id_field] = new_id()
        record = self.values.build(resource.schema, hints)
        if not isinstance(record, dict):
            return self._respond(route, ctx, primary=None)
        store_id = record.get(resource.id_field or "") or new_id()
        self._store(ctx.ws, resource.kept_in)[store_id] = record
        self._event(ctx, resource.name, "create", record)
        attempt = self._attempt(route, ctx, record)
        return self._respond(route, ctx, primary=record, items=[record], attempt=attempt)

    def _list(self, route: GenericRoute, ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
        resource = self._resource_of_key(route.path, route.key) if route.key else None
        if resource is None:
            return self._respond(route, ctx, items=[])
        collections = [self._store(ctx.ws, resource.kept_in)]
        attribute = HANDWRITTEN_COLLECTIONS.get(resource.kept_in)
        # hand-written records are listed only by their own family's routes (/devices/..., not
        # /thermostats/list: the seeded locks are no thermostats)
        if attribute is not None and route.path.startswith(_family_prefix(attribute)):
            collections.append(getattr(ctx.ws, attribute))
        records = self._matching((r for c in collections for r in c.values()), params)
        items = [public(r) for r in records]
        page = None
        if "pagination" in self.values.object_parts(route.response)[0]:
            items, page = _page(ctx, items, params)
        else:
            items = items[: int(params.get("limit") or len(items) or 1)]
        return self._respond(route, ctx, items=items, page=page)

    def _delete(self, route: GenericRoute, ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
        record = self._find(route, ctx.ws, params)
        resource = route.resource
        assert resource is not None  # _find raised otherwise
        for collection in self._collections(ctx.ws, resource):
            for record_id, candidate in list(collection.items()):
                if candidate is record:
                    del collection[record_id]
                    if collection is not self.state.collection(ctx.ws, resource.kept_in):
                        _cascade(ctx.ws, resource.name, record_id)
        self._event(ctx, resource.name, route.shape, record)
        attempt = self._attempt(route, ctx, record)
        return self._respond(route, ctx, attempt=attempt)

    def _act(self, route: GenericRoute, ctx: Ctx, params: dict[str, Any]) -> dict[str, Any]:
        """update and every other action: on the record the parameters name, when they name one."""
        resource = route.resource
        record: dict | None = None
        if resource is not None and resource.id_field and params.get(resource.id_field):
            record = self._find(route, ctx.ws, params)
            declared = self.spec.routes[route.path].properties
            changed = self._apply(resource, record, {k: v for k, v in params.items() if k in declared})
            if route.shape == "update" and changed:
                self._event(ctx, resource.name, "update", record)
        attempt = self._attempt(route, ctx, record)
        return self._respond(route, ctx, primary=record, attempt=attempt)

    def _apply(self, resource: Resource, record: dict, params: dict[str, Any]) -> bool:
        """Copy the parameters that name a field of the record (and fit its schema) into it."""
        props, _ = self.values.object_parts(resource.schema)
        changed = False
        for name, value in params.items():
            if name in _NEVER_SET or name == resource.id_field or name.startswith("_") or name not in props:
                continue
            current = record.get(name)
            if isinstance(current, dict) and isinstance(value, dict):
                merged = {**current, **value}
                if self.values.fits(merged, props[name]):
                    record[name], changed = merged, True
            elif self.values.fits(value, props[name]) and current != value:
                record[name], changed = value, True
        return changed

    # -- answers, attempts, events -------------------------------------------------------------------
    def _respond(
        self,
        route: GenericRoute,
        ctx: Ctx,
        *,
        primary: dict | None = None,
        items: list[dict] | None = None,
        attempt: dict | None = None,
        page: dict | None = None,
    ) -> dict[str, Any]:
        if route.response is None:
            return {}
        props, required = self.values.object_parts(route.response)
        key_schema = props.get(route.key or "")
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if name == "ok":
                continue
            resolved = self.values.resolve(sub)
            is_list = resolved.get("type") == "array"
            if name == "action_attempt" and attempt is not None:
                out[name] = dict(attempt)
            elif name == "pagination":
                fitting = page is not None and self.values.fits(page, sub)
                out[name] = page if fitting else self.values.build(sub)
            elif name == route.key or (is_list and items is not None and _same_items(sub, key_schema)):
                value: Any = (
                    [public(r) for r in (items or [])] if is_list else (public(primary) if primary else None)
                )
                out[name] = value if value is not None else self.values.build(sub, self._hints(ctx.ws, {}))
            elif name in required:
                out[name] = self.values.build(sub, self._hints(ctx.ws, {}), name)
        return out

    def _attempt(self, route: GenericRoute, ctx: Ctx, record: dict | None) -> dict | None:
        action_type = route.action_type
        if action_type is None:
            return None
        engine: Engine = ctx.engine
        attempt = engine.action_attempt(ctx.ws, action_type)
        attempt_id = attempt["action_attempt_id"]
        result = self._attempt_result(action_type, record or {})
        succeeded = f"action_attempt.{action_type.lower()}.succeeded"

        def settle(ws: Workspace) -> None:
            found = ws.action_attempts.get(attempt_id)
            if found is not None and found["status"] == "pending":
                found.update(status="success", result=result, error=None)
                self._event_of_type(engine, ws, succeeded, dict(found))

        engine.later(ctx.ws, settle)
        return attempt

    def _attempt_result(self, action_type: str, record: dict) -> Any:
        branch = self._attempt_branches.get((action_type, "success"))
        if branch is None:
            return {}
        props, _ = self.values.object_parts(branch)
        return self.values.build(props.get("result", {}), dict(record), "result")

    @cached_property
    def _attempt_branches(self) -> dict[tuple[str, str], Any]:
        schema = self.values.resolve(self.spec.document["components"]["schemas"]["action_attempt"])
        out = {}
        for branch in schema.get("oneOf", []):
            props, _ = self.values.object_parts(branch)
            for action_type in self.values.resolve(props["action_type"]).get("enum", []):
                for status in self.values.resolve(props["status"]).get("enum", []):
                    out[(action_type, status)] = branch
        return out

    @cached_property
    def _event_branches(self) -> dict[str, Any]:
        schema = self.values.resolve(self.spec.document["components"]["schemas"]["event"])
        out = {}
        for branch in schema.get("oneOf", []):
            props, _ = self.values.object_parts(branch)
            for event_type in self.values.resolve(props["event_type"]).get("enum", []):
                out[event_type] = branch
        return out

    def _event(self, ctx: Ctx, resource: str, shape: str, record: dict) -> None:
        for suffix in _EVENT_SUFFIXES.get(shape, ()):
            if f"{resource}.{suffix}" in self._event_branches:
                self._event_of_type(ctx.engine, ctx.ws, f"{resource}.{suffix}", record)
                return

    def _event_of_type(self, engine: Engine, ws: Workspace, event_type: str, record: dict) -> None:
        branch = self._event_branches.get(event_type)
        if branch is None:
            return
        hints = {k: v for k, v in record.items() if not k.startswith("_")}
        hints.update(workspace_id=ws.workspace_id, event_type=event_type)
        fields = self.values.build(branch, hints)
        for own in ("event_id", "event_type", "workspace_id", "created_at", "occurred_at"):
            fields.pop(own, None)
        engine.emit(ws, event_type, **fields)


def _cascade(ws: Workspace, resource: str, record_id: str) -> None:
    """A hand-written record is gone: so are the hand-written records that belong to it (the devices of a
    connected account, the codes of a device), and its id leaves every list of ids that held it (a space's
    devices), so no hand-written handler meets a dangling id."""
    owned: list[tuple[str, str]] = []
    for name, attribute in HANDWRITTEN_COLLECTIONS.items():
        collection: dict[str, dict] = getattr(ws, attribute)
        for other_id, other in list(collection.items()):
            if other.get(f"{resource}_id") == record_id:
                del collection[other_id]
                owned.append((name, other_id))
                continue
            for field in (f"{resource}_ids", f"_{resource}_ids"):
                ids = other.get(field)
                if isinstance(ids, list) and record_id in ids:
                    ids[:] = [i for i in ids if i != record_id]
    for name, other_id in owned:
        _cascade(ws, name, other_id)


def _family_prefix(attribute: str) -> str:
    """The routes of a hand-written collection: ``/devices/`` for ``devices``, ``/acs/systems/`` for
    ``acs_systems``."""
    family = f"acs/{attribute.removeprefix('acs_')}" if attribute.startswith("acs_") else attribute
    return f"/{family}/"


def _singular(key: str) -> str:
    """``user_identities`` -> ``user_identity``, ``acs_users`` -> ``acs_user``."""
    if key.endswith("ies"):
        return key[:-3] + "y"
    return key.removesuffix("s")


def _same_items(a: Any, b: Any) -> bool:
    """Two array schemas of the same item component (``thermostats`` and ``devices`` in one answer)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    return bool(a.get("items") and a.get("items") == b.get("items"))


def _label(resource: str) -> str:
    text = resource.replace("_", " ")
    return text[0].upper() + text[1:]


class RouteTable(Mapping[str, Handler]):
    """The handlers the app dispatches to: the hand-written table first (looked up live, so a handler
    registered later still wins), then the generic engine for the rest of the public API."""

    def __init__(self, handwritten: Mapping[str, Handler], generic: GenericEngine):
        self.handwritten = handwritten
        self.generic = generic

    def __getitem__(self, path: str) -> Handler:
        found = self.handwritten.get(path)
        if found is None:
            found = self.generic.handler(path)
        if found is None:
            raise KeyError(path)
        return found

    def get(self, path: str, default: Any = None) -> Any:  # the app's per-request look-up
        found = self.handwritten.get(path)
        if found is not None:
            return found
        found = self.generic.handler(path)
        return default if found is None else found

    def __iter__(self) -> Iterator[str]:
        seen = set(self.handwritten)
        yield from self.handwritten
        for path in public_routes(self.generic.spec):
            if path not in seen:
                yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def is_approximate(self, path: str) -> bool:
        return path not in self.handwritten and self.generic.handler(path) is not None
