"""The control routes belong to the harness: an app holding a run's key (all it is given) cannot reach them,
cannot see or touch another workspace, and cannot make another run fail. Each test is an attack from the
app's side."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from seam import Seam
from seam.exceptions import SeamHttpApiError
from seam_helpers import WebhookReceiver, admin_headers

from skillassay.seam.emulator.emulator import SeamEmulator

CONTROL_ROUTES = [
    ("GET", "/_emulator/info", None),
    ("GET", "/_emulator/workspaces", None),
    ("POST", "/_emulator/workspaces", {"name": "stolen"}),
    ("GET", "/_emulator/workspaces/{victim}/state", None),
    (
        "POST",
        "/_emulator/wait",
        {"workspace_id": "{victim}", "timeout": 0.1, "condition": {"resource": "devices"}},
    ),
    ("POST", "/_emulator/faults", {"route": "*", "status": 500, "times": None, "workspace_id": "{victim}"}),
    ("POST", "/_emulator/faults", {"route": "*", "status": 500, "times": None}),
    ("GET", "/_emulator/faults", None),
    ("DELETE", "/_emulator/faults", None),
    ("GET", "/_emulator/webhook_deliveries", None),
]


def _fill(value, victim: str):
    if isinstance(value, str):
        return value.replace("{victim}", victim)
    if isinstance(value, dict):
        return {k: _fill(v, victim) for k, v in value.items()}
    return value


@pytest.fixture
def victim(emulator):
    return emulator.create_workspace("victim")


@pytest.fixture
def attacker(emulator):
    return emulator.create_workspace("attacker")


@pytest.mark.parametrize(("method", "path", "body"), CONTROL_ROUTES)
@pytest.mark.parametrize(
    "credential", ["none", "run key", "wrong admin token", "admin token as api key header"]
)
def test_app_cannot_reach_control_routes(emulator, victim, attacker, method, path, body, credential):
    headers = {
        "none": dict,
        "run key": lambda: {"authorization": f"Bearer {attacker.api_key}"},
        "wrong admin token": lambda: {"authorization": "Bearer " + "x" * 43},
        "admin token as api key header": lambda: {"seam-api-key": emulator.admin_token},
    }[credential]()
    before = emulator.state(victim.workspace_id)
    resp = httpx.request(
        method,
        emulator.base_url + _fill(path, victim.workspace_id),
        json=_fill(body, victim.workspace_id),
        headers=headers,
    )
    # Exactly what Seam answers for a route it does not have: nothing tells the app the routes exist.
    assert resp.status_code == 404, resp.text[:300]
    assert resp.json()["error"]["type"] == "not_found"
    assert victim.api_key not in resp.text and attacker.api_key not in resp.text
    assert emulator.admin_token not in resp.text
    # and nothing changed: no fault, no new workspace, the victim still works
    assert emulator.faults_of(victim.workspace_id) == []
    assert all(w.name != "stolen" for w in emulator.workspaces())
    seam = Seam(api_key=victim.api_key, endpoint=emulator.base_url)
    assert len(seam.devices.list()) == 5
    assert emulator.state(victim.workspace_id).version == before.version


def test_admin_token_is_per_start_and_never_a_workspace_key():
    with SeamEmulator(async_delay=0.1) as one, SeamEmulator(async_delay=0.1) as two:
        assert one.admin_token != two.admin_token and len(one.admin_token) >= 32
        ws = one.create_workspace("w")
        assert ws.api_key != one.admin_token
        # the token is no Seam key: the API refuses it
        assert httpx.get(f"{one.base_url}/devices/list", headers=admin_headers(one)).status_code == 401
        # one emulator's token opens nothing on another
        assert httpx.get(f"{two.base_url}/_emulator/info", headers=admin_headers(one)).status_code == 404
        assert httpx.get(f"{one.base_url}/_emulator/info", headers=admin_headers(one)).status_code == 200


def test_the_harness_lists_workspaces_without_keys(emulator, victim):
    listed = httpx.get(f"{emulator.base_url}/_emulator/workspaces", headers=admin_headers(emulator)).json()
    assert victim.workspace_id in {w["workspace_id"] for w in listed["workspaces"]}
    assert victim.api_key not in str(listed) and all("api_key" not in w for w in listed["workspaces"])
    created = httpx.post(
        f"{emulator.base_url}/_emulator/workspaces",
        json={"name": "made-by-harness"},
        headers=admin_headers(emulator),
    ).json()["workspace"]
    assert created["api_key"].startswith("seam_test_")  # the harness that creates a workspace gets its key


def test_faults_are_per_workspace(emulator, victim, attacker):
    # The harness can fail one run's Seam calls; every other workspace is untouched.
    emulator.inject_fault(workspace_id=attacker.workspace_id, route="*", status=500, times=None)
    a = Seam(api_key=attacker.api_key, endpoint=emulator.base_url)
    v = Seam(api_key=victim.api_key, endpoint=emulator.base_url)
    with pytest.raises(SeamHttpApiError) as err:
        a.spaces.create(name="x")
    assert err.value.status_code == 500
    assert len(v.devices.list()) == 5
    v.spaces.create(name="fine")
    # a fault with no workspace is refused, in-process and over HTTP
    with pytest.raises(TypeError):
        emulator.inject_fault(route="*", status=500)  # type: ignore[call-arg]
    resp = httpx.post(
        f"{emulator.base_url}/_emulator/faults",
        json={"route": "*", "status": 500},
        headers=admin_headers(emulator),
    )
    assert resp.status_code == 400 and "workspace_id" in resp.json()["error"]["validation_errors"]
    resp = httpx.post(
        f"{emulator.base_url}/_emulator/faults",
        json={"route": "*", "status": 500, "workspace_id": "nope"},
        headers=admin_headers(emulator),
    )
    assert resp.status_code == 404
    # clearing one workspace's faults leaves the others'
    emulator.inject_fault(workspace_id=victim.workspace_id, route="/spaces/list", status=503, times=None)
    emulator.clear_faults(workspace_id=attacker.workspace_id)
    a.spaces.create(name="now fine")
    assert [f.route for f in emulator.faults_of(victim.workspace_id)] == ["/spaces/list"]
    emulator.clear_faults(workspace_id=victim.workspace_id)


def test_another_workspaces_ids_are_404(emulator, victim, attacker):
    """Every route that takes an id, called with the attacker's key and the victim's ids: 404 as Seam answers
    for an id it does not know, and the victim's data unchanged."""
    v = Seam(api_key=victim.api_key, endpoint=emulator.base_url)
    front = victim.device("FRONT DOOR")["device_id"]
    space = v.spaces.create(name="Victim unit", space_key="victim-unit", device_ids=[front])
    code = v.access_codes.create(device_id=front, name="victim code", code="2580")
    ui = v.user_identities.create(user_identity_key="victim-guest", full_name="Victim Guest")
    grant = v.access_grants.create(
        user_identity_id=ui.user_identity_id,
        space_ids=[space.space_id],
        requested_access_methods=[{"mode": "code"}],
    )
    emulator.wait_for(
        victim.workspace_id, lambda s: all(m["is_issued"] for m in s.access_methods), timeout=10
    )
    method = v.access_methods.list(access_grant_id=grant.access_grant_id)[0]
    hook = v.webhooks.create(url="http://127.0.0.1:9/hook", event_types=["lock.locked"])
    attempt = v.locks.unlock_door(device_id=front, wait_for_action_attempt=False)
    event = v.events.list(since="2000-01-01T00:00:00Z")[0]
    account = front_account = victim.device("FRONT DOOR")["connected_account_id"]
    before = emulator.state(victim.workspace_id).to_json()

    http = httpx.Client(base_url=emulator.base_url, headers={"authorization": f"Bearer {attacker.api_key}"})
    attacks = [
        ("/devices/get", {"device_id": front}),
        ("/locks/get", {"device_id": front}),
        ("/locks/lock_door", {"device_id": front}),
        ("/locks/unlock_door", {"device_id": front}),
        ("/connected_accounts/get", {"connected_account_id": account}),
        ("/spaces/get", {"space_id": space.space_id}),
        ("/spaces/update", {"space_id": space.space_id, "name": "mine"}),
        ("/spaces/add_devices", {"space_id": space.space_id, "device_ids": [front]}),
        ("/spaces/remove_devices", {"space_id": space.space_id, "device_ids": [front]}),
        ("/spaces/delete", {"space_id": space.space_id}),
        ("/spaces/create", {"name": "steal", "device_ids": [front]}),
        ("/access_codes/get", {"access_code_id": code.access_code_id}),
        ("/access_codes/update", {"access_code_id": code.access_code_id, "name": "mine"}),
        ("/access_codes/delete", {"access_code_id": code.access_code_id}),
        ("/access_codes/create", {"device_id": front, "code": "1111"}),
        ("/access_codes/generate_code", {"device_id": front}),
        ("/access_codes/unmanaged/list", {"device_id": front}),
        ("/user_identities/get", {"user_identity_id": ui.user_identity_id}),
        ("/user_identities/delete", {"user_identity_id": ui.user_identity_id}),
        ("/access_grants/get", {"access_grant_id": grant.access_grant_id}),
        (
            "/access_grants/update",
            {"access_grant_id": grant.access_grant_id, "ends_at": "2040-01-01T00:00:00Z"},
        ),
        ("/access_grants/delete", {"access_grant_id": grant.access_grant_id}),
        (
            "/access_grants/create",
            {"user_identity_id": ui.user_identity_id, "requested_access_methods": [{"mode": "code"}]},
        ),
        (
            "/access_grants/create",
            {
                "user_identity": {"full_name": "x"},
                "space_ids": [space.space_id],
                "requested_access_methods": [{"mode": "code"}],
            },
        ),
        (
            "/access_grants/create",
            {
                "user_identity": {"full_name": "x"},
                "device_ids": [front],
                "requested_access_methods": [{"mode": "code"}],
            },
        ),
        ("/access_methods/get", {"access_method_id": method.access_method_id}),
        ("/access_methods/list", {"access_grant_id": grant.access_grant_id}),
        ("/webhooks/get", {"webhook_id": hook.webhook_id}),
        ("/webhooks/update", {"webhook_id": hook.webhook_id, "event_types": ["*"]}),
        ("/webhooks/delete", {"webhook_id": hook.webhook_id}),
        ("/action_attempts/get", {"action_attempt_id": attempt.action_attempt_id}),
        ("/events/get", {"event_id": event.event_id}),
    ]
    for route, body in attacks:
        resp = http.post(route, json=body)
        assert resp.status_code == 404, (route, resp.status_code, resp.text)
        assert resp.json()["error"]["type"].endswith("not_found"), (route, resp.text)

    # list routes filtered by the victim's ids answer nothing of the victim's
    lists = [
        ("/access_codes/list", {"device_id": front}, "access_codes"),
        ("/access_codes/list", {"access_code_ids": [code.access_code_id]}, "access_codes"),
        ("/devices/list", {"device_ids": [front]}, "devices"),
        ("/access_grants/list", {"user_identity_id": ui.user_identity_id}, "access_grants"),
        ("/access_methods/list", {"device_id": front}, "access_methods"),
        ("/events/list", {"since": "2000-01-01T00:00:00Z", "device_id": front}, "events"),
        ("/action_attempts/list", {"action_attempt_ids": [attempt.action_attempt_id]}, "action_attempts"),
        ("/spaces/list", {"space_key": "victim-unit"}, "spaces"),
        ("/user_identities/list", {"user_identity_ids": [ui.user_identity_id]}, "user_identities"),
    ]
    for route, body, key in lists:
        resp = http.post(route, json=body)
        assert resp.status_code in (200, 404), (route, resp.text)
        if resp.status_code == 200:
            assert resp.json()[key] == [], (route, resp.text)
        for secret in (front, code.access_code_id, ui.user_identity_id, grant.access_grant_id, "2580"):
            assert secret not in resp.text, (route, secret)
    http.close()
    after = emulator.state(victim.workspace_id).to_json()
    assert after["access_codes"] == before["access_codes"] and after["spaces"] == before["spaces"]
    assert after["access_grants"] == before["access_grants"] and after["webhooks"] == before["webhooks"]
    assert front_account


