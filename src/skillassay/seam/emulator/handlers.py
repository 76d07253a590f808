"""Route handlers: one function per Seam route, taking validated parameters and answering the spec's shape.

Handlers run with the workspace's lock held and return the JSON body (``ok: true`` is added by the app).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from skillassay.seam.emulator.automations import Engine, norm_time
from skillassay.seam.emulator.errors import SeamApiError, invalid_input, not_found
from skillassay.seam.emulator.seed import is_lock_with_codes
from skillassay.seam.emulator.spec import parse_datetime
from skillassay.seam.emulator.store import Workspace, new_id, now_iso, public
from skillassay.seam.emulator.webhooks import new_secret


@dataclass
class Ctx:
    ws: Workspace
    engine: Engine
    base_url: str
    path: str


Handler = Callable[[Ctx, dict[str, Any]], dict[str, Any]]
HANDLERS: dict[str, Handler] = {}


def route(path: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[path] = fn
        return fn

    return register


# -- helpers ---------------------------------------------------------------------------------------
def _page(ctx: Ctx, items: list[dict], params: dict, default_limit: int = 500) -> tuple[list[dict], dict]:
    limit = int(params.get("limit") or default_limit)
    offset = 0
    cursor = params.get("page_cursor")
    if cursor:
        try:
            offset = int(base64.urlsafe_b64decode(cursor.encode()).decode().removeprefix("offset:"))
        except ValueError as exc:
            raise invalid_input(
                "Invalid page_cursor", {"_errors": [], "page_cursor": {"_errors": ["Invalid"]}}
            ) from exc
    page = items[offset : offset + limit]
    has_next = offset + limit < len(items)
    next_cursor = base64.urlsafe_b64encode(f"offset:{offset + limit}".encode()).decode() if has_next else None
    return page, {
        "next_page_cursor": next_cursor,
        "has_next_page": has_next,
        "next_page_url": f"{ctx.base_url}{ctx.path}?page_cursor={next_cursor}" if has_next else None,
    }


def _out(records: Iterable[dict]) -> list[dict]:
    # Shallow copies are enough: the app serialises the answer before it releases the workspace lock.
    return [public(r) for r in records]


def _device(ws: Workspace, device_id: str) -> dict:
    device = ws.devices.get(device_id)
    if device is None:
        raise not_found("device", f"Device not found: {device_id}")
    return device


def _space(ws: Workspace, params: dict) -> dict:
    space = None
    if params.get("space_id"):
        space = ws.spaces.get(params["space_id"])
    elif params.get("space_key"):
        space = ws.space_by_key(params["space_key"])
    if space is None:
        raise not_found("space")
    return space


def _grant(ws: Workspace, params: dict) -> dict:
    grant = None
    if params.get("access_grant_id"):
        grant = ws.access_grants.get(params["access_grant_id"])
    elif params.get("access_grant_key"):
        grant = ws.grant_by_key(params["access_grant_key"])
    if grant is None:
        raise not_found("access_grant")
    return grant


def _user_identity(ws: Workspace, params: dict) -> dict:
    ui = None
    if params.get("user_identity_id"):
        ui = ws.user_identities.get(params["user_identity_id"])
    elif params.get("user_identity_key"):
        ui = ws.user_identity_by_key(params["user_identity_key"])
    if ui is None:
        raise not_found("user_identity")
    return ui


def _check_times(starts_at: str | None, ends_at: str | None) -> None:
    if starts_at and ends_at and parse_datetime(starts_at) >= parse_datetime(ends_at):
        raise invalid_input(
            "ends_at must be later than starts_at",
            {"_errors": [], "ends_at": {"_errors": ["ends_at must be later than starts_at"]}},
        )


def _times(params: dict) -> tuple[str | None, str | None]:
    try:
        starts_at, ends_at = norm_time(params.get("starts_at")), norm_time(params.get("ends_at"))
    except ValueError as exc:
        raise invalid_input(f"Invalid date-time: {exc}") from None
    _check_times(starts_at, ends_at)
    return starts_at, ends_at


# -- workspace, connected accounts, devices --------------------------------------------------------
@route("/workspaces/get")
def workspaces_get(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    return {
        "workspace": {
            "workspace_id": ws.workspace_id,
            "name": ws.name,
            "company_name": ws.name,
            "is_sandbox": True,
            "connect_partner_name": None,
            "is_suspended": False,
            "is_publishable_key_auth_enabled": False,
            "connect_webview_customization": {},
            "organization_id": None,
        }
    }


@route("/connected_accounts/list")
def connected_accounts_list(ctx: Ctx, params: dict) -> dict:
    items, pagination = _page(ctx, _out(ctx.ws.connected_accounts.values()), params)
    return {"connected_accounts": items, "pagination": pagination}


@route("/connected_accounts/get")
def connected_accounts_get(ctx: Ctx, params: dict) -> dict:
    account = ctx.ws.connected_accounts.get(params.get("connected_account_id") or "")
    if account is None and params.get("email"):
        account = next(
            (
                a
                for a in ctx.ws.connected_accounts.values()
                if a["user_identifier"].get("email") == params["email"]
            ),
            None,
        )
    if account is None:
        raise not_found("connected_account")
    return {"connected_account": public(account)}


@route("/devices/list")
def devices_list(ctx: Ctx, params: dict) -> dict:
    devices = list(ctx.ws.devices.values())
    if params.get("device_ids") is not None:
        devices = [d for d in devices if d["device_id"] in params["device_ids"]]
    types = list(params.get("device_types") or []) + (
        [params["device_type"]] if params.get("device_type") else []
    )
    if types:
        devices = [d for d in devices if d["device_type"] in types]
    accounts = list(params.get("connected_account_ids") or []) + (
        [params["connected_account_id"]] if params.get("connected_account_id") else []
    )
    if accounts:
        devices = [d for d in devices if d["connected_account_id"] in accounts]
    if params.get("space_id"):
        devices = [d for d in devices if params["space_id"] in d["space_ids"]]
    if params.get("manufacturer"):
        devices = [d for d in devices if d["properties"].get("manufacturer") == params["manufacturer"]]
    if params.get("search"):
        needle = params["search"].lower()
        devices = [d for d in devices if needle in d["display_name"].lower() or needle in d["device_id"]]
    for flag in params.get("include_if") or []:
        devices = [d for d in devices if d.get(flag)]
    for flag in params.get("exclude_if") or []:
        devices = [d for d in devices if not d.get(flag)]
    items, pagination = _page(ctx, _out(devices), params)
    return {"devices": items, "pagination": pagination}


@route("/devices/get")
def devices_get(ctx: Ctx, params: dict) -> dict:
    if params.get("device_id"):
        return {"device": public(_device(ctx.ws, params["device_id"]))}
    if params.get("name"):
        for device in ctx.ws.devices.values():
            if device["properties"]["name"] == params["name"]:
                return {"device": public(device)}
        raise not_found("device")
    raise invalid_input("Must specify device_id or name")


# -- spaces ----------------------------------------------------------------------------------------
def _check_devices(ws: Workspace, device_ids: list[str]) -> None:
    for device_id in device_ids:
        _device(ws, device_id)


@route("/spaces/create")
def spaces_create(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    if params.get("space_key") and ws.space_by_key(params["space_key"]):
        raise SeamApiError(
            400, "space_key_taken", f"A space with space_key {params['space_key']!r} already exists"
        )
    _check_devices(ws, params.get("device_ids") or [])
    space = engine.create_space(ws, params["name"], params.get("space_key"), params.get("customer_key"))
    if params.get("customer_data"):
        space["customer_data"] = params["customer_data"]
    engine.set_space_devices(ws, space, add=params.get("device_ids") or [])
    return {"space": public(space)}


@route("/spaces/get")
def spaces_get(ctx: Ctx, params: dict) -> dict:
    return {"space": public(_space(ctx.ws, params))}


@route("/spaces/list")
def spaces_list(ctx: Ctx, params: dict) -> dict:
    spaces = list(ctx.ws.spaces.values())
    if params.get("space_key"):
        spaces = [s for s in spaces if s.get("space_key") == params["space_key"]]
    if params.get("customer_key"):
        spaces = [s for s in spaces if s.get("customer_key") == params["customer_key"]]
    if params.get("search"):
        needle = params["search"].lower()
        spaces = [
            s for s in spaces if needle in s["name"].lower() or needle in (s.get("space_key") or "").lower()
        ]
    items, pagination = _page(ctx, _out(spaces), params)
    return {"spaces": items, "pagination": pagination}


@route("/spaces/update")
def spaces_update(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    space = _space(ws, {"space_id": params.get("space_id")} if params.get("space_id") else params)
    if params.get("name"):
        space["name"] = space["display_name"] = params["name"]
    if params.get("space_key") and params.get("space_id"):
        space["space_key"] = params["space_key"]
    if params.get("device_ids") is not None:
        _check_devices(ws, params["device_ids"])
        current = list(space["_device_ids"])
        ctx.engine.set_space_devices(
            ws, space, add=params["device_ids"], remove=[d for d in current if d not in params["device_ids"]]
        )
    return {"space": public(space)}


@route("/spaces/add_devices")
def spaces_add_devices(ctx: Ctx, params: dict) -> dict:
    space = _space(ctx.ws, params)
    _check_devices(ctx.ws, params["device_ids"])
    ctx.engine.set_space_devices(ctx.ws, space, add=params["device_ids"])
    return {}


@route("/spaces/remove_devices")
def spaces_remove_devices(ctx: Ctx, params: dict) -> dict:
    space = _space(ctx.ws, params)
    ctx.engine.set_space_devices(ctx.ws, space, remove=params["device_ids"])
    return {}


@route("/spaces/delete")
def spaces_delete(ctx: Ctx, params: dict) -> dict:
    ctx.engine.delete_space(ctx.ws, _space(ctx.ws, params))
    return {}


# -- customers (reservation automations) -----------------------------------------------------------
@route("/customers/push_data")
def customers_push_data(ctx: Ctx, params: dict) -> dict:
    for list_name in ("reservations", "bookings", "access_grants"):
        for item in params.get(list_name) or []:
            try:
                starts_at, ends_at = norm_time(item.get("starts_at")), norm_time(item.get("ends_at"))
            except ValueError as exc:
                raise invalid_input(f"Invalid date-time: {exc}") from None
            _check_times(starts_at, ends_at)
    ctx.engine.push_data(ctx.ws, params)
    return {}


@route("/customers/delete_data")
def customers_delete_data(ctx: Ctx, params: dict) -> dict:
    ctx.engine.delete_data(ctx.ws, params)
    return {}


# -- user identities -------------------------------------------------------------------------------
@route("/user_identities/create")
def user_identities_create(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    key, email = params.get("user_identity_key"), params.get("email_address")
    if key and ws.user_identity_by_key(key):
        raise SeamApiError(
            400, "user_identity_key_already_in_use", f"user_identity_key {key!r} is already in use"
        )
    if email and any(u.get("email_address") == email for u in ws.user_identities.values()):
        raise SeamApiError(
            400, "user_identity_email_already_in_use", f"email_address {email!r} is already in use"
        )
    ui = ctx.engine.create_user_identity(
        ws, key=key, full_name=params.get("full_name"), email=email, phone=params.get("phone_number")
    )
    return {"user_identity": public(ui)}


@route("/user_identities/get")
def user_identities_get(ctx: Ctx, params: dict) -> dict:
    return {"user_identity": public(_user_identity(ctx.ws, params))}


@route("/user_identities/list")
def user_identities_list(ctx: Ctx, params: dict) -> dict:
    uis = list(ctx.ws.user_identities.values())
    if params.get("user_identity_ids") is not None:
        uis = [u for u in uis if u["user_identity_id"] in params["user_identity_ids"]]
    if params.get("search"):
        needle = params["search"].lower()
        uis = [
            u
            for u in uis
            if any(
                needle in (u.get(f) or "").lower()
                for f in ("full_name", "email_address", "phone_number", "user_identity_key")
            )
        ]
    items, pagination = _page(ctx, _out(uis), params)
    return {"user_identities": items, "pagination": pagination}


@route("/user_identities/delete")
def user_identities_delete(ctx: Ctx, params: dict) -> dict:
    ctx.engine.delete_user_identity(ctx.ws, _user_identity(ctx.ws, params))
    return {}


# -- access grants and methods ---------------------------------------------------------------------
@route("/access_grants/create")
def access_grants_create(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    ui: dict | None
    if params.get("user_identity_id"):
        ui = _user_identity(ws, {"user_identity_id": params["user_identity_id"]})
    else:
        inline = params.get("user_identity") or {}
        ui = ws.user_identity_by_key(inline["user_identity_key"]) if inline.get("user_identity_key") else None
        if ui is None:
            ui = engine.create_user_identity(
                ws,
                key=inline.get("user_identity_key"),
                full_name=inline.get("full_name"),
                email=inline.get("email_address"),
                phone=inline.get("phone_number"),
            )
    space_ids = list(params.get("space_ids") or params.get("location_ids") or [])
    for space_id in space_ids:
        _space(ws, {"space_id": space_id})
    for key in params.get("space_keys") or []:
        space = ws.space_by_key(key)
        if space is None:
            raise not_found("space", f"Space not found: space_key {key!r}")
        if space["space_id"] not in space_ids:
            space_ids.append(space["space_id"])
    device_ids = list(params.get("device_ids") or (params.get("location") or {}).get("device_ids") or [])
    for device_id in device_ids:
        if not is_lock_with_codes(_device(ws, device_id)):
            raise invalid_input(f"Device {device_id} does not support access codes")
    if params.get("access_grant_key") and ws.grant_by_key(params["access_grant_key"]):
        raise SeamApiError(
            400,
            "access_grant_key_already_in_use",
            f"access_grant_key {params['access_grant_key']!r} is already in use",
        )
    starts_at, ends_at = _times(params)
    grant = engine.create_grant(
        ws,
        user_identity_id=ui["user_identity_id"],
        space_ids=space_ids,
        device_ids=device_ids,
        requested_access_methods=params["requested_access_methods"],
        starts_at=starts_at,
        ends_at=ends_at,
        name=params.get("name"),
        reservation_key=params.get("reservation_key"),
        access_grant_key=params.get("access_grant_key"),
    )
    return {"access_grant": public(grant)}


@route("/access_grants/get")
def access_grants_get(ctx: Ctx, params: dict) -> dict:
    return {"access_grant": public(_grant(ctx.ws, params))}


@route("/access_grants/list")
def access_grants_list(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    grants = list(ws.access_grants.values())
    for field in ("user_identity_id", "reservation_key", "access_grant_key"):
        if params.get(field):
            grants = [g for g in grants if g.get(field) == params[field]]
    if params.get("access_grant_ids") is not None:
        grants = [g for g in grants if g["access_grant_id"] in params["access_grant_ids"]]
    if params.get("customer_key"):
        grants = [g for g in grants if g.get("_customer_key") == params["customer_key"]]
    if params.get("space_id") or params.get("location_id"):
        sid = params.get("space_id") or params.get("location_id")
        grants = [g for g in grants if sid in g["space_ids"]]
    if params.get("device_id"):
        grants = [
            g
            for g in grants
            if any(d["device_id"] == params["device_id"] for d in ctx.engine.grant_devices(ws, g))
        ]
    if params.get("access_code_id"):
        code = ws.access_codes.get(params["access_code_id"])
        grants = [g for g in grants if code and code.get("_access_grant_id") == g["access_grant_id"]]
    items, pagination = _page(ctx, _out(grants), params)
    return {"access_grants": items, "pagination": pagination}


@route("/access_grants/update")
def access_grants_update(ctx: Ctx, params: dict) -> dict:
    grant = _grant(ctx.ws, params)
    starts_at, ends_at = _times(params)
    _check_times(starts_at or grant["starts_at"], ends_at or grant.get("ends_at"))
    ctx.engine.update_grant_times(ctx.ws, grant, starts_at, ends_at, params.get("name"))
    return {}


@route("/access_grants/delete")
def access_grants_delete(ctx: Ctx, params: dict) -> dict:
    ctx.engine.delete_grant(ctx.ws, _grant(ctx.ws, params))
    return {}


@route("/access_methods/list")
def access_methods_list(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    methods = list(ws.access_methods.values())
    if params.get("access_grant_id") or params.get("access_grant_key"):
        grant = _grant(ws, params)
        methods = [m for m in methods if m["_access_grant_id"] == grant["access_grant_id"]]
    if params.get("device_id"):
        ids = {
            c.get("_access_method_id")
            for c in ws.access_codes.values()
            if c["device_id"] == params["device_id"]
        }
        methods = [m for m in methods if m["access_method_id"] in ids]
    if params.get("access_code_id"):
        code = ws.access_codes.get(params["access_code_id"])
        methods = [m for m in methods if code and code.get("_access_method_id") == m["access_method_id"]]
    if params.get("space_id"):
        grants = {
            g["access_grant_id"] for g in ws.access_grants.values() if params["space_id"] in g["space_ids"]
        }
        methods = [m for m in methods if m["_access_grant_id"] in grants]
    return {"access_methods": _out(methods)}


@route("/access_methods/get")
def access_methods_get(ctx: Ctx, params: dict) -> dict:
    method = ctx.ws.access_methods.get(params["access_method_id"])
    if method is None:
        raise not_found("access_method")
    return {"access_method": public(method)}


# -- access codes ----------------------------------------------------------------------------------
def _code(ws: Workspace, access_code_id: str) -> dict:
    code = ws.access_codes.get(access_code_id)
    if code is None:
        raise not_found("access_code", f"Access code not found: {access_code_id}")
    return code


def _check_code_value(device: dict, code: str | None) -> None:
    if code is None:
        return
    lengths = device["properties"].get("supported_code_lengths") or []
    if not code.isdigit() or (lengths and len(code) not in lengths):
        raise SeamApiError(
            400,
            "invalid_code_length" if code.isdigit() else "invalid_input",
            f"Code {code!r} is not valid for this device (digits, length {'/'.join(map(str, lengths))})",
        )


def _both_ends_or_neither(params: dict) -> None:
    """A code's time window is given whole: both ``starts_at`` and ``ends_at``, or neither (on create and
    on update: Seam's fake reads it so and the spec does not decide; docs/seam-emulator.md)."""
    if (params.get("starts_at") is None) != (params.get("ends_at") is None):
        message = "Both starts_at and ends_at must be provided if one is"
        raise invalid_input(message, {"_errors": [message]})


