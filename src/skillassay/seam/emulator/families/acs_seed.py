"""The access control system every sandbox workspace starts with: a Salto KS site on its own connected
account, with entrances and access groups (Seam's sandbox offers such systems to connect)."""

from __future__ import annotations

from typing import Any

from skillassay.seam.emulator.store import Workspace, new_id, now_iso

ACS_PROVIDER = "salto_ks"
ACS_EMAIL = "jane@example.com"
ACS_SYSTEM_NAME = "Jane's Building"
ACS_ENTRANCES = ("Main Entrance", "Lobby Door", "Room 101", "Room 102")
# access group name -> the entrances it opens
ACS_GROUPS: dict[str, tuple[str, ...]] = {
    "Residents": ("Main Entrance", "Lobby Door"),
    "Staff": ACS_ENTRANCES,
}


def seed_access_system(ws: Workspace) -> None:
    now = now_iso()
    account: dict[str, Any] = {
        "connected_account_id": new_id(),
        "account_type": ACS_PROVIDER,
        "account_type_display_name": "Salto KS",
        "display_name": ACS_EMAIL,
        "user_identifier": {"email": ACS_EMAIL},
        "created_at": now,
        "errors": [],
        "warnings": [],
        "custom_metadata": {},
        "automatically_manage_new_devices": True,
        "accepted_capabilities": ["access_control"],
        "workspace_id": ws.workspace_id,
    }
    account_id = account["connected_account_id"]
    ws.connected_accounts[account_id] = account
    system = {
        "acs_system_id": new_id(),
        "name": ACS_SYSTEM_NAME,
        "external_type": "salto_ks_site",
        "external_type_display_name": "Salto KS site",
        "system_type": "salto_ks_site",
        "system_type_display_name": "Salto KS site",
        "is_credential_manager": False,
        "location": {"time_zone": "Europe/Madrid"},
        "created_at": now,
        "workspace_id": ws.workspace_id,
        "connected_account_id": account_id,
        "connected_account_ids": [account_id],
        "image_url": "https://connect.getseam.com/assets/images/acs_systems/salto_ks_site.png",
        "image_alt_text": "Salto KS site",
        "errors": [],
        "warnings": [],
    }
    ws.acs_systems[system["acs_system_id"]] = system
    by_name = {}
    for name in ACS_ENTRANCES:
        entrance = {
            "acs_entrance_id": new_id(),
            "acs_system_id": system["acs_system_id"],
            "connected_account_id": account_id,
            "display_name": name,
            "space_ids": [],
            "created_at": now,
            "errors": [],
            "warnings": [],
            "is_locked": True,
            "can_unlock_with_code": True,
            "can_unlock_with_card": True,
            "can_unlock_with_mobile_key": True,
            "can_unlock_with_cloud_key": True,
            "can_belong_to_reservation": name.startswith("Room"),
            "salto_ks_metadata": {"door_name": name, "lock_type": "wall_reader", "online": True},
        }
        ws.acs_entrances[entrance["acs_entrance_id"]] = entrance
        by_name[name] = entrance["acs_entrance_id"]
    for group_name, entrance_names in ACS_GROUPS.items():
        group = {
            "acs_access_group_id": new_id(),
            "acs_system_id": system["acs_system_id"],
            "workspace_id": ws.workspace_id,
            "connected_account_id": account_id,
            "name": group_name,
            "display_name": group_name,
            "access_group_type": "salto_ks_access_group",
            "access_group_type_display_name": "Salto KS access group",
            "external_type": "salto_ks_access_group",
            "external_type_display_name": "Salto KS access group",
            "created_at": now,
            "errors": [],
            "warnings": [],
            "pending_mutations": [],
            "is_managed": True,
            "_entrance_ids": [by_name[n] for n in entrance_names],
            "_user_ids": [],
        }
        ws.acs_access_groups[group["acs_access_group_id"]] = group