def test_an_app_flooding_its_workspace_does_not_hide_another_runs_requests(emulator, victim, attacker):
    """The request log the sandbox grader reads is per workspace: a flood in one never pushes another's
    out.
    """
    v = Seam(api_key=victim.api_key, endpoint=emulator.base_url)
    v.spaces.list()
    # a fault makes the flood cheap to send (answered before any work); every request is still logged
    emulator.inject_fault(workspace_id=attacker.workspace_id, route="*", status=503, times=None)

    def flood(n: int) -> None:
        with httpx.Client(
            base_url=emulator.base_url, headers={"authorization": f"Bearer {attacker.api_key}"}
        ) as c:
            for _ in range(n):
                c.post("/workspaces/get", json={})

    threads = [threading.Thread(target=flood, args=(525,)) for _ in range(4)]  # 2100: more than any log keeps
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    emulator.clear_faults(workspace_id=attacker.workspace_id)
    assert [(r.method, r.path) for r in emulator.requests(victim.workspace_id)] == [("GET", "/spaces/list")]
    assert len(emulator.requests(attacker.workspace_id)) <= 2000


def test_a_hanging_webhook_receiver_delays_only_its_own_workspace(
    emulator, victim, attacker, webhook_receiver
):
    """The attacker's webhook points at a listener that never answers; the victim's deliveries still arrive
    at once.
    """
    import socket

    from skillassay.seam.emulator.emulator import wait_until

    black_hole = socket.socket()
    black_hole.bind(("127.0.0.1", 0))
    black_hole.listen(64)  # connections are queued, never accepted: every delivery waits for its timeout
    try:
        a = Seam(api_key=attacker.api_key, endpoint=emulator.base_url)
        a.webhooks.create(url=f"http://127.0.0.1:{black_hole.getsockname()[1]}/hook", event_types=["*"])
        for name in ("FRONT DOOR", "BACK DOOR", "GARAGE"):
            # events queue up for the attacker
            a.access_codes.create(device_id=attacker.device(name)["device_id"])
        v = Seam(api_key=victim.api_key, endpoint=emulator.base_url)
        v.webhooks.create(url=webhook_receiver.url, event_types=["access_code.created"])
        started = time.monotonic()
        v.access_codes.create(device_id=victim.device("FRONT DOOR")["device_id"])
        wait_until(lambda: webhook_receiver.received, timeout=4)  # one attacker delivery alone takes 5 s
        assert time.monotonic() - started < 4
    finally:
        black_hole.close()


