"""PyPI ``seam`` against the emulator, configured only through SEAM_ENDPOINT / SEAM_API_KEY."""

from __future__ import annotations

import time
from datetime import UTC

import httpx
import pytest
from seam import Seam, SeamWebhook, SeamWebhookVerificationError
from seam.exceptions import SeamHttpApiError, SeamHttpInvalidInputError, SeamHttpUnauthorizedError
from seam_helpers import run_python

from skillassay.seam.emulator.emulator import wait_until

STARTS, ENDS, ENDS_LATER = "2031-03-01T15:00:00Z", "2031-03-03T11:00:00Z", "2031-03-05T11:00:00Z"


def _reservation(ends_at: str = ENDS, space_keys: list[str] | None = None) -> dict:
    return {
        "reservation_key": "res-1",
        "user_identity_key": "guest-1",
        "space_keys": space_keys or ["unit-1"],
        "starts_at": STARTS,
        "ends_at": ends_at,
        "name": "Stay of Guest One",
    }


def test_reservation_automation_lifecycle(emulator, seam_env):
    seam = Seam()  # endpoint and key from the environment only
    wid = seam_env.workspace_id
    front = seam_env.device("FRONT DOOR")
    space = seam.spaces.create(name="Unit 1", space_key="unit-1")
    seam.spaces.add_devices(space_id=space.space_id, device_ids=[front["device_id"]])
    assert seam.spaces.get(space_id=space.space_id).device_count == 1

    seam.customers.push_data(
        customer_key="cust-1",
        user_identities=[
            {"user_identity_key": "guest-1", "name": "Guest One", "email_address": "g1@example.com"}
        ],
        reservations=[_reservation()],
    )
    codes = seam.access_codes.list(device_id=front["device_id"])
    assert [c.status for c in codes] == ["setting"]  # asynchronous, as in Seam
    emulator.wait_for_access_codes(wid, front["device_id"], reservation_key="res-1", timeout=10)
    code = seam.access_codes.get(access_code_id=codes[0].access_code_id)
    assert code.status == "set" and code.type == "time_bound"
    assert (code.starts_at, code.ends_at) == ("2031-03-01T15:00:00.000Z", "2031-03-03T11:00:00.000Z")

    # Same reservation_key again with new times: the grant and its code follow.
    seam.customers.push_data(customer_key="cust-1", reservations=[_reservation(ends_at=ENDS_LATER)])
    emulator.wait_for_access_codes(
        wid,
        front["device_id"],
        lambda cs: (
            cs
            if cs and all(c["status"] == "set" and c["ends_at"] == "2031-03-05T11:00:00.000Z" for c in cs)
            else None
        ),
        timeout=10,
    )
    codes = seam.access_codes.list(device_id=front["device_id"])
    assert len(codes) == 1 and codes[0].access_code_id == code.access_code_id
    grant = seam.access_grants.list(reservation_key="res-1")[0]
    assert grant.ends_at == "2031-03-05T11:00:00.000Z"
    assert seam.user_identities.get(user_identity_id=grant.user_identity_id).email_address == "g1@example.com"

    seam.customers.delete_data(customer_keys=["cust-1"], reservation_keys=["res-1"])
    assert seam.access_codes.list(device_id=front["device_id"])[0].status == "removing"
    emulator.wait_for(wid, lambda s: not s.codes(device_id=front["device_id"]), timeout=10)
    assert seam.access_codes.list(device_id=front["device_id"]) == []
    assert seam.access_grants.list() == []

    types = [e.event_type for e in seam.events.list(since="2000-01-01T00:00:00Z")]
    assert types[:4] == [
        "access_grant.created",
        "access_code.created",
        "access_code.set_on_device",
        "access_method.issued",
    ]
    assert types[-4:] == [
        "access_grant.deleted",
        "access_method.deleted",
        "access_code.removed_from_device",
        "access_code.deleted",
    ]
    set_event = seam.events.list(since="2000-01-01T00:00:00Z", event_types=["access_code.set_on_device"])
    assert [e.device_id for e in set_event] == [front["device_id"]] * len(set_event)
    assert (
        set_event[0].code == code.code and set_event[0].connected_account_id == front["connected_account_id"]
    )


