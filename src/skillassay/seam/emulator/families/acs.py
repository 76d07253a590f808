"""Access control systems (``acs/*``): systems, entrances, access groups, users and credentials.

Modelled on Seam's ACS API reference: an ACS user belongs to one system and may be linked to a user
identity; a credential (PIN code, card, mobile key) belongs to a system, is assigned to at most one user and
opens the entrances it allows; an access group opens its entrances to its members. Creating a credential
answers it not yet issued; Seam issues it after the emulator's async delay (``acs_credential.issued``).
Suspending a user revokes its access until it is unsuspended: a suspended user reaches no entrance.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skillassay.seam.emulator.errors import SeamApiError, invalid_input
from skillassay.seam.emulator.families.common import lookup, one_of
from skillassay.seam.emulator.handlers import Ctx, _page, _times, _user_identity, route
from skillassay.seam.emulator.spec import parse_datetime
from skillassay.seam.emulator.store import Workspace, new_id, now_iso, public


# -- look-ups --------------------------------------------------------------------------------------
def _system(ws: Workspace, acs_system_id: str | None) -> dict:
    return lookup(ws.acs_systems, acs_system_id, "acs_system")


def _entrance(ws: Workspace, acs_entrance_id: str | None) -> dict:
    return lookup(ws.acs_entrances, acs_entrance_id, "acs_entrance")


def _credential(ws: Workspace, acs_credential_id: str | None) -> dict:
    return lookup(ws.acs_credentials, acs_credential_id, "acs_credential")


def _group(ws: Workspace, acs_access_group_id: str | None) -> dict:
    return lookup(ws.acs_access_groups, acs_access_group_id, "acs_access_group")


def _user(ws: Workspace, params: dict, system_id: str | None = None) -> dict:
    """The ACS user named by ``acs_user_id``, or by ``user_identity_id`` within a system."""
    if params.get("acs_user_id"):
        user = lookup(ws.acs_users, params["acs_user_id"], "acs_user")
        if system_id is not None and user["acs_system_id"] != system_id:
            raise invalid_input(f"ACS user {user['acs_user_id']} is not in access system {system_id}")
        return user
    one_of(params, "acs_user_id", "user_identity_id")
    identity_id = params["user_identity_id"]
    system_id = system_id or params.get("acs_system_id")
    for user in ws.acs_users.values():
        if user.get("user_identity_id") == identity_id and system_id in (None, user["acs_system_id"]):
            return user
    raise SeamApiError(404, "acs_user_not_found", f"No ACS user for user identity {identity_id}")


def _in_system(records: Iterable[dict], system_id: str) -> list[dict]:
    return [r for r in records if r["acs_system_id"] == system_id]


def _groups_of(ws: Workspace, user: dict) -> list[dict]:
    return [g for g in ws.acs_access_groups.values() if user["acs_user_id"] in g["_user_ids"]]


def _entrances(ws: Workspace, ids: Iterable[str]) -> list[dict]:
    wanted = set(ids)
    return [public(e) for e in ws.acs_entrances.values() if e["acs_entrance_id"] in wanted]


def _event(ctx: Ctx, event_type: str, record: dict, **ids: Any) -> None:
    ctx.engine.emit(
        ctx.ws,
        event_type,
        acs_system_id=record["acs_system_id"],
        connected_account_id=record["connected_account_id"],
        **ids,
    )


# -- systems ---------------------------------------------------------------------------------------
def _system_out(ws: Workspace, system: dict) -> dict:
    out = public(system)
    out["acs_user_count"] = len(_in_system(ws.acs_users.values(), system["acs_system_id"]))
    out["acs_access_group_count"] = len(_in_system(ws.acs_access_groups.values(), system["acs_system_id"]))
    return out


@route("/acs/systems/list")
def acs_systems_list(ctx: Ctx, params: dict) -> dict:
    systems = list(ctx.ws.acs_systems.values())
    if params.get("connected_account_id"):
        systems = [s for s in systems if s["connected_account_id"] == params["connected_account_id"]]
    if params.get("search"):
        needle = params["search"].lower()
        systems = [s for s in systems if needle in s["name"].lower() or needle in s["acs_system_id"]]
    return {"acs_systems": [_system_out(ctx.ws, s) for s in systems]}


@route("/acs/systems/get")
def acs_systems_get(ctx: Ctx, params: dict) -> dict:
    return {"acs_system": _system_out(ctx.ws, _system(ctx.ws, params["acs_system_id"]))}


def delete_systems_of(ctx: Ctx, connected_account_id: str) -> None:
    """A connected account deleted: its access systems go with everything in them, each with its event."""
    ws = ctx.ws
    for system in [s for s in ws.acs_systems.values() if s["connected_account_id"] == connected_account_id]:
        system_id = system["acs_system_id"]
        for user in _in_system(list(ws.acs_users.values()), system_id):
            _delete_user(ctx, user, forget=True)
        for credential in _in_system(list(ws.acs_credentials.values()), system_id):
            _delete_credential(ctx, credential)
            # deleted from Seam, not from the access system (the spec's connected_accounts/delete)
            ws.forgotten_credentials[credential["acs_credential_id"]] = credential
        for group in _in_system(list(ws.acs_access_groups.values()), system_id):
            del ws.acs_access_groups[group["acs_access_group_id"]]
            _event(ctx, "acs_access_group.deleted", group, acs_access_group_id=group["acs_access_group_id"])
        for entrance in _in_system(list(ws.acs_entrances.values()), system_id):
            del ws.acs_entrances[entrance["acs_entrance_id"]]
            _event(ctx, "acs_entrance.removed", entrance, acs_entrance_id=entrance["acs_entrance_id"])
        del ws.acs_systems[system_id]


# -- entrances -------------------------------------------------------------------------------------
@route("/acs/entrances/list")
def acs_entrances_list(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    entrances = list(ws.acs_entrances.values())
    for field in ("acs_system_id", "connected_account_id"):
        if params.get(field):
            entrances = [e for e in entrances if e[field] == params[field]]
    if params.get("acs_credential_id"):
        allowed = set(_credential(ws, params["acs_credential_id"])["_entrance_ids"])
        entrances = [e for e in entrances if e["acs_entrance_id"] in allowed]
    if params.get("acs_entrance_ids") is not None:
        entrances = [e for e in entrances if e["acs_entrance_id"] in params["acs_entrance_ids"]]
    space_id = params.get("space_id") or params.get("location_id")
    if space_id:
        entrances = [e for e in entrances if space_id in e["space_ids"]]
    if params.get("search"):
        needle = params["search"].lower()
        entrances = [e for e in entrances if needle in e["display_name"].lower()]
    items, pagination = _page(ctx, [public(e) for e in entrances], params, default_limit=900)
    return {"acs_entrances": items, "pagination": pagination}


@route("/acs/entrances/get")
def acs_entrances_get(ctx: Ctx, params: dict) -> dict:
    return {"acs_entrance": public(_entrance(ctx.ws, params["acs_entrance_id"]))}


@route("/acs/entrances/grant_access")
def acs_entrances_grant_access(ctx: Ctx, params: dict) -> dict:
    entrance = _entrance(ctx.ws, params["acs_entrance_id"])
    user = _user(ctx.ws, params, entrance["acs_system_id"])
    granted = user.setdefault("_entrance_ids", [])
    if entrance["acs_entrance_id"] not in granted:
        granted.append(entrance["acs_entrance_id"])
    return {}


@route("/acs/entrances/unlock")
def acs_entrances_unlock(ctx: Ctx, params: dict) -> dict:
    """A cloud key credential that opens the entrance unlocks it remotely: an action attempt that succeeds
    after the async delay."""
    ws, engine = ctx.ws, ctx.engine
    entrance = _entrance(ws, params["acs_entrance_id"])
    credential = _credential(ws, params["acs_credential_id"])
    if credential["access_method"] != "cloud_key" or not entrance.get("can_unlock_with_cloud_key"):
        raise invalid_input("Only a cloud_key credential unlocks an entrance that supports cloud keys")
    if entrance["acs_entrance_id"] not in credential["_entrance_ids"]:
        raise SeamApiError(
            400, "credential_has_no_access", "The credential does not grant access to this entrance"
        )
    attempt = engine.action_attempt(ws, "UNLOCK_DOOR")
    attempt_id = attempt["action_attempt_id"]

    def finish(target: Workspace) -> None:
        found = target.action_attempts.get(attempt_id)
        if found and found["status"] == "pending":
            found.update(status="success", result={}, error=None)

    engine.later(ws, finish)
    return {"action_attempt": dict(attempt)}


@route("/acs/entrances/list_credentials_with_access")
def acs_entrances_list_credentials_with_access(ctx: Ctx, params: dict) -> dict:
    entrance_id = _entrance(ctx.ws, params["acs_entrance_id"])["acs_entrance_id"]
    credentials = [c for c in ctx.ws.acs_credentials.values() if entrance_id in c["_entrance_ids"]]
    return {"acs_credentials": [public(c) for c in credentials]}


# -- users -----------------------------------------------------------------------------------------
def _schedule(value: dict | None) -> dict | None:
    if not value:
        return None
    starts_at, ends_at = _times(value)
    return {"starts_at": starts_at or now_iso(), "ends_at": ends_at}


def _identity_fields(user: dict, identity: dict) -> None:
    user["user_identity_id"] = identity["user_identity_id"]
    user["user_identity_full_name"] = identity.get("full_name")
    user["user_identity_email_address"] = identity.get("email_address")
    user["user_identity_phone_number"] = identity.get("phone_number")


def _new_user(ctx: Ctx, system: dict, params: dict, identity: dict | None) -> dict:
    now = now_iso()
    full_name = params.get("full_name") or (identity or {}).get("full_name") or "ACS user"
    user: dict[str, Any] = {
        "acs_user_id": new_id(),
        "acs_system_id": system["acs_system_id"],
        "workspace_id": ctx.ws.workspace_id,
        "connected_account_id": system["connected_account_id"],
        "created_at": now,
        "display_name": full_name,
        "full_name": full_name,
        "external_type": "salto_site_user",
        "external_type_display_name": "Salto site user",
        "is_managed": True,
        "is_suspended": False,
        "last_successful_sync_at": now,
        "errors": [],
        "warnings": [],
        "pending_mutations": [],
    }
    email = params.get("email_address") or params.get("email") or (identity or {}).get("email_address")
    if email:  # email: the spec's deprecated alias of email_address, which Seam's fake sends too
        user["email_address"] = user["email"] = email
    phone = params.get("phone_number") or (identity or {}).get("phone_number")
    if phone:
        user["phone_number"] = phone
    schedule = _schedule(params.get("access_schedule"))
    if schedule:
        user["access_schedule"] = schedule
    if identity is not None:
        _identity_fields(user, identity)
    ctx.ws.acs_users[user["acs_user_id"]] = user
    _event(ctx, "acs_user.created", user, acs_user_id=user["acs_user_id"])
    return user


@route("/acs/users/create")
def acs_users_create(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    system = _system(ws, params["acs_system_id"])
    identity = _user_identity(ws, params) if params.get("user_identity_id") else None
    groups = [_group(ws, gid) for gid in params.get("acs_access_group_ids") or []]
    for group in groups:
        if group["acs_system_id"] != system["acs_system_id"]:
            raise invalid_input(f"Access group {group['acs_access_group_id']} is not in this access system")
    user = _new_user(ctx, system, params, identity)
    for group in groups:
        group["_user_ids"].append(user["acs_user_id"])
    return {"acs_user": public(user)}


@route("/acs/users/list")
def acs_users_list(ctx: Ctx, params: dict) -> dict:
    users = list(ctx.ws.acs_users.values())
    for field in (
        "acs_system_id",
        "user_identity_id",
        "user_identity_email_address",
        "user_identity_phone_number",
    ):
        if params.get(field):
            users = [u for u in users if u.get(field) == params[field]]
    if params.get("created_before"):
        before = parse_datetime(params["created_before"])
        users = [u for u in users if parse_datetime(u["created_at"]) < before]
    if params.get("search"):
        needle = params["search"].lower()
        users = [
            u
            for u in users
            if any(needle in (u.get(f) or "").lower() for f in ("full_name", "email_address", "phone_number"))
        ]
    items, pagination = _page(ctx, [public(u) for u in users], params)
    return {"acs_users": items, "pagination": pagination}


@route("/acs/users/get")
def acs_users_get(ctx: Ctx, params: dict) -> dict:
    return {"acs_user": public(_user(ctx.ws, params))}


@route("/acs/users/update")
def acs_users_update(ctx: Ctx, params: dict) -> dict:
    user = _user(ctx.ws, params)
    if params.get("full_name"):
        user["full_name"] = user["display_name"] = params["full_name"]
    email = params.get("email_address") or params.get("email")
    if email:
        user["email_address"] = user["email"] = email
    if params.get("phone_number"):
        user["phone_number"] = params["phone_number"]
    if "access_schedule" in params:
        schedule = _schedule(params["access_schedule"])
        if schedule is None:
            user.pop("access_schedule", None)
        else:
            user["access_schedule"] = schedule
    return {}


def _delete_user(ctx: Ctx, user: dict, forget: bool = False) -> None:
    """The user and its credentials go; ``forget``: Seam forgets them, the access system keeps them."""
    ws = ctx.ws
    for credential in [c for c in ws.acs_credentials.values() if c.get("acs_user_id") == user["acs_user_id"]]:
        _delete_credential(ctx, credential)
        if forget:
            ws.forgotten_credentials[credential["acs_credential_id"]] = credential
    for group in _groups_of(ws, user):
        group["_user_ids"].remove(user["acs_user_id"])
    del ws.acs_users[user["acs_user_id"]]
    _event(ctx, "acs_user.deleted", user, acs_user_id=user["acs_user_id"])


@route("/acs/users/delete")
def acs_users_delete(ctx: Ctx, params: dict) -> dict:
    _delete_user(ctx, _user(ctx.ws, params))
    return {}


@route("/acs/users/suspend")
def acs_users_suspend(ctx: Ctx, params: dict) -> dict:
    _user(ctx.ws, params)["is_suspended"] = True
    return {}


@route("/acs/users/unsuspend")
def acs_users_unsuspend(ctx: Ctx, params: dict) -> dict:
    _user(ctx.ws, params)["is_suspended"] = False
    return {}


def _accessible(ws: Workspace, user: dict) -> list[dict]:
    if user["is_suspended"]:
        return []
    ids: list[str] = []
    for credential in ws.acs_credentials.values():
        if credential.get("acs_user_id") == user["acs_user_id"]:
            ids += credential["_entrance_ids"]
    for group in _groups_of(ws, user):
        ids += group["_entrance_ids"]
    ids += user.get("_entrance_ids", [])  # acs/entrances/grant_access
    return _entrances(ws, ids)


@route("/acs/users/list_accessible_entrances")
def acs_users_list_accessible_entrances(ctx: Ctx, params: dict) -> dict:
    return {"acs_entrances": _accessible(ctx.ws, _user(ctx.ws, params))}


@route("/acs/users/revoke_access_to_all_entrances")
def acs_users_revoke_access_to_all_entrances(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    user = _user(ws, params)
    for group in _groups_of(ws, user):
        group["_user_ids"].remove(user["acs_user_id"])
    for credential in ws.acs_credentials.values():
        if credential.get("acs_user_id") == user["acs_user_id"]:
            credential["_entrance_ids"] = []
    user["_entrance_ids"] = []
    return {}


def _join(ws: Workspace, group: dict, user: dict) -> None:
    if user["acs_system_id"] != group["acs_system_id"]:
        raise invalid_input(f"ACS user {user['acs_user_id']} is not in the access group's system")
    if user["acs_user_id"] not in group["_user_ids"]:
        group["_user_ids"].append(user["acs_user_id"])


def _leave(group: dict, user: dict) -> None:
    if user["acs_user_id"] in group["_user_ids"]:
        group["_user_ids"].remove(user["acs_user_id"])


@route("/acs/users/add_to_access_group")
def acs_users_add_to_access_group(ctx: Ctx, params: dict) -> dict:
    _join(ctx.ws, _group(ctx.ws, params["acs_access_group_id"]), _user(ctx.ws, params))
    return {}


@route("/acs/users/remove_from_access_group")
def acs_users_remove_from_access_group(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    _leave(group, _user(ctx.ws, params, group["acs_system_id"]))
    return {}


# -- access groups ---------------------------------------------------------------------------------
@route("/acs/access_groups/list")
def acs_access_groups_list(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    groups = list(ws.acs_access_groups.values())
    if params.get("acs_system_id"):
        groups = [g for g in groups if g["acs_system_id"] == params["acs_system_id"]]
    if params.get("acs_user_id") or params.get("user_identity_id"):
        members = {
            u["acs_user_id"]
            for u in ws.acs_users.values()
            if u["acs_user_id"] == params.get("acs_user_id")
            or (params.get("user_identity_id") and u.get("user_identity_id") == params["user_identity_id"])
        }
        groups = [g for g in groups if members & set(g["_user_ids"])]
    if params.get("search"):
        needle = params["search"].lower()
        groups = [g for g in groups if needle in g["name"].lower()]
    return {"acs_access_groups": [public(g) for g in groups]}


@route("/acs/access_groups/delete")
def acs_access_groups_delete(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    del ctx.ws.acs_access_groups[group["acs_access_group_id"]]
    _event(ctx, "acs_access_group.deleted", group, acs_access_group_id=group["acs_access_group_id"])
    return {}


@route("/acs/access_groups/get")
def acs_access_groups_get(ctx: Ctx, params: dict) -> dict:
    return {"acs_access_group": public(_group(ctx.ws, params["acs_access_group_id"]))}


@route("/acs/access_groups/add_user")
def acs_access_groups_add_user(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    _join(ctx.ws, group, _user(ctx.ws, params, group["acs_system_id"]))
    return {}


@route("/acs/access_groups/remove_user")
def acs_access_groups_remove_user(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    _leave(group, _user(ctx.ws, params, group["acs_system_id"]))
    return {}


@route("/acs/access_groups/list_users")
def acs_access_groups_list_users(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    return {"acs_users": [public(ctx.ws.acs_users[u]) for u in group["_user_ids"]]}


@route("/acs/access_groups/list_accessible_entrances")
def acs_access_groups_list_accessible_entrances(ctx: Ctx, params: dict) -> dict:
    group = _group(ctx.ws, params["acs_access_group_id"])
    return {"acs_entrances": _entrances(ctx.ws, group["_entrance_ids"])}


# -- credentials -----------------------------------------------------------------------------------
_METHOD_NAMES = {"code": "PIN code", "card": "Card", "mobile_key": "Mobile key", "cloud_key": "Cloud key"}


def _credential_user(ctx: Ctx, params: dict) -> dict | None:
    """The user a new credential belongs to: by id, or the user identity's user in the system (made when
    the system has none yet)."""
    ws = ctx.ws
    if params.get("acs_user_id"):
        return _user(ws, params, params.get("acs_system_id"))
    if params.get("user_identity_id"):
        if not params.get("acs_system_id"):
            raise invalid_input("Must specify acs_system_id with user_identity_id")
        system = _system(ws, params["acs_system_id"])
        identity = _user_identity(ws, params)
        for user in _in_system(ws.acs_users.values(), system["acs_system_id"]):
            if user.get("user_identity_id") == identity["user_identity_id"]:
                return user
        return _new_user(ctx, system, {}, identity)
    if not params.get("acs_system_id"):
        raise invalid_input("Must specify acs_user_id, or user_identity_id and acs_system_id")
    return None


def _allowed_entrances(ws: Workspace, system_id: str, ids: list[str]) -> list[str]:
    for entrance_id in ids:
        if _entrance(ws, entrance_id)["acs_system_id"] != system_id:
            raise invalid_input(f"Entrance {entrance_id} is not in access system {system_id}")
    return list(dict.fromkeys(ids))


def _new_code(ws: Workspace, system_id: str, ctx: Ctx) -> str:
    taken = {c.get("code") for c in _in_system(ws.acs_credentials.values(), system_id)}
    while True:
        code = ctx.engine.generate_code(ws, [], 6)
        if code not in taken:
            return code


@route("/acs/credentials/create")
def acs_credentials_create(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    user = _credential_user(ctx, params)
    system = _system(ws, user["acs_system_id"] if user else params["acs_system_id"])
    system_id = system["acs_system_id"]
    entrance_ids = _allowed_entrances(ws, system_id, list(params.get("allowed_acs_entrance_ids") or []))
    starts_at, ends_at = _times(params)
    method = params["access_method"]
    code = params.get("code") if method == "code" else None
    if method == "code" and code is None:
        code = _new_code(ws, system_id, ctx)
    elif code is not None and any(
        c.get("code") == code for c in _in_system(ws.acs_credentials.values(), system_id)
    ):
        raise SeamApiError(400, "duplicate_code", "A credential with this code already exists in the system")
    credential: dict[str, Any] = {
        "acs_credential_id": new_id(),
        "acs_system_id": system_id,
        "connected_account_id": system["connected_account_id"],
        "workspace_id": ws.workspace_id,
        "display_name": code or _METHOD_NAMES[method],
        "access_method": method,
        "code": code,
        "created_at": now_iso(),
        "external_type": "salto_ks_credential",
        "external_type_display_name": "Salto KS credential",
        "is_managed": True,
        "is_issued": False,
        "issued_at": None,
        "is_multi_phone_sync_credential": bool(params.get("is_multi_phone_sync_credential", False)),
        "is_latest_desired_state_synced_with_provider": False,
        "latest_desired_state_synced_with_provider_at": None,
        "errors": [],
        "warnings": [],
        "_entrance_ids": entrance_ids,
    }
    if method == "card":
        credential["card_number"] = None
    if user is not None:
        credential["acs_user_id"] = user["acs_user_id"]
        if user.get("user_identity_id"):
            credential["user_identity_id"] = user["user_identity_id"]
    if starts_at:
        credential["starts_at"] = starts_at
    if ends_at:
        credential["ends_at"] = ends_at
    ws.acs_credentials[credential["acs_credential_id"]] = credential
    _issue_later(ctx, credential["acs_credential_id"])
    return {"acs_credential": public(credential)}


def _issue_later(ctx: Ctx, credential_id: str) -> None:
    engine = ctx.engine

    def issue(target: Workspace) -> None:
        current = target.acs_credentials.get(credential_id)
        if current is None:
            return
        now = now_iso()
        reissued = current["is_issued"]
        current.update(
            is_issued=True,
            issued_at=now,
            is_latest_desired_state_synced_with_provider=True,
            latest_desired_state_synced_with_provider_at=now,
        )
        engine.emit(
            target,
            "acs_credential.reissued" if reissued else "acs_credential.issued",
            acs_system_id=current["acs_system_id"],
            connected_account_id=current["connected_account_id"],
            acs_credential_id=credential_id,
        )

    engine.later(ctx.ws, issue)


@route("/acs/credentials/list")
def acs_credentials_list(ctx: Ctx, params: dict) -> dict:
    credentials = list(ctx.ws.acs_credentials.values())
    for field in ("acs_user_id", "acs_system_id", "user_identity_id"):
        if params.get(field):
            credentials = [c for c in credentials if c.get(field) == params[field]]
    if params.get("is_multi_phone_sync_credential") is not None:
        wanted = params["is_multi_phone_sync_credential"]
        credentials = [c for c in credentials if c["is_multi_phone_sync_credential"] == wanted]
    if params.get("created_before"):
        before = parse_datetime(params["created_before"])
        credentials = [c for c in credentials if parse_datetime(c["created_at"]) < before]
    if params.get("search"):
        needle = params["search"].lower()
        credentials = [
            c for c in credentials if needle in c["display_name"].lower() or needle in (c.get("code") or "")
        ]
    items, pagination = _page(ctx, [public(c) for c in credentials], params)
    return {"acs_credentials": items, "pagination": pagination}


@route("/acs/credentials/get")
def acs_credentials_get(ctx: Ctx, params: dict) -> dict:
    return {"acs_credential": public(_credential(ctx.ws, params["acs_credential_id"]))}


@route("/acs/credentials/update")
def acs_credentials_update(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    credential = _credential(ws, params["acs_credential_id"])
    if params.get("code") is not None:
        if credential["access_method"] != "code":
            raise invalid_input("Only a code credential has a code")
        credential["code"] = credential["display_name"] = params["code"]
    if params.get("ends_at"):
        _, ends_at = _times({"starts_at": credential.get("starts_at"), "ends_at": params["ends_at"]})
        credential["ends_at"] = ends_at
    credential["is_latest_desired_state_synced_with_provider"] = False
    _issue_later(ctx, credential["acs_credential_id"])
    return {"acs_credential": public(credential)}


def _delete_credential(ctx: Ctx, credential: dict) -> None:
    del ctx.ws.acs_credentials[credential["acs_credential_id"]]
    _event(ctx, "acs_credential.deleted", credential, acs_credential_id=credential["acs_credential_id"])


@route("/acs/credentials/delete")
def acs_credentials_delete(ctx: Ctx, params: dict) -> dict:
    _delete_credential(ctx, _credential(ctx.ws, params["acs_credential_id"]))
    return {}


@route("/acs/credentials/assign")
def acs_credentials_assign(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    credential = _credential(ws, params["acs_credential_id"])
    user = _user(ws, params, credential["acs_system_id"])
    credential["acs_user_id"] = user["acs_user_id"]
    if user.get("user_identity_id"):
        credential["user_identity_id"] = user["user_identity_id"]
    return {"acs_credential": public(credential)}


@route("/acs/credentials/unassign")
def acs_credentials_unassign(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    credential = _credential(ws, params["acs_credential_id"])
    user = _user(ws, params, credential["acs_system_id"])
    if credential.get("acs_user_id") != user["acs_user_id"]:
        raise invalid_input(f"Credential {credential['acs_credential_id']} is not assigned to this user")
    credential.pop("acs_user_id", None)
    credential.pop("user_identity_id", None)
    return {"acs_credential": public(credential)}


@route("/acs/credentials/list_accessible_entrances")
def acs_credentials_list_accessible_entrances(ctx: Ctx, params: dict) -> dict:
    credential = _credential(ctx.ws, params["acs_credential_id"])
    return {"acs_entrances": _entrances(ctx.ws, credential["_entrance_ids"])}


# -- what the emulator's systems never have: unmanaged users, credentials, groups; credential managers -----
@route("/acs/users/unmanaged/list")
def acs_users_unmanaged_list(ctx: Ctx, params: dict) -> dict:
    if params.get("acs_system_id"):
        _system(ctx.ws, params["acs_system_id"])
    return {"acs_users": []}


@route("/acs/users/unmanaged/get")
def acs_users_unmanaged_get(ctx: Ctx, params: dict) -> dict:
    raise SeamApiError(404, "acs_user_not_found", f"Unmanaged ACS user not found: {params['acs_user_id']}")


@route("/acs/credentials/unmanaged/list")
def acs_credentials_unmanaged_list(ctx: Ctx, params: dict) -> dict:
    if params.get("acs_system_id"):
        _system(ctx.ws, params["acs_system_id"])
    return {"acs_credentials": []}


@route("/acs/credentials/unmanaged/get")
def acs_credentials_unmanaged_get(ctx: Ctx, params: dict) -> dict:
    raise SeamApiError(
        404, "acs_credential_not_found", f"Unmanaged credential not found: {params['acs_credential_id']}"
    )


@route("/acs/access_groups/unmanaged/list")
def acs_access_groups_unmanaged_list(ctx: Ctx, params: dict) -> dict:
    if params.get("acs_system_id"):
        _system(ctx.ws, params["acs_system_id"])
    return {"acs_access_groups": []}


@route("/acs/access_groups/unmanaged/get")
def acs_access_groups_unmanaged_get(ctx: Ctx, params: dict) -> dict:
    raise SeamApiError(
        404,
        "acs_access_group_not_found",
        f"Unmanaged access group not found: {params['acs_access_group_id']}",
    )


@route("/acs/systems/list_compatible_credential_manager_acs_systems")
def acs_systems_list_compatible_credential_manager_acs_systems(ctx: Ctx, params: dict) -> dict:
    _system(ctx.ws, params["acs_system_id"])  # a Salto KS site needs no credential manager
    return {"acs_systems": []}
