"""The emulator under abuse: huge, deep, non-finite and ill-typed requests get Seam-shaped 4xx answers, and
one client's expensive request never stalls another's."""

from __future__ import annotations

import gc
import json
import socket
import threading
import time
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seam import Seam
from seam_helpers import admin_headers

from skillassay.seam.emulator import app as emulator_app
from skillassay.seam.emulator.handlers import HANDLERS


def _key(workspace) -> dict[str, str]:
    return {"authorization": f"Bearer {workspace.api_key}", "content-type": "application/json"}


def _seam_error(resp: httpx.Response, status: int, error_type: str | None = None) -> dict:
    assert resp.status_code == status, resp.text[:500]
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.headers["seam-request-id"]
    error = resp.json()["error"]
    assert isinstance(error["message"], str) and error["message"]
    if error_type is not None:
        assert error["type"] == error_type, error
    return error


def test_body_over_the_limit_is_413_before_it_is_read(emulator, workspace):
    body = json.dumps({"search": "x" * 5_000_000})  # the default limit is 1 MiB
    resp = httpx.post(f"{emulator.base_url}/devices/list", content=body, headers=_key(workspace), timeout=30)
    _seam_error(resp, 413, "payload_too_large")

    # Without a Content-Length (chunked), the limit holds while streaming.
    def chunks():
        for _ in range(40):  # 2.5 MB
            yield b" " * 65536

    resp = httpx.post(
        f"{emulator.base_url}/devices/list", content=chunks(), headers=_key(workspace), timeout=30
    )
    _seam_error(resp, 413, "payload_too_large")
    # The connection pool stays usable afterwards.
    assert httpx.get(f"{emulator.base_url}/devices/list", headers=_key(workspace)).status_code == 200


def test_deeply_nested_json_is_400(emulator, workspace):
    for depth in (100, 100_000):
        body = "[" * depth + "]" * depth
        resp = httpx.post(
            f"{emulator.base_url}/devices/list",
            content=json.dumps({"device_ids": "PLACEHOLDER"}).replace('"PLACEHOLDER"', body),
            headers=_key(workspace),
            timeout=30,
        )
        error = _seam_error(resp, 400, "invalid_input")
        assert "deep" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        '{"limit": 1e999}',
        '{"limit": -1e999}',
        '{"limit": NaN}',
        '{"limit": Infinity}',
        '{"limit": 1' + "0" * 5000 + "}",
    ],
)
def test_non_finite_or_huge_numbers_are_400(emulator, workspace, body):
    resp = httpx.post(f"{emulator.base_url}/devices/list", content=body, headers=_key(workspace))
    _seam_error(resp, 400, "invalid_input")


@pytest.mark.parametrize("value", ["1e999", "-inf", "nan", "1" + "0" * 5000])
def test_non_finite_numbers_in_a_query_string_are_400(emulator, workspace, value):
    resp = httpx.get(f"{emulator.base_url}/devices/list", params={"limit": value}, headers=_key(workspace))
    error = _seam_error(resp, 400, "invalid_input")
    assert error["validation_errors"]["limit"]["_errors"]


def test_a_huge_invalid_body_answers_a_bounded_error_quickly(emulator, workspace):
    ids = ["not-a-uuid"] * 70_000  # about 0.9 MB: under the body limit
    started = time.monotonic()
    resp = httpx.post(
        f"{emulator.base_url}/devices/list", json={"device_ids": ids}, headers=_key(workspace), timeout=120
    )
    elapsed = time.monotonic() - started
    error = _seam_error(resp, 400, "invalid_input")
    reported = [k for k in error["validation_errors"]["device_ids"] if k != "_errors"]
    assert 1 <= len(reported) <= 20, len(reported)  # the first errors, not 70,000 of them
    assert len(resp.content) < 20_000
    assert elapsed < 20, elapsed  # generous: the point is seconds, not a minute


def test_one_slow_request_does_not_block_other_workspaces(emulator, monkeypatch):
    """A handler that takes long in one workspace (a huge push, a slow validation) must not hold up any other
    workspace's requests: other clients get answers while it runs."""
    slow_ws, other_ws = emulator.create_workspace("slow"), emulator.create_workspace("other")
    entered, release = threading.Event(), threading.Event()
    original = HANDLERS["/devices/list"]

    def slow_devices_list(ctx, params):
        if ctx.ws.workspace_id == slow_ws.workspace_id:
            entered.set()
            release.wait(20)
        return original(ctx, params)

    monkeypatch.setitem(HANDLERS, "/devices/list", slow_devices_list)
    slow = threading.Thread(
        target=lambda: httpx.post(
            f"{emulator.base_url}/devices/list", json={}, headers=_key(slow_ws), timeout=30
        )
    )
    slow.start()
    try:
        assert entered.wait(10)
        other = Seam(api_key=other_ws.api_key, endpoint=emulator.base_url)
        started = time.monotonic()
        for _ in range(5):
            assert len(other.devices.list()) == 5
        # same workspace, other route: the lock is per workspace, the event loop never waits on it
        assert (
            httpx.post(
                f"{emulator.base_url}/_emulator/faults",
                json={"workspace_id": other_ws.workspace_id, "route": "*", "status": None, "times": 1},
                headers=admin_headers(emulator),
                timeout=5,
            ).status_code
            == 200
        )
        assert time.monotonic() - started < 5
    finally:
        release.set()
        slow.join(30)
        emulator.clear_faults()


