"""The live-Seam code path, run for real against the emulator's HTTP API with a workspace key (no network
here).

Checks the request sequence (devices/list, spaces/create, access_codes/list polling, customers/delete_data,
spaces/delete), run-scoped keys, and that clean-up leaves another run's data alone."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from skillassay.errors import SkillassayError
from skillassay.seam.behaviour import validate
from skillassay.seam.loader import load_fixture

FIXTURES = Path(__file__).resolve().parents[3] / "evals" / "fixtures"


def test_live_needs_a_key(tiny, monkeypatch):
    monkeypatch.delenv("SEAM_API_KEY", raising=False)
    d = tiny("good")
    with pytest.raises(SkillassayError, match="SEAM_API_KEY"):
        validate(d.app_dir, d, "live0", seam="live")


def _other_runs_data(emu, ws):
    """A space and a code that belong to another run in the same (shared, as in Seam's sandbox) workspace."""
    with httpx.Client(
        base_url=emu.base_url, headers={"authorization": f"Bearer {ws.api_key}"}, trust_env=False
    ) as c:
        lock = next(d for d in ws.devices if "access_code" in d.get("capabilities_supported", []))
        c.post(
            "/spaces/create",
            json={"name": "other", "space_key": "unit-202", "device_ids": [lock["device_id"]]},
        ).raise_for_status()
        code = c.post(
            "/access_codes/create", json={"device_id": lock["device_id"], "name": "other run", "code": "4321"}
        ).json()["access_code"]
    return code["access_code_id"]


@pytest.mark.slow
def test_live_path_against_the_emulator(emulator, monkeypatch, tmp_path):
    fx = FIXTURES / "flask-py"
    d = load_fixture(fx)
    ws = emulator.create_workspace(name="pretend-sandbox")
    other_code = _other_runs_data(emulator, ws)
    monkeypatch.setenv("SEAM_API_KEY", ws.api_key)
    monkeypatch.setenv("SEAM_ENDPOINT", emulator.base_url)
    start = len(emulator.requests(ws.workspace_id))
    r = validate(d.golden_dir, d, "live1", seam="live", logs_dir=tmp_path / "logs")
    assert r.plan_json()["total"] == 100, {n: c.reason for n, c in r.checks.items()}
    assert r.seam["mode"] == "live"
    # the fixture's own keys (its payload names seeded units); the customer key is not run-scoped, so clean-up
    # deletes this run's reservation, not the customer
    assert r.seam["spaces"][0]["space_key"] == "unit-101" and r.seam["spaces"][0]["created"] is True
    assert r.seam["customer_key"] == "prop-1"
    rid = r.checks["create"].seam["reservation_id"]
    # the harness's own requests, in order (the app's requests are interleaved; it sends no list calls)
    ours = [(q.method, q.path) for q in emulator.requests(ws.workspace_id)[start:]]
    routes = [p for _, p in ours]
    assert routes[0] == "/devices/list" and routes[1] == "/spaces/create"
    assert "/access_codes/list" in routes
    assert routes[-2:] == ["/customers/delete_data", "/spaces/delete"] or routes[-1] == "/spaces/delete"
    cleanup = {c["route"]: c for c in r.seam["cleanup"]}
    assert cleanup["customers/delete_data"]["ok"] and cleanup["customers/delete_data"]["body"] == {
        "reservation_keys": [rid]
    }
    # clean-up removed this run's data only
    state = emulator.state(ws.workspace_id)
    keys = {s.get("space_key") for s in state.spaces}
    assert "unit-101" not in keys and "unit-202" in keys
    assert any(c["access_code_id"] == other_code for c in state.access_codes)


def test_live_run_scoped_keys_and_a_space_that_already_exists(tiny, emulator, monkeypatch, tmp_path):
    ws = emulator.create_workspace(name="pretend-sandbox-2")
    monkeypatch.setenv("SEAM_API_KEY", ws.api_key)
    monkeypatch.setenv("SEAM_ENDPOINT", emulator.base_url)
    # 1. a fixture whose payload carries the run id: everything this run makes is keyed by it
    payload = {
        "guest": "g",
        "propertyId": "eval_prop_{{RUN_ID}}",
        "unitId": "eval_unit_{{RUN_ID}}",
        "checkIn": "{{STARTS_AT}}",
        "checkOut": "{{ENDS_AT}}",
    }
    # a path that uses spaces (an access-codes eval creates none in live mode: test_sandbox_live_fake.py)
    d = tiny(
        "good",
        expected_api_path="reservation_automations",
        test_endpoints={
            "create": {
                "method": "POST",
                "path": "/api/reservations",
                "payload": payload,
                "response_id_path": "reservation.id",
            }
        },
    )
    r = validate(d.app_dir, d, "live2", seam="live", logs_dir=tmp_path / "a")
    assert r.total == 100, {n: c.reason for n, c in r.checks.items()}
    assert r.seam["spaces"][0]["space_key"] == "eval_unit_live2"
    cleanup = {c["route"]: c for c in r.seam["cleanup"]}
    assert cleanup["customers/delete_data"]["body"] == {"customer_keys": ["eval_prop_live2"]}
    assert "eval_unit_live2" not in {s.get("space_key") for s in emulator.state(ws.workspace_id).spaces}
    # 2. the space key exists already (another run's, or a leftover): used, never deleted
    with httpx.Client(
        base_url=emulator.base_url, headers={"authorization": f"Bearer {ws.api_key}"}, trust_env=False
    ) as c:
        c.post("/spaces/create", json={"name": "theirs", "space_key": "unit-1"}).raise_for_status()
    d = tiny("good", expected_api_path="reservation_automations")
    r = validate(d.app_dir, d, "live3", seam="live", logs_dir=tmp_path / "b")
    assert r.total == 100, {n: c.reason for n, c in r.checks.items()}
    assert r.seam["spaces"][0]["created"] is False
    assert "unit-1" in {s.get("space_key") for s in emulator.state(ws.workspace_id).spaces}


def test_a_rejected_key_is_an_infrastructure_error_not_a_score(tiny, emulator, monkeypatch, tmp_path):
    from skillassay.errors import InfrastructureError

    monkeypatch.setenv("SEAM_API_KEY", "seam_test_not_a_real_key")
    monkeypatch.setenv("SEAM_ENDPOINT", emulator.base_url)
    d = tiny("good")
    with pytest.raises(
        InfrastructureError, match=r"Seam \(live\) bootstrap failed: Seam devices/list: HTTP 401"
    ):
        validate(d.app_dir, d, "live4", seam="live", logs_dir=tmp_path / "l")