def test_push_data_silent_no_ops(emulator, seam_env):
    seam = Seam()
    seam.spaces.create(name="Empty", space_key="empty")
    seam.customers.push_data(customer_key="c", reservations=[_reservation(space_keys=["does-not-exist"])])
    seam.customers.push_data(
        customer_key="c", reservations=[{**_reservation(space_keys=["empty"]), "reservation_key": "res-2"}]
    )
    assert seam.access_grants.list() == []
    state = emulator.state(seam_env.workspace_id)
    assert state.access_codes == () and state.events == ()
    # Adding a lock to the space later issues the code for the waiting reservation, as Seam's automation does.
    space = seam.spaces.get(space_key="empty")
    seam.customers.push_data(
        customer_key="c", reservations=[{**_reservation(space_keys=["empty"]), "reservation_key": "res-2"}]
    )
    seam.spaces.add_devices(space_id=space.space_id, device_ids=[seam_env.device("GARAGE")["device_id"]])
    assert emulator.state(seam_env.workspace_id).access_codes == ()  # the grant was never created: no-op


def test_delete_data_by_user_identity_key(emulator, seam_env):
    seam = Seam()
    devices = [seam_env.device("FRONT DOOR")["device_id"], seam_env.device("BACK DOOR")["device_id"]]
    space = seam.spaces.create(name="House", space_key="house", device_ids=devices)
    assert space.device_count == 2
    seam.customers.push_data(
        customer_key="c",
        guests=[{"guest_key": "guest-9", "name": "Nine"}],
        reservations=[{"reservation_key": "r9", "guest_key": "guest-9", "space_keys": ["house"]}],
    )
    codes = emulator.wait_for(
        seam_env.workspace_id,
        lambda s: len(s.codes(reservation_key="r9", status="set")) == 2 and s.codes(),
        10,
    )
    assert {c["device_id"] for c in codes} == set(devices)
    assert len({c["code"] for c in codes}) == 1  # one PIN for the reservation on every lock
    assert {c["type"] for c in codes} == {"ongoing"}
    seam.customers.delete_data(user_identity_keys=["guest-9"])
    assert seam.access_grants.list() == []
    emulator.wait_for(seam_env.workspace_id, lambda s: not s.access_codes, 10)
    with pytest.raises(SeamHttpApiError) as err:
        seam.user_identities.get(user_identity_key="guest-9")
    assert err.value.status_code == 404


def test_access_grant_path(emulator, seam_env):
    seam = Seam()
    yale = seam.devices.list(device_types=["yale_lock"])
    space = seam.spaces.create(name="Room 12", space_key="room-12", device_ids=[yale[0].device_id])
    grant = seam.access_grants.create(
        user_identity={"full_name": "Hotel Guest", "email_address": "hg@example.com"},
        space_keys=["room-12"],
        device_ids=[yale[1].device_id],
        requested_access_methods=[{"mode": "code", "code": "24680"}],
        starts_at="2031-06-01T14:00:00Z",
        ends_at="2031-06-02T10:00:00Z",
    )
    assert grant.space_ids == [space.space_id]
    methods = seam.access_methods.list(access_grant_id=grant.access_grant_id)
    assert [m.mode for m in methods] == ["code"] and methods[0].is_issued is False
    emulator.wait_for_events(seam_env.workspace_id, "access_method.issued", timeout=10)
    method = seam.access_methods.get(access_method_id=methods[0].access_method_id)
    assert method.is_issued and method.code == "24680" and method.issued_at
    codes = seam.access_codes.list(access_grant_id=grant.access_grant_id)
    assert sorted(c.device_id for c in codes) == sorted(d.device_id for d in yale)
    assert {c.code for c in codes} == {"24680"}

    seam.access_grants.update(access_grant_id=grant.access_grant_id, ends_at="2031-06-03T10:00:00Z")
    assert {c.ends_at for c in seam.access_codes.list(access_grant_id=grant.access_grant_id)} == {
        "2031-06-03T10:00:00.000Z"
    }
    assert seam.access_grants.get(access_grant_id=grant.access_grant_id).ends_at == "2031-06-03T10:00:00.000Z"
    seam.access_grants.delete(access_grant_id=grant.access_grant_id)
    emulator.wait_for(seam_env.workspace_id, lambda s: not s.access_codes, 10)
    assert seam.access_methods.list(device_id=yale[0].device_id) == []