def _burn_cpu(seconds: float) -> None:
    """Spend ``seconds`` of this thread's CPU (not wall time: a sleep costs the server nothing)."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_request_slow_only_in_wall_time_keeps_its_route_on_the_event_loop(emulator, monkeypatch):
    """What sends a route to the threads is what a request costs the server (CPU), not its wall time: on a
    loaded machine a cheap request's wall time takes in other processes' turns, and one such stall must not
    send the route to the threads for good."""
    ws = emulator.create_workspace("stalled")
    threads: list[str] = []
    stalls = iter([0.0, 0.2, 0.0, 0.0])
    original = HANDLERS["/devices/list"]

    def stalled_devices_list(ctx, params):
        threads.append(threading.current_thread().name)
        time.sleep(next(stalls))  # the thread off the CPU, as when the machine runs other work
        return original(ctx, params)

    monkeypatch.setitem(HANDLERS, "/devices/list", stalled_devices_list)
    with httpx.Client(headers=_key(ws), timeout=10) as client:
        for _ in range(4):
            assert client.post(f"{emulator.base_url}/devices/list", json={}).status_code == 200
    assert [name == "seam-emulator-http" for name in threads] == [False, True, True, True], threads


def test_a_full_collection_during_a_request_keeps_its_route_on_the_event_loop(emulator, monkeypatch):
    """A full collection of the collector costs what the whole heap holds, whichever request allocated the
    object that set it off: one during a cheap request must not send the route to the threads for good (it
    did, on a long run: a 40 ms collection, then every request of the route through the threads). A request
    that itself burns the CPU still does (the test below)."""
    ws = emulator.create_workspace("collected")
    heap = [[n] for n in range(300_000)]  # a full collection of these: well over the limit
    monkeypatch.setattr(emulator_app, "INLINE_MAX_SECONDS", 0.002)
    threads: list[str] = []
    collects = iter([False, True, False, False])
    original = HANDLERS["/devices/list"]
    spent: list[float] = []

    def collecting_devices_list(ctx, params):
        threads.append(threading.current_thread().name)
        if next(collects):
            started = time.thread_time()
            gc.collect()
            spent.append(time.thread_time() - started)
        return original(ctx, params)

    monkeypatch.setitem(HANDLERS, "/devices/list", collecting_devices_list)
    with httpx.Client(headers=_key(ws), timeout=10) as client:
        for _ in range(4):
            assert client.post(f"{emulator.base_url}/devices/list", json={}).status_code == 200
    assert spent[0] > 0.002, "the collection was not over the limit: the test proves nothing"
    assert [name == "seam-emulator-http" for name in threads] == [False, True, True, True], threads
    assert len(heap) == 300_000


def test_only_requests_always_quick_so_far_run_on_the_event_loop(emulator, monkeypatch):
    """Cheap requests skip the thread hop, but never a route's first request in a workspace, a big body, or
    any request of a route once it was slow there: an app that alternates cheap and costly requests of one
    route must not get its costly ones onto the event loop every other workspace waits on."""
    ws = emulator.create_workspace("inline")
    threads: list[str] = []
    # quick is CPU time under the limit: a limit well above a cheap call's, a slow call far over
    monkeypatch.setattr(emulator_app, "INLINE_MAX_SECONDS", 0.05)
    burns = iter([0.0, 0.0, 0.2, 0.0, 0.0, 0.0])
    original = HANDLERS["/devices/list"]

    def recording_devices_list(ctx, params):
        threads.append(threading.current_thread().name)
        _burn_cpu(next(burns))
        return original(ctx, params)

    monkeypatch.setitem(HANDLERS, "/devices/list", recording_devices_list)
    url = f"{emulator.base_url}/devices/list"
    with httpx.Client(headers=_key(ws), timeout=10) as client:
        for _ in range(5):
            assert client.post(url, json={}).status_code == 200
        big = {"device_ids": [str(uuid.uuid4()) for _ in range(300)]}  # over the inline body size
        assert client.post(url, json=big).status_code == 200
    on_loop = [name == "seam-emulator-http" for name in threads]
    # first: a thread; quick so far: the loop (the third turns slow there); slow once: threads for good
    assert on_loop == [False, True, True, False, False, False], threads


def test_slow_upload_does_not_block_other_clients(emulator, workspace):
    """A client that sends half a body and stalls (slowloris) holds only its own connection."""
    host, port = emulator.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /devices/list HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            + f"authorization: Bearer {workspace.api_key}\r\ncontent-length: 100\r\n\r\n".encode()
            + b'{"limit": '
        )
        time.sleep(0.2)
        started = time.monotonic()
        assert (
            httpx.get(f"{emulator.base_url}/devices/list", headers=_key(workspace), timeout=5).status_code
            == 200
        )
        assert time.monotonic() - started < 2


# -- control routes: typed bodies, 400 in Seam's shape -------------------------------------------------------
@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/_emulator/faults", {"route": "*", "latency": "abc"}, "latency"),
        ("/_emulator/faults", {"route": "*", "times": "x"}, "times"),
        ("/_emulator/faults", {"route": "*", "status": "boom"}, "status"),
        ("/_emulator/faults", {"route": 5}, "route"),
        ("/_emulator/faults", {"route": "*", "latency": 1e308 * 10}, "1e999"),  # refused while parsing
        ("/_emulator/workspaces", {"name": ["x"]}, "name"),
        ("/_emulator/wait", {"timeout": "soon", "condition": {}}, "timeout"),
        ("/_emulator/wait", {"timeout": [], "condition": {}}, "timeout"),
    ],
)
def test_control_routes_validate_their_bodies(emulator, workspace, route, body, field):
    if route in ("/_emulator/faults", "/_emulator/wait"):
        body = {"workspace_id": workspace.workspace_id, **body}
    raw = json.dumps(body, allow_nan=True).replace("Infinity", "1e999")
    resp = httpx.post(
        f"{emulator.base_url}{route}",
        content=raw,
        headers={**admin_headers(emulator), "content-type": "application/json"},
    )
    error = _seam_error(resp, 400, "invalid_input")
    assert field in error["validation_errors"] or field in error["message"], error


@pytest.mark.parametrize("raw", ["[]", '"text"', "{", "5"])
def test_control_routes_refuse_non_objects(emulator, raw):
    resp = httpx.post(f"{emulator.base_url}/_emulator/faults", content=raw, headers=admin_headers(emulator))
    _seam_error(resp, 400, "invalid_input")


# -- never a 500 ---------------------------------------------------------------------------------------------
_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
_names = st.sampled_from(
    [
        "device_id",
        "device_ids",
        "limit",
        "page_cursor",
        "access_code_id",
        "space_id",
        "space_key",
        "customer_key",
        "reservations",
        "user_identity",
        "since",
        "between",
        "event_types",
        "unstable_offset",
        "code",
        "starts_at",
        "ends_at",
        "requested_access_methods",
        "name",
        "url",
        "event_types",
        "webhook_id",
        "action_attempt_id",
    ]
)


@pytest.fixture
def client(emulator, workspace):
    with httpx.Client(base_url=emulator.base_url, headers=_key(workspace), timeout=30) as c:
        yield c


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(sorted(HANDLERS)),
    body=st.dictionaries(_names | st.text(max_size=8), _json_values, max_size=5),
)
def test_random_bodies_never_answer_500(client, route, body):
    resp = client.post(route, json=body)
    assert resp.status_code < 500, (route, body, resp.text[:500])
    payload = resp.json()
    assert payload.get("ok") is True or payload["error"]["type"], payload


def test_random_ids_from_nowhere_are_404_not_500(emulator, workspace):
    seam = Seam(api_key=workspace.api_key, endpoint=emulator.base_url)
    from seam.exceptions import SeamHttpApiError

    with pytest.raises(SeamHttpApiError) as err:
        seam.access_codes.get(access_code_id=str(uuid.uuid4()))
    assert err.value.status_code == 404


def test_a_workspace_over_its_cpu_budget_waits_and_only_it():
    """A workspace that spent its CPU budget waits before its next request; another workspace does not
    wait.
    """
    from skillassay.seam.emulator import Limits, SeamEmulator

    with SeamEmulator(async_delay=0.1, limits=Limits(cpu_share=0.05, cpu_burst=0.01)) as emu:
        heavy, light = emu.create_workspace("heavy"), emu.create_workspace("light")
        # every id validated: tens of ms of CPU (25,000 ids, under the 1 MiB limit: validation is compiled,
        # a few microseconds an id)
        body = {"device_ids": [str(uuid.uuid4()) for _ in range(25_000)]}
        url = f"{emu.base_url}/devices/list"
        assert httpx.post(url, json=body, headers=_key(heavy), timeout=60).status_code == 200  # now in debt
        done: dict[str, float] = {}

        def second_heavy() -> None:
            started = time.monotonic()
            httpx.post(url, json={}, headers=_key(heavy), timeout=60)
            done["heavy"] = time.monotonic() - started

        thread = threading.Thread(target=second_heavy)
        thread.start()
        time.sleep(0.05)
        assert httpx.post(url, json={}, headers=_key(light), timeout=60).status_code == 200
        light_done = "heavy" not in done  # the light workspace was answered while the heavy one still waited
        thread.join(60)
        assert light_done
        assert done["heavy"] >= 0.2  # its debt (>= 0.01 s of CPU over the burst) at 0.05 s per second


def test_concurrent_creates_in_one_workspace_on_and_off_the_event_loop_never_race(emulator):
    """Creates of one workspace sent at once over many connections (some run on the event loop, some on
    worker threads, both under the workspace's lock): every one gets its own id and every one is kept."""
    ws = emulator.create_workspace("racing")
    device_id = ws.device("GARAGE")["device_id"]
    ids: list[str] = []
    lock = threading.Lock()

    def create_codes(n: int) -> None:
        with httpx.Client(headers=_key(ws), timeout=30) as client:
            for i in range(10):
                resp = client.post(
                    f"{emulator.base_url}/access_codes/create",
                    json={"device_id": device_id, "name": f"racer {n}-{i}"},
                )
                assert resp.status_code == 200, resp.text
                with lock:
                    ids.append(resp.json()["access_code"]["access_code_id"])

    racers = [threading.Thread(target=create_codes, args=(n,)) for n in range(8)]
    for t in racers:
        t.start()
    for t in racers:
        t.join(60)
    assert len(ids) == 80 and len(set(ids)) == 80
    listed = httpx.post(
        f"{emulator.base_url}/access_codes/list", json={"device_id": device_id}, headers=_key(ws)
    ).json()["access_codes"]
    assert {c["access_code_id"] for c in listed} >= set(ids)
    assert len({c["code"] for c in listed if c["name"].startswith("racer")}) == 80  # no code given twice


def test_the_scheduler_runs_a_task_due_before_the_one_it_sleeps_for_on_time():
    """The scheduler's thread sleeps until its earliest task and is woken only for a new earliest one: a task
    due sooner than the one it sleeps for still runs on time, and one due later still runs."""
    from skillassay.seam.emulator.automations import Scheduler

    scheduler = Scheduler()
    scheduler.start()
    ran: dict[str, float] = {}
    try:
        started = time.monotonic()
        scheduler.call_later(30, lambda: ran.setdefault("late", time.monotonic()))
        time.sleep(0.05)  # the thread now sleeps for the 30 s task
        scheduler.call_later(0.1, lambda: ran.setdefault("soon", time.monotonic()))
        scheduler.call_later(0.3, lambda: ran.setdefault("after", time.monotonic()))
        deadline = time.monotonic() + 10
        while "after" not in ran and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "soon" in ran and ran["soon"] - started < 5
        assert "after" in ran and ran["after"] >= ran["soon"]
        assert "late" not in ran
    finally:
        scheduler.stop()


def test_a_workspace_busy_elsewhere_never_stops_the_server_logging_other_requests(emulator):
    """The event loop logs every request as it arrives; while one workspace's lock is held (a worker or the
    scheduler busy there), its next request is logged at once and another workspace is answered: the loop
    never waits for a workspace's lock."""
    busy, other = emulator.create_workspace("busy"), emulator.create_workspace("other")
    lock = emulator.store.get(busy.workspace_id).lock
    answered: dict[str, int] = {}

    def send() -> None:
        resp = httpx.post(f"{emulator.base_url}/devices/list", json={}, headers=_key(busy), timeout=60)
        answered["busy"] = resp.status_code

    with lock:  # held as a long task would hold it
        thread = threading.Thread(target=send)
        thread.start()
        logged = []
        for _ in range(500):  # up to 10 s
            logged = [r for r in emulator.requests(busy.workspace_id) if r.path == "/devices/list"]
            if logged:
                break
            time.sleep(0.02)
        resp = httpx.post(f"{emulator.base_url}/devices/list", json={}, headers=_key(other), timeout=60)
        assert resp.status_code == 200
        assert logged and logged[0].status is None  # logged, not yet answered
        assert "busy" not in answered
    thread.join(60)
    assert answered["busy"] == 200
