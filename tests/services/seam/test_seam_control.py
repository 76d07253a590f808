"""The harness side: /_emulator over HTTP, wait_for, the CLI, and the default (realistic) delay."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import httpx
import pytest
from seam import Seam
from seam_helpers import admin_headers

from skillassay.seam.emulator.emulator import SeamEmulator


def test_info_and_workspaces_over_http(emulator):
    admin = admin_headers(emulator)
    info = httpx.get(f"{emulator.base_url}/_emulator/info", headers=admin)
    assert info.json()["spec_version"] == emulator.spec_version == "1.977.0"
    assert info.headers["seam-request-id"]
    created = httpx.post(
        f"{emulator.base_url}/_emulator/workspaces", json={"name": "remote"}, headers=admin
    ).json()["workspace"]
    assert created["api_key"].startswith("seam_test_") and len(created["devices"]) == 5
    names = {d["properties"]["name"] for d in created["devices"]}
    assert {"FRONT DOOR", "BACK DOOR", "GARAGE"} <= names
    august = [d for d in created["devices"] if d["device_type"] == "august_lock"]
    assert all("access_code" in d["capabilities_supported"] for d in august)
    seam = Seam(api_key=created["api_key"], endpoint=emulator.base_url)
    seam.spaces.create(name="R", space_key="r")
    state = httpx.get(
        f"{emulator.base_url}/_emulator/workspaces/{created['workspace_id']}/state", headers=admin
    ).json()["state"]
    assert [s["space_key"] for s in state["spaces"]] == ["r"]
    missing = httpx.get(f"{emulator.base_url}/_emulator/workspaces/nope/state", headers=admin)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "workspace_not_found"
    deleted = httpx.delete(
        f"{emulator.base_url}/_emulator/workspaces/{created['workspace_id']}", headers=admin
    )
    assert deleted.json() == {"ok": True}
    assert seam_gone(emulator, created["api_key"])


def seam_gone(emulator, api_key: str) -> bool:
    """A deleted workspace's key no longer opens anything."""
    return (
        httpx.get(
            f"{emulator.base_url}/devices/list", headers={"authorization": f"Bearer {api_key}"}
        ).status_code
        == 401
    )


def test_wait_over_http(emulator, workspace):
    seam = Seam(api_key=workspace.api_key, endpoint=emulator.base_url)
    device_id = workspace.device("GARAGE")["device_id"]
    seam.spaces.create(name="G", space_key="g", device_ids=[device_id])
    seam.customers.push_data(customer_key="c", reservations=[{"reservation_key": "rw", "space_keys": ["g"]}])
    resp = httpx.post(
        f"{emulator.base_url}/_emulator/wait",
        headers=admin_headers(emulator),
        timeout=30,
        json={
            "workspace_id": workspace.workspace_id,
            "timeout": 10,
            "condition": {
                "resource": "access_codes",
                "where": {"device_id": device_id, "reservation_key": "rw", "status": "set"},
            },
        },
    )
    assert resp.status_code == 200 and resp.json()["matched"][0]["status"] == "set"
    timed_out = httpx.post(
        f"{emulator.base_url}/_emulator/wait",
        headers=admin_headers(emulator),
        timeout=30,
        json={
            "workspace_id": workspace.workspace_id,
            "timeout": 0.3,
            "condition": {"resource": "access_codes", "where": {"reservation_key": "never"}},
        },
    )
    assert timed_out.status_code == 408
    bad = httpx.post(
        f"{emulator.base_url}/_emulator/wait",
        headers=admin_headers(emulator),
        json={"workspace_id": workspace.workspace_id, "condition": {"resource": "nothing"}},
    )
    assert bad.status_code == 400