def test_access_code_path(emulator, seam_env):
    seam = Seam()
    device_id = seam_env.device("FRONT DOOR")["device_id"]
    created = seam.access_codes.create(device_id=device_id, name="Dog walker", code="1234")
    assert created.status == "setting" and created.type == "ongoing" and created.is_managed
    emulator.wait_for_access_codes(seam_env.workspace_id, device_id, timeout=10)
    assert seam.access_codes.get(access_code_id=created.access_code_id).status == "set"
    seam.access_codes.update(
        access_code_id=created.access_code_id,
        code="5678",
        starts_at="2031-01-01T00:00:00Z",
        ends_at="2031-01-02T00:00:00Z",
    )
    updated = seam.access_codes.get(access_code_id=created.access_code_id)
    assert (updated.code, updated.type, updated.status) == ("5678", "time_bound", "setting")
    assert seam.access_codes.get(device_id=device_id, code="5678").access_code_id == created.access_code_id
    listed = seam.access_codes.list(access_code_ids=[created.access_code_id])
    assert [c.access_code_id for c in listed] == [created.access_code_id]
    seam.access_codes.delete(access_code_id=created.access_code_id)
    emulator.wait_for(seam_env.workspace_id, lambda s: not s.access_codes, 10)
    with pytest.raises(SeamHttpApiError) as err:
        seam.access_codes.get(access_code_id=created.access_code_id)
    assert (err.value.status_code, err.value.code) == (404, "not_found")
    types = [e["event_type"] for e in emulator.state(seam_env.workspace_id).events]
    # deleted while still being reprogrammed: no second set_on_device
    assert types == [
        "access_code.created",
        "access_code.set_on_device",
        "access_code.changed",
        "access_code.removed_from_device",
        "access_code.deleted",
    ]


def test_action_attempts_complete(emulator, seam_env):
    seam = Seam()
    http = httpx.Client(base_url=emulator.base_url, headers={"authorization": f"Bearer {seam_env.api_key}"})
    body = http.post(
        "/access_codes/create", json={"device_id": seam_env.device("GARAGE")["device_id"]}
    ).json()
    attempt = body["action_attempt"]
    assert (attempt["action_type"], attempt["status"]) == ("CREATE_ACCESS_CODE", "pending")
    emulator.wait_for_access_codes(seam_env.workspace_id, seam_env.device("GARAGE")["device_id"], timeout=10)
    done = seam.action_attempts.get(
        action_attempt_id=attempt["action_attempt_id"], wait_for_action_attempt=False
    )
    assert done.status == "success"


def test_validation_errors(seam_env):
    seam = Seam()
    with pytest.raises(SeamHttpInvalidInputError) as err:
        seam.access_codes.create(device_id="not-a-uuid")
    assert err.value.status_code == 400 and err.value.code == "invalid_input"
    assert err.value.get_validation_error_messages("device_id") == ["Invalid uuid"]
    assert err.value.request_id
    with pytest.raises(SeamHttpInvalidInputError) as err:
        seam.customers.push_data(customer_key="c", reservations=[{"space_keys": ["x"]}])
    with pytest.raises(SeamHttpInvalidInputError):
        seam.access_grants.create(
            user_identity_id="00000000-0000-4000-8000-000000000000",
            requested_access_methods=[{"mode": "laser"}],
        )
    with pytest.raises(SeamHttpInvalidInputError):
        seam.events.list(device_id=seam_env.device("GARAGE")["device_id"])  # the spec: since or between


def test_auth_errors(emulator, seam_env):
    with pytest.raises(SeamHttpUnauthorizedError):
        Seam(api_key="seam_test_wrong_key", endpoint=emulator.base_url).devices.list()
    resp = httpx.get(f"{emulator.base_url}/devices/list")
    assert resp.status_code == 401 and resp.json()["error"]["type"] == "unauthorized"
    assert resp.headers["seam-request-id"]


