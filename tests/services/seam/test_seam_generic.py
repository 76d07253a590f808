"""The generic engine (``seam/emulator/generic.py``): every public route answers, schema-valid and with state.

One emulator for the module (the shared fixture records every answer, and each test's successful answers are
checked against the spec's response schemas after it); requests go over HTTP with the workspace's key.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from response_schemas import Answer

from skillassay.seam.emulator.coverage import exercise, table
from skillassay.seam.emulator.generic import approximate_routes, public_routes
from skillassay.seam.emulator.handlers import HANDLERS


@pytest.fixture
def seam(emulator, workspace) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=emulator.base_url, headers={"authorization": f"Bearer {workspace.api_key}"}, timeout=10
    ) as client:
        yield client


def call(client: httpx.Client, path: str, **params: Any) -> dict[str, Any]:
    response = client.post(path, json=params)
    assert response.status_code == 200, f"{path}: {response.status_code} {response.text[:500]}"
    return response.json()


def error_of(client: httpx.Client, path: str, **params: Any) -> tuple[int, str]:
    response = client.post(path, json=params)
    assert response.status_code != 200, f"{path} answered 200: {response.text[:300]}"
    return response.status_code, response.json()["error"]["type"]


def settled(client: httpx.Client, action_attempt_id: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        attempt = call(client, "/action_attempts/get", action_attempt_id=action_attempt_id)["action_attempt"]
        if attempt["status"] != "pending" or time.monotonic() > deadline:
            return attempt
        time.sleep(0.05)


def event_types(client: httpx.Client) -> list[str]:
    events = call(client, "/events/list", since="2000-01-01T00:00:00.000Z")["events"]
    return [e["event_type"] for e in events]


def lock_id(client: httpx.Client) -> str:
    return call(client, "/devices/list")["devices"][0]["device_id"]


def test_every_public_route_answers_valid(emulator, seam, response_schemas):
    routes = public_routes(emulator.spec)
    assert len(routes) >= 226  # the pinned spec's public API; it only grows

    def send(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        response = seam.post(path, json=body)
        return response.status_code, response.content

    answers = exercise(emulator.spec, send, HANDLERS)
    assert sorted(a.path for a in answers) == routes
    failed = [f"{a.path}: {a.status} {a.error_type}" for a in answers if a.status != 200]
    assert not failed, "routes that did not answer 200:\n" + "\n".join(failed)
    recorded = [Answer("POST", a.path, a.status, a.body) for a in answers]
    assert not response_schemas.violations(recorded)
    # the shared check (after the test) sees the same answers: every route's 200 schema was applied
    assert response_schemas.checked_routes(recorded) >= set(routes) - {"/workspaces/update"}
    rows = table(answers, lambda a: not response_schemas.violations([Answer("POST", a.path, 200, a.body)]))
    assert sum(r["routes"] for r in rows) == len(routes)
    assert sum(r.get("valid_200", 0) for r in rows) == len(routes)
    assert sum(r.get("generic", 0) for r in rows) == len(approximate_routes(emulator.spec))


def test_noise_threshold_round_trip_with_a_settling_attempt(seam):
    device_id = lock_id(seam)
    created = call(
        seam,
        "/noise_sensors/noise_thresholds/create",
        device_id=device_id,
        name="Quiet hours",
        starts_daily_at="22:00:00",
        ends_daily_at="07:00:00",
        noise_threshold_decibels=60,
    )
    threshold = created["noise_threshold"]
    assert threshold["name"] == "Quiet hours" and threshold["noise_threshold_decibels"] == 60
    assert threshold["device_id"] == device_id
    attempt = created["action_attempt"]
    assert attempt["action_type"] == "CREATE_NOISE_THRESHOLD" and attempt["status"] == "pending"
    assert settled(seam, attempt["action_attempt_id"])["status"] == "success"

    tid = threshold["noise_threshold_id"]
    got = call(seam, "/noise_sensors/noise_thresholds/get", noise_threshold_id=tid)["noise_threshold"]
    assert got == threshold
    listed = call(seam, "/noise_sensors/noise_thresholds/list", device_id=device_id)["noise_thresholds"]
    assert [t["noise_threshold_id"] for t in listed] == [tid]
    other = call(seam, "/noise_sensors/noise_thresholds/list", device_id=lock_id_other(seam, device_id))
    assert other["noise_thresholds"] == []

    updated = call(
        seam,
        "/noise_sensors/noise_thresholds/update",
        noise_threshold_id=tid,
        device_id=device_id,
        name="Late quiet hours",
    )
    assert settled(seam, updated["action_attempt"]["action_attempt_id"])["status"] == "success"
    got = call(seam, "/noise_sensors/noise_thresholds/get", noise_threshold_id=tid)["noise_threshold"]
    assert got["name"] == "Late quiet hours" and got["noise_threshold_decibels"] == 60

    call(seam, "/noise_sensors/noise_thresholds/delete", noise_threshold_id=tid, device_id=device_id)
    assert error_of(seam, "/noise_sensors/noise_thresholds/get", noise_threshold_id=tid) == (
        404,
        "noise_threshold_not_found",
    )
    assert call(seam, "/noise_sensors/noise_thresholds/list", device_id=device_id)["noise_thresholds"] == []


def lock_id_other(client: httpx.Client, not_this: str) -> str:
    devices = call(client, "/devices/list")["devices"]
    return next(d["device_id"] for d in devices if d["device_id"] != not_this)


def test_thermostat_schedule_round_trip(seam):
    device_id = lock_id(seam)
    schedule = call(
        seam,
        "/thermostats/schedules/create",
        device_id=device_id,
        climate_preset_key="eco",
        starts_at="2026-01-01T10:00:00.000Z",
        ends_at="2026-01-01T12:00:00.000Z",
        name="Morning",
    )["thermostat_schedule"]
    sid = schedule["thermostat_schedule_id"]
    assert schedule["climate_preset_key"] == "eco" and schedule["starts_at"] == "2026-01-01T10:00:00.000Z"
    listed = call(seam, "/thermostats/schedules/list", device_id=device_id)["thermostat_schedules"]
    assert sid in [s["thermostat_schedule_id"] for s in listed]
    call(seam, "/thermostats/schedules/update", thermostat_schedule_id=sid, name="Brunch")
    got = call(seam, "/thermostats/schedules/get", thermostat_schedule_id=sid)["thermostat_schedule"]
    assert got["name"] == "Brunch"
    call(seam, "/thermostats/schedules/delete", thermostat_schedule_id=sid)
    assert error_of(seam, "/thermostats/schedules/get", thermostat_schedule_id=sid) == (
        404,
        "thermostat_schedule_not_found",
    )


def test_acs_user_round_trip_emits_events(seam):
    system = call(seam, "/acs/systems/list")["acs_systems"][0]  # the sandbox's seeded access system
    user = call(
        seam,
        "/acs/users/create",
        acs_system_id=system["acs_system_id"],
        full_name="Jane Guest",
        email_address="jane@example.com",
    )["acs_user"]
    uid = user["acs_user_id"]
    assert user["acs_system_id"] == system["acs_system_id"] and user["full_name"] == "Jane Guest"
    listed = call(seam, "/acs/users/list", acs_system_id=system["acs_system_id"])["acs_users"]
    assert uid in [u["acs_user_id"] for u in listed]
    call(seam, "/acs/users/update", acs_user_id=uid, full_name="Jane Doe")
    assert call(seam, "/acs/users/get", acs_user_id=uid)["acs_user"]["full_name"] == "Jane Doe"
    call(seam, "/acs/users/delete", acs_user_id=uid)
    assert error_of(seam, "/acs/users/get", acs_user_id=uid) == (404, "acs_user_not_found")
    types = event_types(seam)
    assert "acs_user.created" in types and "acs_user.deleted" in types
    assert types.index("acs_user.created") < types.index("acs_user.deleted")


def test_a_union_request_matching_two_branches_is_accepted_as_zod_does(seam):
    # acs/credentials/list's oneOf has an empty branch beside {acs_user_id}: JSON Schema's oneOf would refuse
    system = call(seam, "/acs/systems/list")["acs_systems"][0]
    user = call(seam, "/acs/users/create", acs_system_id=system["acs_system_id"], full_name="Ann")["acs_user"]
    mine = call(
        seam,
        "/acs/credentials/create",
        acs_user_id=user["acs_user_id"],
        acs_system_id=system["acs_system_id"],
        access_method="code",
        code="4321",
    )["acs_credential"]
    listed = call(seam, "/acs/credentials/list", acs_user_id=user["acs_user_id"])["acs_credentials"]
    assert [c["acs_credential_id"] for c in listed] == [mine["acs_credential_id"]]
    # the rest of the schema still applies
    assert error_of(seam, "/acs/credentials/list", acs_user_id=user["acs_user_id"], limit="many") == (
        400,
        "invalid_input",
    )


def test_client_session_round_trip(seam):
    session = call(seam, "/client_sessions/create", user_identifier_key="guest-17")["client_session"]
    cid = session["client_session_id"]
    assert session["user_identifier_key"] == "guest-17"
    got = call(seam, "/client_sessions/get", client_session_id=cid)["client_session"]
    assert got["client_session_id"] == cid
    assert cid in [s["client_session_id"] for s in call(seam, "/client_sessions/list")["client_sessions"]]
    call(seam, "/client_sessions/delete", client_session_id=cid)
    assert error_of(seam, "/client_sessions/get", client_session_id=cid) == (404, "client_session_not_found")
    assert "client_session.deleted" in event_types(seam)


def test_an_action_on_a_device_settles_and_unknown_ids_are_not_found(seam):
    attempt = call(seam, "/thermostats/cool", device_id=lock_id(seam))["action_attempt"]
    assert attempt["action_type"] == "SET_HVAC_MODE" and attempt["status"] == "pending"
    done = settled(seam, attempt["action_attempt_id"])
    assert done["status"] == "success" and done["error"] is None
    missing = "00000000-0000-4000-8000-000000000000"
    assert error_of(seam, "/thermostats/cool", device_id=missing) == (404, "device_not_found")
    assert error_of(seam, "/acs/users/suspend", acs_user_id=missing) == (404, "acs_user_not_found")
    # the spec's request validation still applies first
    assert error_of(seam, "/acs/users/get", acs_user_id=5) == (400, "invalid_input")


def test_generic_updates_change_fields_never_ids(seam):
    device = call(seam, "/devices/list")["devices"][0]
    call(seam, "/devices/update", device_id=device["device_id"], custom_metadata={"unit": "4B"})
    got = call(seam, "/devices/get", device_id=device["device_id"])["device"]
    assert got["custom_metadata"] == {"unit": "4B"}
    assert got["device_id"] == device["device_id"]
    session = call(seam, "/client_sessions/create", user_identifier_key="g-1")["client_session"]
    other = "00000000-0000-4000-8000-000000000001"
    call(
        seam,
        "/client_sessions/grant_access",
        client_session_id=session["client_session_id"],
        user_identifier_key="g-2",
        workspace_id=other,
    )
    got = call(seam, "/client_sessions/get", client_session_id=session["client_session_id"])["client_session"]
    assert got["client_session_id"] == session["client_session_id"]
    assert got["workspace_id"] == session["workspace_id"] != other  # an undeclared parameter changes nothing
    call(seam, "/acs/users/update", acs_user_id=acs_user(seam)["acs_user_id"], workspace_id=other)
    assert all(u["workspace_id"] != other for u in call(seam, "/acs/users/list")["acs_users"])


def acs_user(client: httpx.Client) -> dict[str, Any]:
    system = call(client, "/acs/systems/list")["acs_systems"][0]
    return call(client, "/acs/users/create", acs_system_id=system["acs_system_id"], full_name="Al")[
        "acs_user"
    ]


def test_workspaces_do_not_share_generic_records(emulator, seam):
    session = call(seam, "/client_sessions/create", user_identifier_key="mine")["client_session"]
    other = emulator.create_workspace(name="other")
    with httpx.Client(
        base_url=emulator.base_url, headers={"authorization": f"Bearer {other.api_key}"}, timeout=10
    ) as theirs:
        assert error_of(theirs, "/client_sessions/get", client_session_id=session["client_session_id"]) == (
            404,
            "client_session_not_found",
        )
        assert call(theirs, "/client_sessions/list")["client_sessions"] == []


def test_hand_written_handlers_win_and_only_generic_routes_are_approximate(emulator, seam, monkeypatch):
    approximate = approximate_routes(emulator.spec)
    assert "/access_codes/create" not in approximate and "/thermostats/cool" in approximate
    assert approximate == set(public_routes(emulator.spec)) - set(HANDLERS)
    assert emulator.routes.is_approximate("/thermostats/cool")
    assert not emulator.routes.is_approximate("/access_codes/create")

    # a handler registered after the emulator started (another module's hand-written family) takes over
    handled: list[str] = []

    def hand_written_cool(ctx, params):
        handled.append(params["device_id"])
        return {"action_attempt": dict(ctx.engine.action_attempt(ctx.ws, "SET_HVAC_MODE"))}

    monkeypatch.setitem(HANDLERS, "/thermostats/cool", hand_written_cool)
    call(seam, "/thermostats/cool", device_id=lock_id(seam))
    assert handled == [lock_id(seam)]
    assert "/thermostats/cool" not in approximate_routes(emulator.spec)


def test_routes_outside_the_public_api_still_answer_not_implemented(emulator, seam):
    private = next(p for p in emulator.spec.routes if p.startswith("/seam/"))
    assert error_of(seam, private) == (501, "not_implemented")
    assert error_of(seam, "/no_such/route") == (404, "not_found")


def test_deleting_a_hand_written_device_takes_what_belongs_to_it(seam):
    device_id = lock_id(seam)
    space = call(seam, "/spaces/create", name="Unit 9", device_ids=[device_id])["space"]
    code = call(seam, "/access_codes/create", device_id=device_id, code="2468")["access_code"]
    call(seam, "/devices/delete", device_id=device_id)
    assert error_of(seam, "/devices/get", device_id=device_id) == (404, "device_not_found")
    assert device_id not in [d["device_id"] for d in call(seam, "/devices/list")["devices"]]
    assert error_of(seam, "/access_codes/get", access_code_id=code["access_code_id"]) == (
        404,
        "access_code_not_found",
    )
    assert call(seam, "/access_codes/list", device_id=device_id)["access_codes"] == []
    assert call(seam, "/devices/list", space_id=space["space_id"])["devices"] == []
    assert "device.deleted" in event_types(seam)


def test_unmanaged_routes_never_show_managed_records(seam):
    managed = call(seam, "/user_identities/create", full_name="Managed Guest")["user_identity"]
    unmanaged = call(seam, "/user_identities/unmanaged/list")["user_identities"]
    assert managed["user_identity_id"] not in [u["user_identity_id"] for u in unmanaged]
    assert unmanaged  # the sandbox's own unmanaged identity
    assert error_of(seam, "/user_identities/unmanaged/get", user_identity_id=managed["user_identity_id"]) == (
        404,
        "user_identity_not_found",
    )
    got = call(seam, "/user_identities/unmanaged/get", user_identity_id=unmanaged[0]["user_identity_id"])
    assert got["user_identity"] == unmanaged[0]