def test_webhooks_reach_only_what_the_harness_allows(emulator, webhook_receiver):
    """The emulator posts from the harness's process, so an app could use a webhook to reach any listener
    (another run's app, say). The sandbox grader's workspace delivers nowhere until the app's own address
    is allowed, then only there; refused deliveries are recorded, never sent."""
    from skillassay.seam.behaviour.session import EmulatorSession
    from skillassay.seam.emulator.emulator import wait_until

    other_run = WebhookReceiver()  # a listener the app has no business reaching
    session = EmulatorSession(emulator, "hooks")
    try:
        seam = Seam(api_key=session.api_key, endpoint=emulator.base_url)
        seam.webhooks.create(url=other_run.url, event_types=["access_code.created"])
        seam.webhooks.create(url=webhook_receiver.url, event_types=["access_code.created"])
        front = session.ws.device("FRONT DOOR")["device_id"]
        seam.access_codes.create(device_id=front, code="1234")  # before the app's address is known: nowhere
        app_url = webhook_receiver.url.rsplit("/hooks", 1)[0]
        session.allow_webhooks_to(app_url)
        seam.access_codes.create(device_id=front, code="5678")
        wait_until(lambda: webhook_receiver.received, timeout=5)
        time.sleep(0.3)
        assert len(webhook_receiver.received) == 1 and other_run.received == []
        records = emulator.webhook_deliveries_of(session.workspace_id)
        refused = [r for r in records if r.attempts == 0]
        assert len(refused) == 3 and all(r.status is None and "not delivered" in r.error for r in refused)
        with pytest.raises(ValueError):
            emulator.limit_webhooks(session.workspace_id, ["file:///etc/passwd"])
    finally:
        other_run.close()
        session.cleanup()