def test_unknown_route_is_404(emulator, seam_env):
    resp = httpx.post(
        f"{emulator.base_url}/locks/teleport",
        json={},
        headers={"authorization": f"Bearer {seam_env.api_key}"},
    )
    assert resp.status_code == 404 and resp.json()["error"]["type"] == "not_found"
    assert resp.headers["seam-request-id"]


def test_workspaces_are_isolated(emulator):
    a, b = emulator.create_workspace("a"), emulator.create_workspace("b")
    assert a.api_key != b.api_key and a.api_key.startswith("seam_test_")
    sa = Seam(api_key=a.api_key, endpoint=emulator.base_url)
    sb = Seam(api_key=b.api_key, endpoint=emulator.base_url)
    assert not {d.device_id for d in sa.devices.list()} & {d.device_id for d in sb.devices.list()}
    sa.spaces.create(name="A only", space_key="shared-key")
    sb.spaces.create(name="B only", space_key="shared-key")  # the same key in another workspace is fine
    created = sa.access_codes.create(device_id=a.device("FRONT DOOR")["device_id"], code="9999")
    assert [s.name for s in sb.spaces.list()] == ["B only"]
    with pytest.raises(SeamHttpApiError) as err:
        sb.access_codes.get(access_code_id=created.access_code_id)
    assert err.value.status_code == 404
    with pytest.raises(SeamHttpApiError):
        sb.access_codes.create(device_id=a.device("FRONT DOOR")["device_id"])
    assert emulator.state(b.workspace_id).access_codes == ()


def test_webhooks_verified_by_python_verifier(emulator, seam_env, webhook_receiver):
    seam = Seam()
    hook = seam.webhooks.create(url=webhook_receiver.url, event_types=["access_code.*"])
    assert [w.webhook_id for w in seam.webhooks.list()] == [hook.webhook_id]
    device_id = seam_env.device("FRONT DOOR")["device_id"]
    started = time.monotonic()
    seam.access_codes.create(device_id=device_id, code="4321")
    assert time.monotonic() - started < 1.0  # delivery never blocks the request
    wait_until(lambda: len(webhook_receiver.received) >= 2, timeout=10)
    verifier = SeamWebhook(hook.secret)
    events = [verifier.verify(r["body"], r["headers"]) for r in webhook_receiver.received]
    assert [e.event_type for e in events] == ["access_code.created", "access_code.set_on_device"]
    assert events[1].code == "4321" and events[1].device_id == device_id
    headers = webhook_receiver.received[0]["headers"]
    assert headers["svix-signature"].startswith("v1,") and headers["svix-id"]
    with pytest.raises(SeamWebhookVerificationError):
        verifier.verify(webhook_receiver.received[0]["body"] + " ", headers)
    seam.webhooks.delete(webhook_id=hook.webhook_id)
    assert seam.webhooks.list() == []


def test_fault_injection(emulator, seam_env):
    seam = Seam()
    device_id = seam_env.device("FRONT DOOR")["device_id"]
    # One 500 on a GET: the SDK retries and succeeds, as against Seam.
    emulator.inject_fault(route="/access_codes/list", status=500, times=1, workspace_id=seam_env.workspace_id)
    assert seam.access_codes.list(device_id=device_id) == []
    # Always 429 on a POST: the SDK gives up with an API error carrying the status.
    fid = emulator.inject_fault(
        route="access_codes.create", status=429, times=None, workspace_id=seam_env.workspace_id
    )
    for _ in range(2):
        with pytest.raises(SeamHttpApiError) as err:
            seam.access_codes.create(device_id=device_id)
        assert err.value.status_code == 429
    emulator.clear_faults(fid)
    seam.access_codes.create(device_id=device_id)
    # Added latency only.
    emulator.inject_fault(
        route="/devices/list", status=None, latency=0.3, times=1, workspace_id=seam_env.workspace_id
    )
    started = time.monotonic()
    seam.devices.list()
    assert time.monotonic() - started >= 0.3


