"""Connect webviews and what they produce (connected accounts with devices), connected accounts' update and
delete, and ``devices/update``.

A connect webview is where a user signs in to a device provider. No user signs in to the emulator's, so it
completes by itself, the way Seam's sandbox completes when its sample account signs in: on the first
``connect_webviews/get`` or ``connect_webviews/list`` after its creation, or after the emulator's async delay
(``SeamEmulator(async_delay=...)``), whichever comes first. ``create`` always answers ``pending`` with no
connected account, so an app that reads ``connected_account_id`` off the create answer gets null, as in
Seam. The provider signed in is the first of ``accepted_providers`` (``august`` when none are given); a
provider with a sandbox account already connected in the workspace (August: jane@example.com, Yale:
john@example.com, Salto KS: the access system's account) completes into that same connected account and
its devices, as signing in again to an account does in Seam; any other provider gets a new connected account
with two sandbox locks when Seam has a lock type for it (``<provider>_lock``), none otherwise.
"""

from __future__ import annotations

from typing import Any

from skillassay.seam.emulator.errors import SeamApiError
from skillassay.seam.emulator.families.common import lookup, merge_metadata
from skillassay.seam.emulator.handlers import Ctx, _page, route
from skillassay.seam.emulator.seed import sandbox_lock
from skillassay.seam.emulator.store import Workspace, new_id, now_iso, public

DEFAULT_PROVIDER = "august"
# lock device types of the spec's device_type enum, by provider (Seam names a lock "<provider>_lock")
LOCK_PROVIDERS = frozenset((
    "akuvox", "august", "doorking", "igloo", "linear", "lockly", "kwikset", "nuki", "salto", "schlage",
    "smartthings", "wyze", "yale", "ttlock", "igloohome", "tedee", "akiles", "ultraloq", "keyincode",
    "omnitec", "kisi",
))  # fmt: skip


# -- connect webviews ------------------------------------------------------------------------------
def _webview(ws: Workspace, connect_webview_id: str | None) -> dict:
    return lookup(ws.connect_webviews, connect_webview_id, "connect_webview")


