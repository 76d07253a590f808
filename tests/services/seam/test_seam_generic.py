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


# What the coverage walk's requests meet on hand-written routes that refuse them (never a generic route):
# the emulator's ACS system has no unmanaged users, credentials or access groups, so their gets are 404; the
# walk's credential is no cloud_key one, and only a cloud_key credential unlocks an entrance.
REFUSED_BY_FAMILIES = {
    "/acs/users/unmanaged/get": (404, "acs_user_not_found"),
    "/acs/credentials/unmanaged/get": (404, "acs_credential_not_found"),
    "/acs/access_groups/unmanaged/get": (404, "acs_access_group_not_found"),
    "/acs/entrances/unlock": (400, "invalid_input"),
}


def test_every_public_route_answers_valid(emulator, seam, response_schemas):
    routes = public_routes(emulator.spec)
    assert len(routes) >= 226  # the pinned spec's public API; it only grows

    def send(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        response = seam.post(path, json=body)
        return response.status_code, response.content

    answers = exercise(emulator.spec, send, HANDLERS)
    assert sorted(a.path for a in answers) == routes
    approximate = approximate_routes(emulator.spec)
    # the generic engine answers every request built from the spec; a hand-written handler may refuse one
    # (its own semantics), but never with a 5xx or 501
    failed = [
        f"{a.path}: {a.status} {a.error_type}" for a in answers if a.path in approximate and a.status != 200
    ]
    assert not failed, "generic routes that did not answer 200:\n" + "\n".join(failed)
    broken = [f"{a.path}: {a.status}" for a in answers if a.status >= 500]
    assert not broken, broken
    recorded = [Answer("POST", a.path, a.status, a.body) for a in answers]
    assert not response_schemas.violations(recorded)
    # the hand-written routes that refuse the walk's request by their own semantics, each for a reason
    refused = {a.path: (a.status, a.error_type) for a in answers if a.status != 200}
    assert refused == REFUSED_BY_FAMILIES
    # the shared check (after the test) sees the same answers: every other route's 200 schema was applied
    assert response_schemas.checked_routes(recorded) >= set(routes) - {"/workspaces/update"} - set(refused)
    rows = table(answers, lambda a: not response_schemas.violations([Answer("POST", a.path, 200, a.body)]))
    assert sum(r["routes"] for r in rows) == len(routes)
    assert sum(r.get("valid_200", 0) for r in rows) == sum(1 for a in answers if a.status == 200)
    assert sum(r.get("generic", 0) for r in rows) == len(approximate)


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


def test_phone_and_enrollment_automation_round_trips_emit_events(seam):
    guest = call(seam, "/user_identities/create", full_name="Phone Guest")["user_identity"]
    uid = guest["user_identity_id"]
    phone = call(seam, "/phones/simulate/create_sandbox_phone", user_identity_id=uid)["phone"]
    pid = phone["device_id"]
    assert call(seam, "/phones/get", device_id=pid)["phone"] == phone
    assert pid in [p["device_id"] for p in call(seam, "/phones/list")["phones"]]
    call(seam, "/phones/deactivate", device_id=pid)
    assert error_of(seam, "/phones/get", device_id=pid) == (404, "phone_not_found")

    manager = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"  # a credential manager's access system
    launched = call(
        seam,
        "/user_identities/enrollment_automations/launch",
        user_identity_id=uid,
        credential_manager_acs_system_id=manager,
    )["enrollment_automation"]
    eid = launched["enrollment_automation_id"]
    assert launched["user_identity_id"] == uid
    listed = call(seam, "/user_identities/enrollment_automations/list", user_identity_id=uid)
    assert [e["enrollment_automation_id"] for e in listed["enrollment_automations"]] == [eid]
    call(seam, "/user_identities/enrollment_automations/delete", enrollment_automation_id=eid)
    assert error_of(seam, "/user_identities/enrollment_automations/get", enrollment_automation_id=eid) == (
        404,
        "enrollment_automation_not_found",
    )
    types = event_types(seam)
    assert "phone.deactivated" in types and "enrollment_automation.deleted" in types


def test_a_union_request_matching_two_branches_is_accepted_as_zod_does(emulator):
    # acs/credentials/list's oneOf has an empty branch beside {acs_user_id}: JSON Schema's oneOf refuses a
    # request matching both, zod's union (Seam's validator) takes it
    route = emulator.spec.routes["/acs/credentials/list"]
    user = "9b7c3f0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
    assert route.validate({"acs_user_id": user}) == []
    assert route.validate({"acs_user_id": user, "acs_system_id": user}) == []
    assert route.validate({"acs_user_id": user, "limit": "many"}) != []  # the rest of the schema applies


def test_customization_profile_round_trip(seam):
    profile = call(seam, "/workspaces/customization_profiles/create", name="Brand", primary_color="#112233")
    profile = profile["customization_profile"]
    cid = profile["customization_profile_id"]
    assert profile["name"] == "Brand" and profile["primary_color"] == "#112233"
    got = call(seam, "/workspaces/customization_profiles/get", customization_profile_id=cid)
    assert got["customization_profile"] == profile
    listed = call(seam, "/workspaces/customization_profiles/list")["customization_profiles"]
    assert cid in [p["customization_profile_id"] for p in listed]
    call(seam, "/workspaces/customization_profiles/update", customization_profile_id=cid, name="Rebrand")
    got = call(seam, "/workspaces/customization_profiles/get", customization_profile_id=cid)
    assert got["customization_profile"]["name"] == "Rebrand"
    assert got["customization_profile"]["primary_color"] == "#112233"


def test_an_action_on_a_device_settles_and_unknown_ids_are_not_found(seam):
    attempt = call(seam, "/thermostats/cool", device_id=lock_id(seam))["action_attempt"]
    assert attempt["action_type"] == "SET_HVAC_MODE" and attempt["status"] == "pending"
    done = settled(seam, attempt["action_attempt_id"])
    assert done["status"] == "success" and done["error"] is None
    missing = "00000000-0000-4000-8000-000000000000"
    assert error_of(seam, "/thermostats/cool", device_id=missing) == (404, "device_not_found")
    assert error_of(seam, "/thermostats/schedules/get", thermostat_schedule_id=missing) == (
        404,
        "thermostat_schedule_not_found",
    )
    # a hand-written record a create names must exist, as in Seam
    assert error_of(
        seam,
        "/noise_sensors/noise_thresholds/create",
        device_id=missing,
        starts_daily_at="22:00:00",
        ends_daily_at="07:00:00",
    ) == (404, "device_not_found")
    # the spec's request validation still applies first
    assert error_of(seam, "/thermostats/schedules/get", thermostat_schedule_id=5) == (400, "invalid_input")


def test_generic_updates_change_fields_never_ids(seam):
    device = call(seam, "/devices/list")["devices"][0]
    call(seam, "/devices/update", device_id=device["device_id"], custom_metadata={"unit": "4B"})
    got = call(seam, "/devices/get", device_id=device["device_id"])["device"]
    assert got["custom_metadata"] == {"unit": "4B"}
    assert got["device_id"] == device["device_id"]
    profile = call(seam, "/workspaces/customization_profiles/create", name="P")["customization_profile"]
    pid = profile["customization_profile_id"]
    other = "00000000-0000-4000-8000-000000000001"
    # update declares neither workspace_id nor created_at: sent anyway, they change nothing
    call(
        seam,
        "/workspaces/customization_profiles/update",
        customization_profile_id=pid,
        workspace_id=other,
        created_at="2000-01-01T00:00:00.000Z",
    )
    got = call(seam, "/workspaces/customization_profiles/get", customization_profile_id=pid)
    assert got["customization_profile"] == profile


def test_workspaces_do_not_share_generic_records(emulator, seam):
    profile = call(seam, "/workspaces/customization_profiles/create", name="Mine")["customization_profile"]
    pid = profile["customization_profile_id"]
    other = emulator.create_workspace(name="other")
    with httpx.Client(
        base_url=emulator.base_url, headers={"authorization": f"Bearer {other.api_key}"}, timeout=10
    ) as theirs:
        assert error_of(theirs, "/workspaces/customization_profiles/get", customization_profile_id=pid) == (
            404,
            "customization_profile_not_found",
        )
        assert call(theirs, "/workspaces/customization_profiles/list")["customization_profiles"] == []


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
        "not_found",
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


def test_generic_acs_records_belong_to_the_hand_written_system(seam):
    """The generic engine seeds no ACS system of its own: its encoders and credential pools belong to the
    system the families seed, and its actions on a system find that one."""
    system = call(seam, "/acs/systems/list")["acs_systems"][0]
    system_id = system["acs_system_id"]
    encoders = call(seam, "/acs/encoders/list", acs_system_ids=[system_id])["acs_encoders"]
    assert encoders, "the sandbox has an encoder on its ACS system"
    encoder = encoders[0]
    assert (encoder["acs_system_id"], encoder["connected_account_id"]) == (
        system_id,
        system["connected_account_id"],
    )
    assert call(seam, "/acs/encoders/get", acs_encoder_id=encoder["acs_encoder_id"])["acs_encoder"] == encoder
    pools = call(seam, "/acs/credential_pools/list", acs_system_id=system_id)["acs_credential_pools"]
    assert [p["acs_system_id"] for p in pools] == [system_id]
    call(seam, "/acs/systems/report_devices", acs_system_id=system_id, acs_encoders=[], acs_entrances=[])
    assert error_of(seam, "/acs/systems/report_devices", acs_system_id=lock_id(seam)) == (
        404,
        "acs_system_not_found",
    )
    # no phantom system: a generic list of ACS systems holds none the families do not know
    identity = call(seam, "/user_identities/create", full_name="Acs Owner")["user_identity"]
    listed = call(seam, "/user_identities/list_acs_systems", user_identity_id=identity["user_identity_id"])
    known = {s["acs_system_id"] for s in call(seam, "/acs/systems/list")["acs_systems"]}
    assert {s["acs_system_id"] for s in listed["acs_systems"]} <= known