@route("/access_codes/create")
def access_codes_create(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    device = _device(ws, params["device_id"])
    if not is_lock_with_codes(device):
        raise SeamApiError(
            400, "device_does_not_support_access_codes", "Device does not support access codes"
        )
    _check_code_value(device, params.get("code"))
    if params.get("code") and any(
        c["device_id"] == device["device_id"] and c.get("code") == params["code"]
        for c in ws.access_codes.values()
    ):
        raise SeamApiError(
            400, "duplicate_access_code", "An access code with this code already exists on the device"
        )
    _both_ends_or_neither(params)
    starts_at, ends_at = _times(params)
    attempt = engine.action_attempt(ws, "CREATE_ACCESS_CODE")
    extra = {k: params[k] for k in ("common_code_key", "is_one_time_use") if params.get(k) is not None}
    code = engine.create_code(
        ws,
        device,
        name=params.get("name"),
        code=params.get("code"),
        starts_at=starts_at,
        ends_at=ends_at,
        attempt_id=attempt["action_attempt_id"],
        extra=extra,
    )
    return {"access_code": public(code), "action_attempt": dict(attempt)}


@route("/access_codes/list")
def access_codes_list(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    selectors = ("device_id", "access_code_ids", "access_method_id", "access_grant_id", "access_grant_key")
    if not any(params.get(s) is not None for s in selectors):
        raise invalid_input(
            "Must specify device_id, access_code_ids, access_method_id, access_grant_id or access_grant_key"
        )
    codes = list(ws.access_codes.values())
    if params.get("device_id"):
        codes = [c for c in codes if c["device_id"] == params["device_id"]]
    if params.get("access_code_ids") is not None:
        codes = [c for c in codes if c["access_code_id"] in params["access_code_ids"]]
    if params.get("access_method_id"):
        codes = [c for c in codes if c.get("_access_method_id") == params["access_method_id"]]
    if params.get("access_grant_id") or params.get("access_grant_key"):
        grant = ws.access_grants.get(params.get("access_grant_id") or "") or ws.grant_by_key(
            params.get("access_grant_key") or ""
        )
        codes = [c for c in codes if grant and c.get("_access_grant_id") == grant["access_grant_id"]]
    if params.get("search"):
        needle = params["search"].lower()
        codes = [
            c
            for c in codes
            if any(needle in (c.get(f) or "").lower() for f in ("name", "code", "access_code_id"))
        ]
    items, pagination = _page(ctx, _out(codes), params, default_limit=55000)
    return {"access_codes": items, "pagination": pagination}


def _code_not_found() -> SeamApiError:
    # access_codes/get answers Seam's generic `not_found` (update and delete name the resource): Seam's fake
    # reads it so and the spec does not decide (docs/seam-emulator.md, "Differences from Seam's fake")
    return SeamApiError(404, "not_found", "Access code not found")


@route("/access_codes/get")
def access_codes_get(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    if params.get("access_code_id"):
        code = ws.access_codes.get(params["access_code_id"])
        if code is None:
            raise _code_not_found()
        return {"access_code": public(code)}
    if params.get("device_id") and params.get("code"):
        for code in ws.access_codes.values():
            if code["device_id"] == params["device_id"] and code.get("code") == params["code"]:
                return {"access_code": public(code)}
        raise _code_not_found()
    raise invalid_input("Must specify access_code_id, or device_id and code")


@route("/access_codes/update")
def access_codes_update(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    code = _code(ws, params["access_code_id"])
    if code["status"] == "removing":
        raise SeamApiError(400, "access_code_being_removed", "Access code is being removed")
    device = ws.devices[code["device_id"]]
    _check_code_value(device, params.get("code"))
    _both_ends_or_neither(params)
    changes: dict[str, Any] = {}
    for field in ("name", "code"):
        if field in params:
            changes[field] = params[field]
    starts_at, ends_at = _times(params)
    if params.get("type") == "ongoing":
        changes.update(starts_at=None, ends_at=None)
    elif starts_at or ends_at:
        new_start = starts_at or code.get("starts_at")
        new_end = ends_at or code.get("ends_at")
        _check_times(new_start, new_end)
        changes.update(starts_at=new_start, ends_at=new_end)
    attempt = engine.action_attempt(ws, "UPDATE_ACCESS_CODE")
    engine.update_code(ws, code, changes, attempt_id=attempt["action_attempt_id"])
    return {"action_attempt": dict(attempt)}


@route("/access_codes/delete")
def access_codes_delete(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    code = _code(ws, params["access_code_id"])
    attempt = engine.action_attempt(ws, "DELETE_ACCESS_CODE")
    engine.remove_code(ws, code, attempt_id=attempt["action_attempt_id"])
    return {"action_attempt": dict(attempt)}


# -- events, webhooks, action attempts -------------------------------------------------------------
_EVENT_FILTERS = {
    "device_id": "device_id",
    "access_code_id": "access_code_id",
    "access_grant_id": "access_grant_id",
    "access_method_id": "access_method_id",
    "connected_account_id": "connected_account_id",
    "event_type": "event_type",
}
_EVENT_LIST_FILTERS = {
    "device_ids": "device_id",
    "access_code_ids": "access_code_id",
    "access_grant_ids": "access_grant_id",
    "access_method_ids": "access_method_id",
    "event_types": "event_type",
    "event_ids": "event_id",
}


@route("/events/list")
def events_list(ctx: Ctx, params: dict) -> dict:
    if not params.get("since") and not params.get("between"):
        raise invalid_input("Must include since or between", {"_errors": ["Must include since or between"]})
    try:
        if params.get("since"):
            lower, upper = parse_datetime(params["since"]), None
        else:
            lower, upper = (parse_datetime(x) for x in params["between"])
    except ValueError as exc:
        raise invalid_input(f"Invalid date-time: {exc}") from None
    events = []
    for event in ctx.ws.events:
        created = parse_datetime(event["created_at"])
        if created < lower or (upper is not None and created >= upper):
            continue
        events.append(event)
    for param, field in _EVENT_FILTERS.items():
        if params.get(param):
            value = params[param]
            if field == "access_grant_id":
                events = [
                    e for e in events if e.get(field) == value or value in e.get("access_grant_ids", [])
                ]
            else:
                events = [e for e in events if e.get(field) == value]
    for param, field in _EVENT_LIST_FILTERS.items():
        if params.get(param):
            values = set(params[param])
            events = [e for e in events if e.get(field) in values]
    if params.get("space_id"):
        space = ctx.ws.spaces.get(params["space_id"])
        device_ids = set(space["_device_ids"]) if space else set()
        events = [e for e in events if e.get("device_id") in device_ids]
    offset = int(params.get("unstable_offset") or 0)
    limit = int(params.get("limit") or 500)
    return {"events": _out(events[offset : offset + limit])}


@route("/events/get")
def events_get(ctx: Ctx, params: dict) -> dict:
    for event in reversed(ctx.ws.events):
        if params.get("event_id") and event["event_id"] != params["event_id"]:
            continue
        if params.get("event_type") and event["event_type"] != params["event_type"]:
            continue
        if params.get("device_id") and event.get("device_id") != params["device_id"]:
            continue
        return {"event": public(event)}
    raise not_found("event")


@route("/webhooks/create")
def webhooks_create(ctx: Ctx, params: dict) -> dict:
    webhook = {
        "webhook_id": new_id(),
        "url": params["url"],
        "event_types": list(params.get("event_types") or ["*"]),
        "secret": new_secret(),
        "created_at": now_iso(),
    }
    ctx.ws.webhooks[webhook["webhook_id"]] = webhook
    return {"webhook": public(webhook)}


def _webhook(ws: Workspace, webhook_id: str) -> dict:
    webhook = ws.webhooks.get(webhook_id)
    if webhook is None:
        raise not_found("webhook")
    return webhook


@route("/webhooks/list")
def webhooks_list(ctx: Ctx, params: dict) -> dict:
    return {"webhooks": _out(ctx.ws.webhooks.values())}


@route("/webhooks/get")
def webhooks_get(ctx: Ctx, params: dict) -> dict:
    return {"webhook": public(_webhook(ctx.ws, params["webhook_id"]))}


@route("/webhooks/update")
def webhooks_update(ctx: Ctx, params: dict) -> dict:
    webhook = _webhook(ctx.ws, params["webhook_id"])
    webhook["event_types"] = list(params["event_types"])
    return {}


@route("/webhooks/delete")
def webhooks_delete(ctx: Ctx, params: dict) -> dict:
    _webhook(ctx.ws, params["webhook_id"])
    del ctx.ws.webhooks[params["webhook_id"]]
    return {}


@route("/action_attempts/get")
def action_attempts_get(ctx: Ctx, params: dict) -> dict:
    attempt = ctx.ws.action_attempts.get(params["action_attempt_id"])
    if attempt is None:
        raise not_found("action_attempt")
    return {"action_attempt": dict(attempt)}


@route("/action_attempts/list")
def action_attempts_list(ctx: Ctx, params: dict) -> dict:
    ids = set(params.get("action_attempt_ids") or [])
    attempts = [dict(a) for a in ctx.ws.action_attempts.values() if not ids or a["action_attempt_id"] in ids]
    items, pagination = _page(ctx, attempts, params)
    return {"action_attempts": items, "pagination": pagination}


# -- locks (the lock view of the same devices) ------------------------------------------------------------
@route("/locks/list")
def locks_list(ctx: Ctx, params: dict) -> dict:
    devices = devices_list(ctx, params)["devices"]
    locks = [d for d in devices if "lock" in d["capabilities_supported"]]
    return {"locks": locks, "devices": locks}


@route("/locks/get")
def locks_get(ctx: Ctx, params: dict) -> dict:
    device = devices_get(ctx, params)["device"]
    if "lock" not in device["capabilities_supported"]:
        raise not_found("device", "Lock not found")
    return {"lock": device, "device": device}


def _lock_action(ctx: Ctx, params: dict, locked: bool) -> dict:
    ws, engine = ctx.ws, ctx.engine
    device = _device(ws, params["device_id"])
    if "lock" not in device["capabilities_supported"]:
        raise SeamApiError(400, "device_not_lock", "Device is not a lock")
    attempt = engine.action_attempt(ws, "LOCK_DOOR" if locked else "UNLOCK_DOOR")
    attempt_id, device_id = attempt["action_attempt_id"], device["device_id"]

    def finish(target: Workspace) -> None:
        current = target.devices.get(device_id)
        if current is None:
            return
        current["properties"]["locked"] = locked
        engine.emit(
            target,
            "lock.locked" if locked else "lock.unlocked",
            device_id=device_id,
            connected_account_id=current["connected_account_id"],
            method="remote",  # a Seam API action (the event's action_attempt_id says which)
            action_attempt_id=attempt_id,
        )
        found = target.action_attempts.get(attempt_id)
        if found:
            found.update(status="success", result={"was_confirmed_by_device": True}, error=None)

    engine.later(ws, finish)
    return {"action_attempt": dict(attempt)}


@route("/locks/lock_door")
def locks_lock_door(ctx: Ctx, params: dict) -> dict:
    return _lock_action(ctx, params, locked=True)


@route("/locks/unlock_door")
def locks_unlock_door(ctx: Ctx, params: dict) -> dict:
    return _lock_action(ctx, params, locked=False)


@route("/access_codes/unmanaged/list")
def access_codes_unmanaged_list(ctx: Ctx, params: dict) -> dict:
    _device(ctx.ws, params["device_id"])
    return {"access_codes": [], "pagination": _page(ctx, [], params)[1]}


@route("/access_codes/generate_code")
def access_codes_generate_code(ctx: Ctx, params: dict) -> dict:
    device = _device(ctx.ws, params["device_id"])
    # the spec answers an access code's shape: a code suggested for the device, created nowhere
    code = ctx.engine.generate_code(ctx.ws, [device["device_id"]])
    fields = ctx.engine.code_fields(ctx.ws, device, name=None, code=code, kind="ongoing", status="unset")
    return {"generated_code": fields}