def test_all_post_form_and_query_strings(emulator, seam_env):
    """Older SDKs POST every route with a JSON body; current ones use GET/DELETE query strings."""
    http = httpx.Client(base_url=emulator.base_url, headers={"authorization": f"Bearer {seam_env.api_key}"})
    front = seam_env.device("FRONT DOOR")["device_id"]
    space = http.post("/spaces/create", json={"name": "P", "space_key": "p"}).json()["space"]
    assert http.post(
        "/spaces/add_devices", json={"space_id": space["space_id"], "device_ids": [front]}
    ).json() == {"ok": True}
    assert http.post(
        "/customers/push_data",
        json={"customer_key": "c", "reservations": [{"reservation_key": "r", "space_keys": ["p"]}]},
    ).json() == {"ok": True}
    listed = http.post("/access_codes/list", json={"device_id": front}).json()
    assert set(listed) == {"access_codes", "pagination", "ok"} and len(listed["access_codes"]) == 1
    got = http.post("/devices/get", json={"device_id": front}).json()["device"]
    assert got["device_type"] == "august_lock" and got["properties"]["name"] == "FRONT DOOR"
    assert http.post("/customers/delete_data", json={"reservation_keys": ["r"]}).json() == {"ok": True}
    assert (
        http.get("/access_codes/list", params={"device_id": front, "_strict": "true"}).json()["access_codes"][
            0
        ]["status"]
        == "removing"
    )
    # query strings: repeated keys for arrays, an empty array as `key=`, numbers coerced
    page = http.get(
        "/devices/list?device_types=august_lock&device_types=yale_lock&limit=2&_strict=true"
    ).json()
    assert len(page["devices"]) == 2 and page["pagination"]["has_next_page"] is True
    rest = http.get("/devices/list", params={"page_cursor": page["pagination"]["next_page_cursor"]}).json()
    assert len(rest["devices"]) == 3
    assert http.get("/devices/list?device_ids=&_strict=true").json()["devices"] == []
    bad = http.get("/devices/list?limit=lots")
    assert bad.status_code == 400 and "limit" in bad.json()["error"]["validation_errors"]
    assert http.request("DELETE", "/customers/delete_data?customer_keys=c&_strict=true").json() == {
        "ok": True
    }
    assert http.get("/customers/push_data").status_code == 405


def test_python_sdk_in_its_own_process(emulator, workspace):
    code = """
import json
from seam import Seam
seam = Seam()
devices = seam.devices.list()
front = next(d for d in devices if d.properties.name == "FRONT DOOR")
space = seam.spaces.create(name="S", space_key="s")
seam.spaces.add_devices(space_id=space.space_id, device_ids=[front.device_id])
seam.customers.push_data(customer_key="c", reservations=[{"reservation_key": "r", "space_keys": ["s"],
    "starts_at": "2031-01-01T00:00:00Z", "ends_at": "2031-01-02T00:00:00Z"}])
codes = seam.access_codes.list(device_id=front.device_id)
print(json.dumps({"n": len(devices), "codes": [c.status for c in codes]}))
"""
    out = run_python(code, emulator, workspace.api_key)
    assert out == {"n": 5, "codes": ["setting"]}
    assert emulator.wait_for_access_codes(
        workspace.workspace_id, workspace.device("FRONT DOOR")["device_id"], reservation_key="r", timeout=10
    )


def test_bookings_units_and_space_membership(emulator, seam_env):
    seam = Seam()
    back, garage = seam_env.device("BACK DOOR")["device_id"], seam_env.device("GARAGE")["device_id"]
    seam.customers.push_data(customer_key="pm", units=[{"unit_key": "u-5", "name": "Unit 5"}])
    unit = seam.spaces.get(space_key="u-5")
    assert unit.name == "Unit 5" and unit.customer_key == "pm"
    seam.spaces.add_devices(space_id=unit.space_id, device_ids=[back])
    seam.customers.push_data(
        customer_key="pm",
        bookings=[
            {
                "booking_key": "bk-1",
                "unit_keys": ["u-5"],
                "starts_at": STARTS,
                "ends_at": ENDS,
                "preferred_code": "8642",
            }
        ],
    )
    emulator.wait_for(
        seam_env.workspace_id, lambda s: s.codes(device_id=back, reservation_key="bk-1", status="set"), 10
    )
    # a lock added to the space later gets the booking's code; a removed one loses it
    seam.spaces.add_devices(space_id=unit.space_id, device_ids=[garage])
    codes = emulator.wait_for(
        seam_env.workspace_id,
        lambda s: len(s.codes(reservation_key="bk-1", status="set")) == 2 and s.codes(),
        10,
    )
    assert {c["code"] for c in codes} == {"8642"}
    seam.spaces.remove_devices(space_id=unit.space_id, device_ids=[back])
    emulator.wait_for(seam_env.workspace_id, lambda s: [c["device_id"] for c in s.codes()] == [garage], 10)
    seam.customers.delete_data(booking_keys=["bk-1"])
    emulator.wait_for(seam_env.workspace_id, lambda s: not s.access_codes, 10)


