"""Linked access codes: one PIN shared by the codes of several locks (``access_codes/create_multiple``), and
their update as a group (``access_codes/update_multiple``).

From the spec's description: with no ``code`` given, Seam picks one PIN valid on every device and links the
codes by a ``common_code_key``; with a ``code`` given, every device gets that PIN and ``common_code_key``
stays null. A device that cannot take the shared PIN (length, or the PIN already on it) fails the whole
request (``behavior_when_code_cannot_be_shared: throw``, the default) or gets a random PIN of its own
(``create_random_code``).
"""

from __future__ import annotations

from typing import Any

from skillassay.seam.emulator.errors import SeamApiError
from skillassay.seam.emulator.handlers import Ctx, _check_times, _times, route
from skillassay.seam.emulator.seed import is_lock_with_codes
from skillassay.seam.emulator.store import Workspace, new_id, public


def _lengths(device: dict) -> set[int]:
    return set(device["properties"].get("supported_code_lengths") or range(4, 13))


def _fits(ws: Workspace, device: dict, code: str) -> bool:
    """The PIN is a length the lock takes and not already on it."""
    if len(code) not in _lengths(device):
        return False
    return not any(
        c["device_id"] == device["device_id"] and c.get("code") == code for c in ws.access_codes.values()
    )


def _shared_length(devices: list[dict], preferred: float | None) -> int | None:
    """The PIN length every device takes: the preferred one when all take it, else the shortest common."""
    common = set.intersection(*(_lengths(d) for d in devices))
    if not common:
        return None
    if preferred is not None and int(preferred) in common:
        return int(preferred)
    return min(common)


def _devices(ws: Workspace, device_ids: list[str]) -> list[dict]:
    """The workspace's devices among ``device_ids``: an id it does not have is passed over, as Seam's fake
    does (neither the spec nor the SDK docs say otherwise; docs/seam-emulator.md)."""
    devices = [ws.devices[device_id] for device_id in dict.fromkeys(device_ids) if device_id in ws.devices]
    for device in devices:
        if not is_lock_with_codes(device):
            raise SeamApiError(
                400,
                "device_does_not_support_access_codes",
                f"Device {device['device_id']} does not support access codes",
            )
    return devices


def _cannot_share(detail: str) -> SeamApiError:
    return SeamApiError(400, "cannot_share_code", f"The code cannot be shared across these devices: {detail}")


def _plan_codes(ctx: Ctx, devices: list[dict], params: dict) -> tuple[dict[str, str], str | None]:
    """device_id -> PIN for every device, and the common_code_key linking them (None for a given code)."""
    ws, engine = ctx.ws, ctx.engine
    random_fallback = params.get("behavior_when_code_cannot_be_shared") == "create_random_code"
    given = params.get("code")
    ids = [d["device_id"] for d in devices]
    if given is not None:
        shared, key = given, None
    else:
        length = _shared_length(devices, params.get("preferred_code_length"))
        if length is None and not random_fallback:
            raise _cannot_share("the devices have no code length in common")
        shared = engine.generate_code(ws, ids, length) if length is not None else None
        key = f"auto_set_by_create_multiple_{new_id()}"
    plan: dict[str, str] = {}
    for device in devices:
        if shared is not None and _fits(ws, device, shared):
            plan[device["device_id"]] = shared
        elif random_fallback:
            plan[device["device_id"]] = engine.generate_code(ws, [device["device_id"]], min(_lengths(device)))
        else:
            raise _cannot_share(f"device {device['device_id']} cannot take code {shared!r}")
    return plan, key


@route("/access_codes/create_multiple")
def access_codes_create_multiple(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    devices = _devices(ws, list(params["device_ids"]))
    starts_at, ends_at = _times(params)
    if not devices:
        return {"access_codes": []}  # no device of the workspace named: no code, as Seam's fake answers
    plan, key = _plan_codes(ctx, devices, params)
    external = params.get("is_external_modification_allowed", params.get("allow_external_modification"))
    codes = []
    for device in devices:
        extra: dict[str, Any] = {"common_code_key": key}
        if external is not None:
            extra["is_external_modification_allowed"] = bool(external)
        code = ctx.engine.create_code(
            ws,
            device,
            name=params.get("name"),
            code=plan[device["device_id"]],
            starts_at=starts_at,
            ends_at=ends_at,
            extra=extra,
        )
        codes.append(public(code))
    return {"access_codes": codes}


@route("/access_codes/update_multiple")
def access_codes_update_multiple(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    key = params["common_code_key"]
    linked = [c for c in ws.access_codes.values() if c.get("common_code_key") == key]
    starts_at, ends_at = _times(params)
    for code in linked:
        new_start = starts_at or code.get("starts_at")
        new_end = ends_at or code.get("ends_at")
        _check_times(new_start, new_end)
    for code in linked:
        if code["status"] == "removing":
            continue
        changes: dict[str, Any] = {}
        if params.get("name") is not None:
            changes["name"] = params["name"]
        if starts_at:
            changes["starts_at"] = starts_at
            changes.setdefault("ends_at", code.get("ends_at"))
        if ends_at:
            changes["ends_at"] = ends_at
            changes.setdefault("starts_at", code.get("starts_at"))
        ctx.engine.update_code(ws, code, changes)
    return {}
