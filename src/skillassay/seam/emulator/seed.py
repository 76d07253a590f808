"""Sandbox devices every new workspace starts with, modelled on Seam's sandbox (August and Yale accounts)."""

from __future__ import annotations

from typing import Any

from skillassay.seam.emulator.families.acs_seed import seed_access_system
from skillassay.seam.emulator.store import Workspace, new_id, now_iso

# (provider, account email, device_type, manufacturer display name, model, lock names)
SANDBOX_ACCOUNTS: list[tuple[str, str, str, str, str, list[str]]] = [
    (
        "august",
        "jane@example.com",
        "august_lock",
        "August",
        "Wi-Fi Smart Lock",
        ["FRONT DOOR", "BACK DOOR", "GARAGE"],
    ),
    ("yale", "john@example.com", "yale_lock", "Yale", "Assure Lock 2", ["Front Door", "Side Door"]),
]


def _connected_account(ws: Workspace, provider: str, email: str) -> dict[str, Any]:
    return {
        "connected_account_id": new_id(),
        "account_type": provider,
        "account_type_display_name": provider.capitalize(),
        "display_name": email,
        "user_identifier": {"email": email},
        "created_at": now_iso(),
        "errors": [],
        "warnings": [],
        "custom_metadata": {},
        "automatically_manage_new_devices": True,
        "accepted_capabilities": ["lock"],
        "workspace_id": ws.workspace_id,
    }


def sandbox_lock(
    ws: Workspace, account: dict, device_type: str, maker: str, model: str, name: str, index: int
) -> dict[str, Any]:
    manufacturer = device_type.split("_", maxsplit=1)[0]
    serial = f"{manufacturer[:2].upper()}{index:04d}{ws.workspace_id[:6].upper()}"
    properties: dict[str, Any] = {
        "name": name,
        "appearance": {"name": name},
        "online": True,
        "locked": True,
        "door_open": False,
        "manufacturer": manufacturer,
        "battery_level": 0.86,
        "battery": {"level": 0.86, "status": "good"},
        "has_direct_power": False,
        "image_url": f"https://connect.getseam.com/assets/images/devices/{device_type}.png",
        "image_alt_text": f"{maker} {model}",
        "model": {
            "display_name": model,
            "manufacturer_display_name": maker,
            "accessory_keypad_supported": True,
            "can_connect_accessory_keypad": True,
            "has_built_in_keypad": device_type == "yale_lock",
            "offline_access_codes_supported": False,
            "online_access_codes_supported": True,
        },
        "serial_number": serial,
        "supported_code_lengths": [4, 5, 6, 7, 8] if device_type == "yale_lock" else [4, 5, 6],
        "max_active_codes_supported": 250,
        "code_constraints": [],
        "has_native_entry_events": True,
        "online_access_codes_enabled": True,
        "offline_access_codes_enabled": False,
        "keypad_battery": {"level": 1.0},
    }
    if device_type == "august_lock":
        properties["august_metadata"] = {
            "lock_id": serial,
            "lock_name": name,
            "house_id": ws.workspace_id[:8],
            "house_name": "Jane's House",
            "has_keypad": True,
            "keypad_battery_level": "Full",
            "model": "AUG-SL-CON-G3",
        }
    elif device_type == "yale_lock":
        properties["yale_metadata"] = {"device_id": serial, "device_name": name}
    return {
        "device_id": new_id(),
        "device_type": device_type,
        "display_name": name,
        "capabilities_supported": ["access_code", "lock"],
        "properties": properties,
        "connected_account_id": account["connected_account_id"],
        "workspace_id": ws.workspace_id,
        "space_ids": [],
        "errors": [],
        "warnings": [],
        "created_at": now_iso(),
        "is_managed": True,
        "custom_metadata": {},
        "device_manufacturer": {"manufacturer": manufacturer, "display_name": maker},
        "can_remotely_lock": True,
        "can_remotely_unlock": True,
        "can_program_online_access_codes": True,
        "can_program_offline_access_codes": False,
        "can_simulate_removal": True,
        "can_simulate_connection": True,
        "can_simulate_disconnection": True,
    }


def seed_sandbox(ws: Workspace) -> None:
    index = 0
    for provider, email, device_type, maker, model, names in SANDBOX_ACCOUNTS:
        account = _connected_account(ws, provider, email)
        ws.connected_accounts[account["connected_account_id"]] = account
        for name in names:
            index += 1
            device = sandbox_lock(ws, account, device_type, maker, model, name, index)
            ws.devices[device["device_id"]] = device
    seed_access_system(ws)


def is_lock_with_codes(device: dict) -> bool:
    return "access_code" in device.get("capabilities_supported", [])
