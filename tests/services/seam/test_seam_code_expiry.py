"""A time-bound code leaves the lock when its ``ends_at`` passes, however often its end moved: one timer a
code at a time, never one per move (a push that moves a reservation's end on every push left a timer for
each end, held until it fell due, years later)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from skillassay.seam.emulator.emulator import SeamEmulator, wait_until


def _post(emu: SeamEmulator, key: str, path: str, body: dict) -> dict:
    resp = httpx.post(
        f"{emu.base_url}{path}", json=body, headers={"authorization": f"Bearer {key}"}, timeout=30
    )
    assert resp.status_code == 200, resp.text
    return resp.json()


def _at(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def _codes(emu: SeamEmulator, workspace_id: str) -> list[str]:
    return [c["access_code_id"] for c in emu.state(workspace_id).access_codes]


def test_a_code_whose_end_moves_later_then_earlier_leaves_at_its_last_end(emulator):
    ws = emulator.create_workspace("moving end")
    garage = ws.device("GARAGE")["device_id"]
    created = _post(
        emulator,
        ws.api_key,
        "/access_codes/create",
        # its end far enough off that the update below lands first on a loaded machine (at 0.3 s the code
        # was sometimes already being removed)
        {"device_id": garage, "starts_at": _at(-60), "ends_at": _at(4)},
    )
    code = created["access_code"]["access_code_id"]
    later = {"access_code_id": code, "starts_at": _at(-60), "ends_at": _at(60)}
    _post(emulator, ws.api_key, "/access_codes/update", later)
    # the first end's timer has fired (nothing falls due within 30 s): the code stays, its end is later
    wait_until(lambda: emulator.due_within(ws.workspace_id, 30) == 0, 30)
    assert code in _codes(emulator, ws.workspace_id)
    assert emulator.due_within(ws.workspace_id, 120) == 1  # the fired timer set one for the new end
    # moved near again: removed then, not at the far end
    near = {"access_code_id": code, "starts_at": _at(-60), "ends_at": _at(0.3)}
    _post(emulator, ws.api_key, "/access_codes/update", near)
    emulator.wait_for(
        ws.workspace_id, lambda s: code not in [c["access_code_id"] for c in s.access_codes], 20
    )


def test_pushes_that_move_a_reservations_end_keep_one_timer_for_its_code(emulator):
    ws = emulator.create_workspace("pushes")
    front = ws.device("FRONT DOOR")["device_id"]
    _post(
        emulator, ws.api_key, "/spaces/create", {"name": "Unit", "space_key": "unit", "device_ids": [front]}
    )
    for day in range(1, 28):
        for hour in (10, 11, 12):
            reservation = {
                "reservation_key": "stay",
                "space_keys": ["unit"],
                "starts_at": "2031-01-01T15:00:00Z",
                "ends_at": f"2031-02-{day:02d}T{hour}:00:00Z",
            }
            _post(
                emulator,
                ws.api_key,
                "/customers/push_data",
                {"customer_key": "c", "reservations": [reservation]},
            )
    emulator.wait_for_access_codes(ws.workspace_id, front, reservation_key="stay")
    # every code programmed: what is left scheduled is the code's expiry, once (81 ends were pushed)
    assert emulator.due_within(ws.workspace_id, 10**10) == 1