def test_faults_over_http(emulator, workspace):
    admin = admin_headers(emulator)
    injected = httpx.post(
        f"{emulator.base_url}/_emulator/faults",
        json={"route": "/devices/list", "status": 503, "times": 1, "workspace_id": workspace.workspace_id},
        headers=admin,
    )
    assert injected.status_code == 200 and injected.json()["fault_id"]
    headers = {"authorization": f"Bearer {workspace.api_key}"}
    first = httpx.post(f"{emulator.base_url}/devices/list", json={}, headers=headers)
    assert first.status_code == 503 and first.json()["error"]["type"] == "service_unavailable"
    assert httpx.post(f"{emulator.base_url}/devices/list", json={}, headers=headers).status_code == 200
    httpx.post(
        f"{emulator.base_url}/_emulator/faults",
        json={"route": "*", "status": 500, "times": None, "workspace_id": workspace.workspace_id},
        headers=admin,
    )
    listed = httpx.get(f"{emulator.base_url}/_emulator/faults", headers=admin).json()["faults"]
    assert [(f["route"], f["workspace_id"]) for f in listed] == [("*", workspace.workspace_id)]
    cleared = httpx.delete(
        f"{emulator.base_url}/_emulator/faults",
        params={"workspace_id": workspace.workspace_id},
        headers=admin,
    )
    assert cleared.json() == {"ok": True}
    assert httpx.post(f"{emulator.base_url}/devices/list", json={}, headers=headers).status_code == 200


def test_wait_for_wakes_on_change_not_by_polling(emulator, workspace):
    seam = Seam(api_key=workspace.api_key, endpoint=emulator.base_url)
    device_id = workspace.device("FRONT DOOR")["device_id"]
    result: dict = {}

    def waiter() -> None:
        result["codes"] = emulator.wait_for_access_codes(workspace.workspace_id, device_id, timeout=10)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.05)
    seam.access_codes.create(device_id=device_id, code="2468")
    thread.join(10)
    assert result["codes"][0]["code"] == "2468" and result["codes"][0]["status"] == "set"
    snap = emulator.state(workspace.workspace_id)
    with pytest.raises(TypeError):
        snap.access_codes[0]["status"] = "unset"  # read-only
    with pytest.raises(TimeoutError):
        emulator.wait_for(workspace.workspace_id, lambda s: False, timeout=0.2)


def test_default_delay_makes_a_validator_wait():
    with SeamEmulator() as emu:  # default async_delay: about a second, like a real lock round trip
        assert emu.async_delay == 1.0
        ws = emu.create_workspace("default-delay")
        seam = Seam(api_key=ws.api_key, endpoint=emu.base_url)
        device_id = ws.device("FRONT DOOR")["device_id"]
        started = time.monotonic()
        created = seam.access_codes.create(device_id=device_id)
        time.sleep(0.5)
        assert seam.access_codes.get(access_code_id=created.access_code_id).status == "setting"
        emu.wait_for_access_codes(ws.workspace_id, device_id, timeout=10)
        assert 0.9 <= time.monotonic() - started < 3


def test_cli_prints_endpoint_and_key(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillassay", "seam-emulator", "--port", "0", "--workspace", "cli-run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines: list[str] = []
        assert proc.stdout is not None
        while not any("Ctrl-C" in line for line in lines):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            lines.append(line)
        endpoint = next(line.split("=", 1)[1].strip() for line in lines if "SEAM_ENDPOINT=" in line)
        key = next(line.split("=", 1)[1].strip() for line in lines if "SEAM_API_KEY=" in line)
        assert key.startswith("seam_test_")
        devices = Seam(api_key=key, endpoint=endpoint).devices.list()
        assert len(devices) == 5
        # the operator (the harness here) gets the admin credential; without it /_emulator does not exist
        admin = next(line.split("=", 1)[1].strip() for line in lines if "SEAM_EMULATOR_ADMIN=" in line)
        assert admin != key and len(admin) >= 32
        assert httpx.get(f"{endpoint}/_emulator/info").status_code == 404
        assert (
            httpx.get(f"{endpoint}/_emulator/info", headers={"authorization": f"Bearer {admin}"}).status_code
            == 200
        )
    finally:
        proc.terminate()
        proc.wait(10)
