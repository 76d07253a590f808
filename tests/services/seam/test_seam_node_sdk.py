"""The npm ``seam`` SDK (and ``@seamapi/webhook``) in real node processes against the emulator."""

from __future__ import annotations

import json

from seam_helpers import admin_headers, run_node

from skillassay.seam.emulator.emulator import wait_until


def test_reservation_lifecycle_node(emulator, workspace):
    # the test plays the harness here: it holds the admin credential for /_emulator/wait
    extra = {
        "WORKSPACE_ID": workspace.workspace_id,
        "EMULATOR_ADMIN": admin_headers(emulator)["authorization"],
    }
    out = run_node("lifecycle.mjs", emulator, workspace.api_key, extra)
    assert sorted(set(out["device_types"])) == ["august_lock", "yale_lock"]
    code = out["set_code"]
    assert code["status"] == "set" and code["type"] == "time_bound"
    assert code["starts_at"] == "2031-05-01T15:00:00.000Z" and code["ends_at"] == "2031-05-04T11:00:00.000Z"
    assert [c["ends_at"] for c in out["after_update"]] == ["2031-05-06T11:00:00.000Z"]
    assert out["grant"]["reservation_key"] == "res-js"
    assert out["grant"]["ends_at"] == "2031-05-06T11:00:00.000Z"
    assert out["after_delete"] == []
    types = out["event_types"]
    for expected in (
        "access_grant.created",
        "access_code.created",
        "access_code.set_on_device",
        "access_method.issued",
        "access_grant.deleted",
        "access_code.removed_from_device",
        "access_code.deleted",
    ):
        assert expected in types
    assert (
        types.index("access_grant.created")
        < types.index("access_code.created")
        < types.index("access_code.set_on_device")
        < types.index("access_method.issued")
    )
    # The SDK used the current HTTP methods: GET/DELETE with query strings, PUT for add routes.
    methods = {(r.method, r.path) for r in emulator.requests(workspace.workspace_id)}
    assert ("GET", "/access_codes/list") in methods
    assert ("PUT", "/spaces/add_devices") in methods
    assert ("DELETE", "/customers/delete_data") in methods
    assert ("POST", "/customers/push_data") in methods


def test_grant_code_and_error_paths_node(emulator, workspace):
    out = run_node("paths.mjs", emulator, workspace.api_key)
    assert out["yale_count"] == 2
    assert out["grant"]["requested_access_methods"][0]["mode"] == "code"
    assert out["methods"][0]["is_issued"] is True and out["methods"][0]["mode"] == "code"
    assert len(out["grant_codes"]) == 1
    assert out["grant_codes"][0]["code"] == out["methods"][0]["code"]
    assert out["grant_codes_updated"][0]["ends_at"] == "2031-01-03T00:00:00.000Z"
    assert out["created"]["status"] == "setting" and out["created"]["code"] == "482915"
    assert out["updated"]["name"] == "Cleaner (new)" and out["updated"]["type"] == "time_bound"
    assert out["removing"] == "removing"
    assert out["invalid"]["is_invalid_input"] is True and out["invalid"]["status"] == 400
    assert out["invalid"]["validation"] == ["Invalid uuid"]
    assert out["invalid"]["request_id"]
    assert out["not_found"] == {"name": "SeamHttpApiError", "code": "not_found", "status": 404}
    assert out["unauthorized"]["is_unauthorized"] is True and out["unauthorized"]["status"] == 401


def test_webhooks_verified_by_npm_verifier(emulator, workspace, webhook_receiver, tmp_path):
    from seam import Seam

    seam = Seam(api_key=workspace.api_key, endpoint=emulator.base_url)
    hook = seam.webhooks.create(
        url=webhook_receiver.url, event_types=["access_code.created", "access_code.set_on_device"]
    )
    assert hook.secret.startswith("whsec_")
    device = workspace.device("BACK DOOR")
    seam.access_codes.create(device_id=device["device_id"], name="hook", code="1357")
    wait_until(lambda: len(webhook_receiver.received) >= 2, timeout=10)
    deliveries = webhook_receiver.received[:2]
    file = tmp_path / "deliveries.json"
    file.write_text(json.dumps({"secret": hook.secret, "deliveries": deliveries}))
    out = run_node("verify_webhooks.mjs", emulator, workspace.api_key, {"DELIVERIES_FILE": str(file)})
    assert out["verified"] == ["access_code.created", "access_code.set_on_device"]
    assert out["rejected"] == 1


def test_route_families_node(emulator, workspace):
    """create_multiple, a connect webview, devices/update, client sessions and ACS through the npm SDK."""
    out = run_node("families.mjs", emulator, workspace.api_key)
    assert (
        len({c["code"] for c in out["multi"]}) == 1 and len({c["common_code_key"] for c in out["multi"]}) == 1
    )
    assert out["multi_ends"] == ["2031-05-06T11:00:00.000Z"] * 2
    assert out["webview_created"] == "pending" and out["webview_devices"] == ["nuki_lock", "nuki_lock"]
    assert out["renamed"] == "Front (renamed)" and out["session_devices"] == 2
    assert out["credentials"] == ["246810"] and out["reach"] == ["Main Entrance"] and out["users_left"] == 0
    assert out["accounts"] == ["august", "salto_ks", "yale"]
    methods = {(r.method, r.path) for r in emulator.requests(workspace.workspace_id)}
    assert ("GET", "/acs/credentials/list") in methods  # the oneOf request schema, from a query string
    assert ("DELETE", "/connected_accounts/delete") in methods