@route("/connect_webviews/create")
def connect_webviews_create(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    webview_id = new_id()
    providers = list(params.get("accepted_providers") or [])
    webview: dict[str, Any] = {
        "connect_webview_id": webview_id,
        "workspace_id": ws.workspace_id,
        "created_at": now_iso(),
        "connected_account_id": None,
        "url": f"{ctx.base_url}/connect_webviews/view?connect_webview_id={webview_id}&auth_token={new_id()}",
        "device_selection_mode": params.get("device_selection_mode") or "none",
        "accepted_providers": providers,
        "accepted_capabilities": list(params.get("accepted_capabilities") or ["lock"]),
        "accepted_devices": [],
        "any_device_allowed": True,
        "any_provider_allowed": not providers,
        "login_successful": False,
        "status": "pending",
        "custom_redirect_url": params.get("custom_redirect_url"),
        "custom_redirect_failure_url": params.get("custom_redirect_failure_url"),
        "custom_metadata": merge_metadata({}, params.get("custom_metadata") or {}),
        "automatically_manage_new_devices": params.get("automatically_manage_new_devices", True),
        "wait_for_device_creation": bool(params.get("wait_for_device_creation", False)),
        "authorized_at": None,
        "selected_provider": None,
    }
    if params.get("customer_key"):
        webview["customer_key"] = params["customer_key"]
    ws.connect_webviews[webview_id] = webview
    engine = ctx.engine

    def complete_later(target: Workspace) -> None:
        current = target.connect_webviews.get(webview_id)
        if current is not None and current["status"] == "pending":
            _complete(ctx, target, current)

    engine.later(ws, complete_later)
    return {"connect_webview": public(webview)}


def _complete(ctx: Ctx, ws: Workspace, webview: dict) -> None:
    """The sandbox user signs in: the webview is authorized into a connected account with devices."""
    provider = (webview["accepted_providers"] or [DEFAULT_PROVIDER])[0]
    account = next((a for a in ws.connected_accounts.values() if a.get("account_type") == provider), None)
    engine = ctx.engine
    if account is None:
        account = _new_account(ws, provider, webview)
        engine.emit(
            ws,
            "connected_account.created",
            connected_account_id=account["connected_account_id"],
            connect_webview_id=webview["connect_webview_id"],
        )
        for device in _new_locks(ws, account, provider):
            engine.emit(
                ws,
                "device.connected",
                device_id=device["device_id"],
                connected_account_id=account["connected_account_id"],
            )
    if webview.get("customer_key"):
        account["customer_key"] = webview["customer_key"]
    webview.update(
        status="authorized",
        login_successful=True,
        connected_account_id=account["connected_account_id"],
        authorized_at=now_iso(),
        selected_provider=provider,
    )
    account_id = account["connected_account_id"]
    engine.emit(
        ws,
        "connect_webview.login_succeeded",
        connect_webview_id=webview["connect_webview_id"],
        connected_account_id=account_id,
    )
    engine.emit(ws, "connected_account.connected", connected_account_id=account_id)
    engine.emit(ws, "connected_account.completed_first_sync", connected_account_id=account_id)


def _new_account(ws: Workspace, provider: str, webview: dict) -> dict:
    email = f"{provider}-{len(ws.connected_accounts) + 1}@example.com"
    account: dict[str, Any] = {
        "connected_account_id": new_id(),
        "account_type": provider,
        "account_type_display_name": provider.replace("_", " ").title(),
        "display_name": email,
        "user_identifier": {"email": email},
        "created_at": now_iso(),
        "errors": [],
        "warnings": [],
        "custom_metadata": {},
        "automatically_manage_new_devices": bool(webview["automatically_manage_new_devices"]),
        "accepted_capabilities": list(webview["accepted_capabilities"]),
        "workspace_id": ws.workspace_id,
    }
    ws.connected_accounts[account["connected_account_id"]] = account
    return account


def _new_locks(ws: Workspace, account: dict, provider: str) -> list[dict]:
    if provider not in LOCK_PROVIDERS:
        return []
    maker = provider.replace("_", " ").title()
    devices = []
    for name in ("Front Door", "Back Door"):
        device = sandbox_lock(ws, account, f"{provider}_lock", maker, "Smart Lock", name, len(ws.devices) + 1)
        ws.devices[device["device_id"]] = device
        devices.append(device)
    return devices


def _complete_pending(ctx: Ctx, webviews: list[dict]) -> None:
    for webview in webviews:
        if webview["status"] == "pending":
            _complete(ctx, ctx.ws, webview)


@route("/connect_webviews/get")
def connect_webviews_get(ctx: Ctx, params: dict) -> dict:
    webview = _webview(ctx.ws, params["connect_webview_id"])
    _complete_pending(ctx, [webview])
    return {"connect_webview": public(webview)}


@route("/connect_webviews/list")
def connect_webviews_list(ctx: Ctx, params: dict) -> dict:
    webviews = list(ctx.ws.connect_webviews.values())
    _complete_pending(ctx, webviews)
    if params.get("customer_key"):
        webviews = [w for w in webviews if w.get("customer_key") == params["customer_key"]]
    for key, value in (params.get("custom_metadata_has") or {}).items():
        webviews = [w for w in webviews if w["custom_metadata"].get(key) == value]
    if params.get("search"):
        needle = params["search"].lower()
        webviews = [
            w
            for w in webviews
            if needle in w["connect_webview_id"] or needle in (w.get("selected_provider") or "")
        ]
    items, pagination = _page(ctx, [public(w) for w in webviews], params)
    return {"connect_webviews": items, "pagination": pagination}


@route("/connect_webviews/delete")
def connect_webviews_delete(ctx: Ctx, params: dict) -> dict:
    webview = _webview(ctx.ws, params["connect_webview_id"])
    del ctx.ws.connect_webviews[webview["connect_webview_id"]]
    return {}


# -- connected accounts ----------------------------------------------------------------------------
@route("/connected_accounts/update")
def connected_accounts_update(ctx: Ctx, params: dict) -> dict:
    account = lookup(ctx.ws.connected_accounts, params["connected_account_id"], "connected_account")
    for field in ("display_name", "automatically_manage_new_devices", "customer_key"):
        if params.get(field) is not None:
            account[field] = params[field]
    if params.get("accepted_capabilities") is not None:
        account["accepted_capabilities"] = list(params["accepted_capabilities"])
    if params.get("custom_metadata") is not None:
        account["custom_metadata"] = merge_metadata(account["custom_metadata"], params["custom_metadata"])
    return {"connected_account": public(account)}


@route("/connected_accounts/sync")
def connected_accounts_sync(ctx: Ctx, params: dict) -> dict:
    """A sync of the emulator's accounts finds nothing new: the account must exist, nothing changes."""
    lookup(ctx.ws.connected_accounts, params["connected_account_id"], "connected_account")
    return {}


@route("/connected_accounts/delete")
def connected_accounts_delete(ctx: Ctx, params: dict) -> dict:
    """Seam's description: the account and everything under it go from Seam (devices, access codes, access
    systems), each with its deleted event; nothing is removed from the provider's devices."""
    ws, engine = ctx.ws, ctx.engine
    account = lookup(ws.connected_accounts, params["connected_account_id"], "connected_account")
    account_id = account["connected_account_id"]
    devices = [d for d in ws.devices.values() if d["connected_account_id"] == account_id]
    gone = {d["device_id"] for d in devices}
    for space in ws.spaces.values():
        if gone & set(space["_device_ids"]):
            engine.set_space_devices(ws, space, remove=sorted(gone))
    for code in [c for c in ws.access_codes.values() if c["device_id"] in gone]:
        del ws.access_codes[code["access_code_id"]]
        if code["status"] != "removing":
            ws.forgotten_codes[code["access_code_id"]] = code  # not removed from the lock (the spec says)
        engine.emit(
            ws,
            "access_code.deleted",
            access_code_id=code["access_code_id"],
            device_id=code["device_id"],
            connected_account_id=account_id,
            code=code.get("code"),
        )
    for device in devices:
        del ws.devices[device["device_id"]]
        engine.emit(ws, "device.deleted", device_id=device["device_id"], connected_account_id=account_id)
    for device_id in [i for i, d in ws.unmanaged_devices.items() if d["connected_account_id"] == account_id]:
        del ws.unmanaged_devices[device_id]
    from skillassay.seam.emulator.families.acs import delete_systems_of

    delete_systems_of(ctx, account_id)
    for webview in ws.connect_webviews.values():
        if webview["connected_account_id"] == account_id:
            webview["connected_account_id"] = None
    for session in ws.client_sessions.values():
        if account_id in session["connected_account_ids"]:
            session["connected_account_ids"].remove(account_id)
    del ws.connected_accounts[account_id]
    engine.emit(ws, "connected_account.deleted", connected_account_id=account_id)
    return {}


# -- devices ---------------------------------------------------------------------------------------
@route("/devices/update")
def devices_update(ctx: Ctx, params: dict) -> dict:
    ws, engine = ctx.ws, ctx.engine
    device = ws.devices.get(params["device_id"]) or ws.unmanaged_devices.get(params["device_id"])
    if device is None:
        raise SeamApiError(404, "device_not_found", f"Device not found: {params['device_id']}")
    name = params.get("name")
    if name is None:
        name = (params.get("properties") or {}).get("name")
    if name is not None and name != device["properties"].get("name"):
        device["display_name"] = device["properties"]["name"] = name
        device["properties"].setdefault("appearance", {})["name"] = name
        engine.emit(
            ws,
            "device.name_changed",
            device_id=device["device_id"],
            connected_account_id=device["connected_account_id"],
            device_name=name,
        )
    if params.get("custom_metadata") is not None:
        device["custom_metadata"] = merge_metadata(device["custom_metadata"], params["custom_metadata"])
    if params.get("is_managed") is not None:
        _set_managed(ctx, device, bool(params["is_managed"]))
    return {}


def _set_managed(ctx: Ctx, device: dict, managed: bool) -> None:
    """An unmanaged device leaves ``devices/list`` (and Seam's management) until it is managed again; its
    managed codes leave ``access_codes/*`` with it (they stay on the lock) and come back with it."""
    ws, device_id = ctx.ws, device["device_id"]
    if managed == device["is_managed"]:
        return
    device["is_managed"] = managed
    if managed:
        ws.devices[device_id] = ws.unmanaged_devices.pop(device_id)
        for code_id in device.pop("_parked_code_ids", []):
            code = ws.forgotten_codes.pop(code_id, None)
            if code is not None:
                ws.access_codes[code_id] = code
        event = "device.unmanaged.converted_to_managed"
    else:
        ws.unmanaged_devices[device_id] = ws.devices.pop(device_id)
        parked = [c for c in ws.access_codes.values() if c["device_id"] == device_id]
        for code in parked:  # still on the lock, no longer Seam's to manage
            del ws.access_codes[code["access_code_id"]]
            ws.forgotten_codes[code["access_code_id"]] = code
        device["_parked_code_ids"] = [c["access_code_id"] for c in parked]
        event = "device.converted_to_unmanaged"
    ctx.engine.emit(ws, event, device_id=device_id, connected_account_id=device["connected_account_id"])
