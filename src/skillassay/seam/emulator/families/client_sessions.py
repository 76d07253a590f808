"""Client sessions: a token scoped to some connected accounts, connect webviews and user identities, for a
front end to act for one of the app's users (Seam's client session tokens start ``seam_cst``)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from skillassay.seam.emulator.errors import SeamApiError, invalid_input
from skillassay.seam.emulator.families.common import lookup
from skillassay.seam.emulator.handlers import Ctx, route
from skillassay.seam.emulator.spec import parse_datetime
from skillassay.seam.emulator.store import Workspace, new_id, now_iso, public, to_iso

SESSION_LIFETIME = timedelta(days=1)  # Seam's default when no expires_at is given


def _grants(ws: Workspace, params: dict) -> dict[str, list[str]]:
    """The resources named in the request, each checked to exist."""
    accounts = list(dict.fromkeys(params.get("connected_account_ids") or []))
    for account_id in accounts:
        lookup(ws.connected_accounts, account_id, "connected_account")
    webviews = list(dict.fromkeys(params.get("connect_webview_ids") or []))
    for webview_id in webviews:
        lookup(ws.connect_webviews, webview_id, "connect_webview")
    identities = list(params.get("user_identity_ids") or [])
    if params.get("user_identity_id"):
        identities.append(params["user_identity_id"])
    for identity_id in identities:
        lookup(ws.user_identities, identity_id, "user_identity")
    return {
        "connected_account_ids": accounts,
        "connect_webview_ids": webviews,
        "user_identity_ids": list(dict.fromkeys(identities)),
    }


def _out(ws: Workspace, session: dict) -> dict:
    out = public(session)
    accounts = set(session["connected_account_ids"])
    for webview_id in session["connect_webview_ids"]:
        webview = ws.connect_webviews.get(webview_id)
        if webview and webview["connected_account_id"]:
            accounts.add(webview["connected_account_id"])
    out["device_count"] = sum(1 for d in ws.devices.values() if d["connected_account_id"] in accounts)
    if session["user_identity_ids"]:
        out["user_identity_id"] = session["user_identity_ids"][0]
    return out


def _session(ws: Workspace, params: dict) -> dict:
    if params.get("client_session_id"):
        return lookup(ws.client_sessions, params["client_session_id"], "client_session")
    key = params.get("user_identifier_key")
    for session in ws.client_sessions.values():
        if key and session["user_identifier_key"] == key:
            return session
    raise SeamApiError(404, "client_session_not_found", "Client session not found")


@route("/client_sessions/create")
def client_sessions_create(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    grants = _grants(ws, params)
    key = params.get("user_identifier_key")
    if key and any(s["user_identifier_key"] == key for s in ws.client_sessions.values()):
        raise SeamApiError(
            400,
            "client_session_already_exists",
            f"A client session with user_identifier_key {key!r} already exists",
        )
    if params.get("expires_at"):
        when = parse_datetime(params["expires_at"])
        if when <= datetime.now(UTC):
            message = "expires_at must be in the future"
            raise invalid_input(message, {"_errors": [], "expires_at": {"_errors": [message]}})
        expires_at = to_iso(when)
    else:
        expires_at = to_iso(datetime.now(UTC) + SESSION_LIFETIME)
    session: dict[str, Any] = {
        "client_session_id": new_id(),
        "workspace_id": ws.workspace_id,
        "created_at": now_iso(),
        "expires_at": expires_at,
        "token": "seam_cst_" + secrets.token_urlsafe(24),
        "user_identifier_key": key,
        **grants,
    }
    if params.get("customer_key"):
        session["customer_key"] = params["customer_key"]
    ws.client_sessions[session["client_session_id"]] = session
    return {"client_session": _out(ws, session)}


@route("/client_sessions/get_or_create")
def client_sessions_get_or_create(ctx: Ctx, params: dict) -> dict:
    """The session of this ``user_identifier_key`` (or user identity) when one exists, with the resources
    named granted to it; else a new one."""
    ws = ctx.ws
    key, identity = params.get("user_identifier_key"), params.get("user_identity_id")
    for session in ws.client_sessions.values():
        if (key and session["user_identifier_key"] == key) or (
            identity and not key and identity in session["user_identity_ids"]
        ):
            _add_grants(session, _grants(ws, params))
            return {"client_session": _out(ws, session)}
    return client_sessions_create(ctx, params)


@route("/client_sessions/revoke")
def client_sessions_revoke(ctx: Ctx, params: dict) -> dict:
    """The token stops working: the session stays listed, expired now (deleting it is a separate route)."""
    session = lookup(ctx.ws.client_sessions, params["client_session_id"], "client_session")
    session["expires_at"] = now_iso()
    return {}


@route("/client_sessions/get")
def client_sessions_get(ctx: Ctx, params: dict) -> dict:
    return {"client_session": _out(ctx.ws, _session(ctx.ws, params))}


@route("/client_sessions/list")
def client_sessions_list(ctx: Ctx, params: dict) -> dict:
    sessions = list(ctx.ws.client_sessions.values())
    if params.get("client_session_id"):
        sessions = [s for s in sessions if s["client_session_id"] == params["client_session_id"]]
    if params.get("user_identifier_key"):
        sessions = [s for s in sessions if s["user_identifier_key"] == params["user_identifier_key"]]
    if params.get("connect_webview_id"):
        sessions = [s for s in sessions if params["connect_webview_id"] in s["connect_webview_ids"]]
    if params.get("user_identity_id"):
        sessions = [s for s in sessions if params["user_identity_id"] in s["user_identity_ids"]]
    if params.get("without_user_identifier_key"):
        sessions = [s for s in sessions if s["user_identifier_key"] is None]
    return {"client_sessions": [_out(ctx.ws, s) for s in sessions]}


@route("/client_sessions/delete")
def client_sessions_delete(ctx: Ctx, params: dict) -> dict:
    session = lookup(ctx.ws.client_sessions, params["client_session_id"], "client_session")
    del ctx.ws.client_sessions[session["client_session_id"]]
    ctx.engine.emit(ctx.ws, "client_session.deleted", client_session_id=session["client_session_id"])
    return {}


@route("/client_sessions/grant_access")
def client_sessions_grant_access(ctx: Ctx, params: dict) -> dict:
    ws = ctx.ws
    session = _session(ws, params)
    _add_grants(session, _grants(ws, params))
    return {"client_session": _out(ws, session)}


def _add_grants(session: dict, grants: dict[str, list[str]]) -> None:
    for field, ids in grants.items():
        session[field] = list(dict.fromkeys([*session[field], *ids]))