def test_automation_delay_answers_before_codes_exist():
    from skillassay.seam.emulator.emulator import SeamEmulator

    with SeamEmulator(async_delay=0.1, automation_delay=0.3) as emu:
        ws = emu.create_workspace()
        seam = Seam(api_key=ws.api_key, endpoint=emu.base_url)
        front = ws.device("FRONT DOOR")["device_id"]
        seam.spaces.create(name="S", space_key="s", device_ids=[front])
        seam.customers.push_data(
            customer_key="c", reservations=[{"reservation_key": "r", "space_keys": ["s"]}]
        )
        assert seam.access_codes.list(device_id=front) == []
        emu.wait_for_access_codes(ws.workspace_id, front, reservation_key="r", timeout=10)


def test_concurrent_runs_do_not_collide(emulator):
    """Four runs at once, each with the same keys in its own workspace."""
    from concurrent.futures import ThreadPoolExecutor

    def one_run(n: int) -> tuple[str, list[str]]:
        ws = emulator.create_workspace(f"run-{n}")
        seam = Seam(api_key=ws.api_key, endpoint=emulator.base_url)
        front = ws.device("FRONT DOOR")["device_id"]
        seam.spaces.create(name="Unit", space_key="unit", device_ids=[front])
        seam.customers.push_data(
            customer_key="cust",
            reservations=[
                {"reservation_key": "res", "space_keys": ["unit"], "preferred_code": f"{1000 + n}"}
            ],
        )
        codes = emulator.wait_for_access_codes(ws.workspace_id, front, reservation_key="res", timeout=10)
        return ws.workspace_id, [c["code"] for c in codes]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one_run, range(4)))
    assert [codes for _, codes in results] == [["1000"], ["1001"], ["1002"], ["1003"]]
    for workspace_id, _ in results:
        state = emulator.state(workspace_id)
        assert len(state.access_codes) == 1 and len(state.access_grants) == 1


def test_locks_view_and_unlock(emulator, seam_env):
    seam = Seam()
    locks = seam.locks.list()
    assert len(locks) == 5 and {lock.device_type for lock in locks} == {"august_lock", "yale_lock"}
    front = seam_env.device("FRONT DOOR")["device_id"]
    attempt = seam.locks.unlock_door(device_id=front)  # the SDK polls action_attempts/get until done
    assert attempt.status == "success"
    assert seam.locks.get(device_id=front).properties.locked is False
    assert [e.event_type for e in seam.events.list(since="2000-01-01T00:00:00Z")] == ["lock.unlocked"]


def test_time_bound_code_is_removed_when_it_ends(emulator, seam_env):
    from datetime import datetime, timedelta

    seam = Seam()
    device_id = seam_env.device("BACK DOOR")["device_id"]
    now = datetime.now(UTC)
    seam.access_codes.create(
        device_id=device_id,
        starts_at=now.isoformat(),
        ends_at=(now + timedelta(seconds=0.6)).isoformat(),
    )
    emulator.wait_for_events(seam_env.workspace_id, "access_code.set_on_device", timeout=10)
    emulator.wait_for(seam_env.workspace_id, lambda s: not s.access_codes, timeout=10)
    types = emulator.state(seam_env.workspace_id).event_types()
    assert types[-2:] == ["access_code.removed_from_device", "access_code.deleted"]
