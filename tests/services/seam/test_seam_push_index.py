"""A push finds the grant it made for a reservation by an index: a grant deleted since (by id, or by
``customers/delete_data``) is never found there again, and the next push makes a new one."""

from __future__ import annotations

import httpx


def _post(emu, ws, path: str, body: dict) -> dict:
    resp = httpx.post(
        f"{emu.base_url}{path}", json=body, headers={"authorization": f"Bearer {ws.api_key}"}, timeout=30
    )
    assert resp.status_code == 200, resp.text
    return resp.json()


def _grants(emu, ws) -> list[str]:
    return [
        g["access_grant_id"] for g in emu.state(ws.workspace_id).access_grants if g.get("reservation_key")
    ]


def test_a_deleted_pushed_grant_is_made_again_by_the_next_push(emulator):
    ws = emulator.create_workspace("push index")
    front = ws.device("FRONT DOOR")["device_id"]
    _post(emulator, ws, "/spaces/create", {"name": "Unit", "space_key": "unit", "device_ids": [front]})
    stay = {
        "reservation_key": "stay",
        "space_keys": ["unit"],
        "starts_at": "2031-01-01T15:00:00Z",
        "ends_at": "2031-01-05T11:00:00Z",
    }
    push = {"customer_key": "c", "reservations": [stay]}
    _post(emulator, ws, "/customers/push_data", push)
    [first] = _grants(emulator, ws)
    _post(emulator, ws, "/customers/push_data", push)
    assert _grants(emulator, ws) == [first]  # found again, not made twice
    _post(emulator, ws, "/access_grants/delete", {"access_grant_id": first})
    _post(emulator, ws, "/customers/push_data", push)
    [second] = _grants(emulator, ws)
    assert second != first
    _post(emulator, ws, "/customers/delete_data", {"customer_keys": [], "reservation_keys": ["stay"]})
    assert _grants(emulator, ws) == []
    _post(emulator, ws, "/customers/push_data", push)
    [third] = _grants(emulator, ws)
    assert third not in (first, second)
