"""Differential fidelity: the same scripted sequences, sent through the official Python SDK (PyPI
``seam``), to Seam's own fake (npm ``@seamapi/fake-seam-connect``) and to the emulator, compared answer by
answer.

An answer is reduced to what a client can depend on: the HTTP status, the error type, and the response's
shape (its keys and their JSON types; never ids, timestamps or other values). Every difference found is
looked up in ``seam_differences.json`` (beside this file), the table that settles each one (docs/
seam-emulator.md, "Differences from Seam's fake"). Used by test_seam_differential.py and
benchmarks/differential.py.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from seam import Seam
from seam_fake import Server

HERE = Path(__file__).resolve().parent
TABLE = HERE / "seam_differences.json"
FAR_START, FAR_END = "2031-03-01T15:00:00Z", "2031-03-03T11:00:00Z"
SINCE = "2020-01-01T00:00:00Z"
LATER = "2031-03-05T11:00:00Z"
MISSING = "00000000-0000-4000-8000-000000000000"  # a well-formed id nothing has


# ------------------------------------------------------------------------------------------- servers
@contextmanager
def seam_emulator() -> Iterator[Server]:
    from skillassay.seam.emulator.emulator import SeamEmulator

    with SeamEmulator(async_delay=0.2) as emu:
        ws = emu.create_workspace(name="differential")
        yield Server("emulator", emu.base_url, ws.api_key)


# ------------------------------------------------------------------------------------------- shapes
def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape(value: Any, prefix: str = "") -> dict[str, str]:
    """Every key path of ``value`` with its JSON type: ``{"access_code.errors": "array", ...}``. Array items
    are merged under ``[]``; an open map (``custom_metadata``, ``properties``...) is kept to its own type."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else k
            out[path] = json_type(v)
            if k not in OPEN_MAPS:
                out.update(shape(v, path))
    elif isinstance(value, list):
        for item in value:
            for path, t in shape(item, prefix + "[]").items():
                out.setdefault(path, t)
                if out[path] == "null":
                    out[path] = t
            out.setdefault(prefix + "[]", json_type(item))
    return out


# device properties, metadata and error lists vary by device and manufacturer, not by server
OPEN_MAPS = frozenset({"properties", "custom_metadata", "data", "validation_errors", "result", "location"})


# ------------------------------------------------------------------------------------------- running
@dataclass
class Answer:
    scenario: str
    step: str
    method: str
    route: str
    status: int | None
    error_type: str | None
    shape: dict[str, str] = field(default_factory=dict)


class _Recorder:
    def __init__(self) -> None:
        self.last: httpx.Response | None = None

    def __call__(self, response: httpx.Response) -> None:
        response.read()
        self.last = response


@dataclass
class Ctx:
    """What a scenario has to hand: the SDK client, a lock that takes codes, another device, and the
    answers so far."""

    seam: Seam
    http: httpx.Client  # POST with a JSON body, the form older SDKs (and the live harness) send
    lock_id: str
    other_lock_id: str
    connected_account_id: str
    recorder: _Recorder
    scenario: str = ""
    answers: list[Answer] = field(default_factory=list)
    kept: dict[str, Any] = field(default_factory=dict)

    def step(self, name: str, call: Callable[[], Any]) -> Any:
        self.recorder.last = None
        result: Any = None
        with contextlib.suppress(Exception):  # an error answer is what the step records
            result = call()
        r = self.recorder.last
        if r is None:
            self.answers.append(Answer(self.scenario, name, "", "", None, "no request sent"))
            return result
        body: Any
        try:
            body = r.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        answer = Answer(
            self.scenario,
            name,
            r.request.method,
            r.request.url.path,
            r.status_code,
            error.get("type") if isinstance(error, dict) else None,
            {}
            if error or not isinstance(body, dict)
            else shape({k: v for k, v in body.items() if k != "ok"}),
        )
        self.answers.append(answer)
        return result


def _devices(seam: Seam) -> tuple[str, str, str]:
    locks = [d for d in seam.devices.list() if "access_code" in (d.capabilities_supported or [])]
    return locks[0].device_id, locks[1].device_id, locks[0].connected_account_id


def run_scenarios(server: Server, names: list[str] | None = None) -> list[Answer]:
    recorder = _Recorder()
    seam = Seam(
        api_key=server.api_key,
        endpoint=server.endpoint,
        wait_for_action_attempt=False,
        httpx_options={"event_hooks": {"response": [recorder]}, "trust_env": False},
    )
    http = httpx.Client(
        base_url=server.endpoint,
        headers={"authorization": f"Bearer {server.api_key}"},
        event_hooks={"response": [recorder]},
        trust_env=False,
    )
    lock, other, account = _devices(seam)
    ctx = Ctx(seam, http, lock, other, account, recorder)
    try:
        for name, scenario in SCENARIOS.items():
            if names is None or name in names:
                ctx.scenario = name
                scenario(ctx)
    finally:
        http.close()
    return ctx.answers


# ------------------------------------------------------------------------------------------- scenarios
def devices_and_accounts(c: Ctx) -> None:
    s = c.seam
    c.step("workspaces.get", s.workspaces.get)
    c.step("devices.list", s.devices.list)
    c.step("devices.get", lambda: s.devices.get(device_id=c.lock_id))
    c.step("devices.get missing", lambda: s.devices.get(device_id=MISSING))
    c.step("locks.list", s.locks.list)
    c.step("locks.get", lambda: s.locks.get(device_id=c.lock_id))
    c.step("connected_accounts.list", s.connected_accounts.list)
    c.step(
        "connected_accounts.get",
        lambda: s.connected_accounts.get(connected_account_id=c.connected_account_id),
    )
    c.step("connected_accounts.get missing", lambda: s.connected_accounts.get(connected_account_id=MISSING))


def access_code_lifecycle(c: Ctx) -> None:
    s = c.seam
    code = c.step(
        "create ongoing", lambda: s.access_codes.create(device_id=c.lock_id, name="ongoing", code="4821")
    )
    timed = c.step(
        "create time-bound",
        lambda: s.access_codes.create(
            device_id=c.lock_id, name="stay", code="7395", starts_at=FAR_START, ends_at=FAR_END
        ),
    )
    if code is None or timed is None:
        return
    c.step("get", lambda: s.access_codes.get(access_code_id=code.access_code_id))
    c.step("list by device", lambda: s.access_codes.list(device_id=c.lock_id))
    c.step("list by ids", lambda: s.access_codes.list(access_code_ids=[code.access_code_id]))
    c.step("update name", lambda: s.access_codes.update(access_code_id=code.access_code_id, name="renamed"))
    c.step(
        "update times",
        lambda: s.access_codes.update(
            access_code_id=timed.access_code_id, starts_at=FAR_START, ends_at="2031-03-05T11:00:00Z"
        ),
    )
    c.step("delete", lambda: s.access_codes.delete(access_code_id=code.access_code_id))
    c.step("delete time-bound", lambda: s.access_codes.delete(access_code_id=timed.access_code_id))
    c.step("get deleted", lambda: s.access_codes.get(access_code_id=code.access_code_id))


def access_code_errors(c: Ctx) -> None:
    s = c.seam
    first = c.step("create", lambda: s.access_codes.create(device_id=c.other_lock_id, name="a", code="5173"))
    c.step(
        "create duplicate code",
        lambda: s.access_codes.create(device_id=c.other_lock_id, name="b", code="5173"),
    )
    c.step(
        "create two-digit code", lambda: s.access_codes.create(device_id=c.other_lock_id, name="c", code="42")
    )
    c.step(
        "create ends before starts",
        lambda: s.access_codes.create(
            device_id=c.other_lock_id, name="d", code="6284", starts_at=FAR_END, ends_at=FAR_START
        ),
    )
    c.step(
        "create starts without ends",
        lambda: s.access_codes.create(device_id=c.other_lock_id, name="e", code="9317", starts_at=FAR_START),
    )
    c.step("create on a missing device", lambda: s.access_codes.create(device_id=MISSING, name="f"))
    c.step("get missing", lambda: s.access_codes.get(access_code_id=MISSING))
    c.step("update missing", lambda: s.access_codes.update(access_code_id=MISSING, name="x"))
    c.step("delete missing", lambda: s.access_codes.delete(access_code_id=MISSING))
    if first is not None:
        c.step("delete", lambda: s.access_codes.delete(access_code_id=first.access_code_id))


def access_codes_over_post(c: Ctx) -> None:
    """Update and delete as POST with a JSON body: what the fake reads (it answers the SDKs' PATCH with 405
    and reads no query string on DELETE), so their semantics are compared too."""

    def post(route: str, body: dict[str, Any]) -> Callable[[], Any]:
        return lambda: c.http.post(route, json=body)

    created = c.step(
        "create",
        post(
            "/access_codes/create",
            {"device_id": c.lock_id, "name": "p", "code": "3148", "starts_at": FAR_START, "ends_at": FAR_END},
        ),
    )
    if created is None or created.status_code != 200:
        return
    code_id = created.json()["access_code"]["access_code_id"]
    c.step(
        "update ends_at alone", post("/access_codes/update", {"access_code_id": code_id, "ends_at": LATER})
    )
    c.step(
        "update both ends",
        post("/access_codes/update", {"access_code_id": code_id, "starts_at": FAR_START, "ends_at": LATER}),
    )
    c.step("update name", post("/access_codes/update", {"access_code_id": code_id, "name": "renamed"}))
    c.step("update missing", post("/access_codes/update", {"access_code_id": MISSING, "name": "x"}))
    c.step("delete", post("/access_codes/delete", {"access_code_id": code_id}))
    c.step("delete missing", post("/access_codes/delete", {"access_code_id": MISSING}))


def access_code_helpers(c: Ctx) -> None:
    s = c.seam
    c.step("generate_code", lambda: s.access_codes.generate_code(device_id=c.lock_id))
    c.step("unmanaged.list", lambda: s.access_codes.unmanaged.list(device_id=c.lock_id))


def locks_and_attempts(c: Ctx) -> None:
    s = c.seam
    attempt = c.step("lock_door", lambda: s.locks.lock_door(device_id=c.lock_id))
    c.step("unlock_door", lambda: s.locks.unlock_door(device_id=c.lock_id))
    c.step("lock_door missing device", lambda: s.locks.lock_door(device_id=MISSING))
    if attempt is not None:
        c.step(
            "action_attempts.get", lambda: s.action_attempts.get(action_attempt_id=attempt.action_attempt_id)
        )
        c.step(
            "action_attempts.list",
            lambda: s.action_attempts.list(action_attempt_ids=[attempt.action_attempt_id]),
        )
    c.step("action_attempts.get missing", lambda: s.action_attempts.get(action_attempt_id=MISSING))


def events(c: Ctx) -> None:
    s = c.seam
    c.step(
        "events.list access codes",
        lambda: s.events.list(since=SINCE, event_types=["access_code.created"]),
    )
    c.step("events.get missing", lambda: s.events.get(event_id=MISSING))


def webhooks(c: Ctx) -> None:
    s = c.seam
    hook = c.step("create", lambda: s.webhooks.create(url="https://example.com/hook", event_types=["*"]))
    c.step("list", s.webhooks.list)
    if hook is not None:
        c.step("get", lambda: s.webhooks.get(webhook_id=hook.webhook_id))
        c.step("delete", lambda: s.webhooks.delete(webhook_id=hook.webhook_id))
    c.step("get missing", lambda: s.webhooks.get(webhook_id=MISSING))


def user_identities(c: Ctx) -> None:
    s = c.seam
    c.step(
        "create",
        lambda: s.user_identities.create(
            user_identity_key="guest-differential", full_name="Guest", email_address="guest@example.com"
        ),
    )
    c.step("create same key", lambda: s.user_identities.create(user_identity_key="guest-differential"))


def access_codes_multiple(c: Ctx) -> None:
    s = c.seam
    devices = [c.lock_id, c.other_lock_id]
    c.step(
        "create_multiple",
        lambda: s.access_codes.create_multiple(device_ids=devices, name="shared", code="2864"),
    )
    c.step(
        "create_multiple time-bound",
        lambda: s.access_codes.create_multiple(
            device_ids=devices, name="shared stay", starts_at=FAR_START, ends_at=FAR_END
        ),
    )
    c.step("create_multiple no devices", lambda: s.access_codes.create_multiple(device_ids=[]))
    c.step(
        "create_multiple missing device",
        lambda: s.access_codes.create_multiple(device_ids=[c.lock_id, MISSING], name="x"),
    )
    # the SDK sends PUT, which the fake does not serve: the same requests as POST compare the semantics
    route = "/access_codes/create_multiple"
    c.step("create_multiple over POST", _post(c, route, {"device_ids": devices, "name": "p", "code": "7042"}))
    c.step(
        "create_multiple time-bound over POST",
        _post(c, route, {"device_ids": devices, "starts_at": FAR_START, "ends_at": FAR_END}),
    )
    c.step("create_multiple no devices over POST", _post(c, route, {"device_ids": []}))
    c.step(
        "create_multiple missing device over POST",
        _post(c, route, {"device_ids": [c.lock_id, MISSING], "name": "x"}),
    )


def _post(c: Ctx, route: str, body: dict[str, Any]) -> Callable[[], Any]:
    return lambda: c.http.post(route, json=body)


def acs_systems_and_entrances(c: Ctx) -> None:
    """The two seeds differ (the fake's Visionline system, the emulator's Salto KS site): the system and its
    entrances are found by listing."""
    s = c.seam
    systems = c.step("systems.list", s.acs.systems.list) or []
    c.step("systems.get missing", lambda: s.acs.systems.get(acs_system_id=MISSING))
    if not systems:
        return
    system_id = systems[0].acs_system_id
    c.kept["acs_system_id"] = system_id
    c.step("systems.get", lambda: s.acs.systems.get(acs_system_id=system_id))
    c.step(
        "systems.list by account",
        lambda: s.acs.systems.list(connected_account_id=systems[0].connected_account_id),
    )
    entrances = c.step("entrances.list", lambda: s.acs.entrances.list(acs_system_id=system_id)) or []
    c.step("entrances.list all", s.acs.entrances.list)
    c.step("entrances.get missing", lambda: s.acs.entrances.get(acs_entrance_id=MISSING))
    # the first listed entrance (a seed with none gets the missing id: both servers run the same steps)
    entrance_id = entrances[0].acs_entrance_id if entrances else MISSING
    c.kept["acs_entrance_id"] = entrance_id
    c.step("entrances.get", lambda: s.acs.entrances.get(acs_entrance_id=entrance_id))


def acs_users(c: Ctx) -> None:
    s = c.seam
    system_id = c.kept.get("acs_system_id")
    c.step(
        "create on a missing system", lambda: s.acs.users.create(acs_system_id=MISSING, full_name="Nobody")
    )
    if system_id is None:
        return
    user = c.step(
        "create",
        lambda: s.acs.users.create(
            acs_system_id=system_id, full_name="Jane Guest", email_address="jane.guest@example.com"
        ),
    )
    c.step(
        "create without a name", lambda: c.http.post("/acs/users/create", json={"acs_system_id": system_id})
    )
    if user is None:
        return
    user_id = user.acs_user_id
    c.step("get", lambda: s.acs.users.get(acs_user_id=user_id))
    c.step("get missing", lambda: s.acs.users.get(acs_user_id=MISSING))
    c.step("list by system", lambda: s.acs.users.list(acs_system_id=system_id))
    c.step("list", s.acs.users.list)
    c.step("update", lambda: s.acs.users.update(acs_user_id=user_id, full_name="Jane G."))
    c.step("update over POST", _post(c, "/acs/users/update", {"acs_user_id": user_id, "full_name": "Jane"}))
    c.step(
        "update missing over POST", _post(c, "/acs/users/update", {"acs_user_id": MISSING, "full_name": "x"})
    )
    c.step("suspend", lambda: s.acs.users.suspend(acs_user_id=user_id))
    c.step("get suspended", lambda: s.acs.users.get(acs_user_id=user_id))
    c.step("unsuspend", lambda: s.acs.users.unsuspend(acs_user_id=user_id))
    c.step("suspend missing", lambda: s.acs.users.suspend(acs_user_id=MISSING))
    entrance_id = c.kept.get("acs_entrance_id", MISSING)
    c.step(
        "entrances.grant_access",
        lambda: s.acs.entrances.grant_access(acs_entrance_id=entrance_id, acs_user_id=user_id),
    )
    c.step(
        "entrances.grant_access missing entrance",
        lambda: s.acs.entrances.grant_access(acs_entrance_id=MISSING, acs_user_id=user_id),
    )
    c.step(
        "add_to_access_group missing group",
        lambda: s.acs.users.add_to_access_group(acs_access_group_id=MISSING, acs_user_id=user_id),
    )
    c.step(
        "remove_from_access_group missing group",
        lambda: s.acs.users.remove_from_access_group(acs_access_group_id=MISSING, acs_user_id=user_id),
    )
    c.step(
        "remove_from_access_group missing group over POST",
        _post(
            c, "/acs/users/remove_from_access_group", {"acs_access_group_id": MISSING, "acs_user_id": user_id}
        ),
    )
    c.step("delete", lambda: s.acs.users.delete(acs_user_id=user_id))
    c.step("delete over POST", _post(c, "/acs/users/delete", {"acs_user_id": user_id}))
    c.step("get deleted", lambda: s.acs.users.get(acs_user_id=user_id))
    c.step("delete missing over POST", _post(c, "/acs/users/delete", {"acs_user_id": MISSING}))


def client_sessions(c: Ctx) -> None:
    s = c.seam
    session = c.step("create", lambda: s.client_sessions.create(user_identifier_key="differential-user"))
    c.step(
        "create with an account",
        lambda: s.client_sessions.create(
            user_identifier_key="differential-account", connected_account_ids=[c.connected_account_id]
        ),
    )
    if session is not None:
        c.step("get", lambda: s.client_sessions.get(client_session_id=session.client_session_id))
    c.step("get by key", lambda: s.client_sessions.get(user_identifier_key="differential-user"))
    c.step("get missing", lambda: s.client_sessions.get(client_session_id=MISSING))
    c.step(
        "get_or_create existing",
        lambda: s.client_sessions.get_or_create(user_identifier_key="differential-user"),
    )
    c.step(
        "get_or_create new", lambda: s.client_sessions.get_or_create(user_identifier_key="differential-new")
    )


def connect_webviews(c: Ctx) -> None:
    s = c.seam
    view = c.step("create", lambda: s.connect_webviews.create(accepted_providers=["august"]))
    c.step(
        "create with a redirect",
        lambda: s.connect_webviews.create(
            accepted_providers=["schlage"], custom_redirect_url="https://example.com/done"
        ),
    )
    c.step("create with no provider", lambda: s.connect_webviews.create(accepted_providers=[]))
    if view is not None:
        c.step("get", lambda: s.connect_webviews.get(connect_webview_id=view.connect_webview_id))
    c.step("get missing", lambda: s.connect_webviews.get(connect_webview_id=MISSING))
    c.step("list", s.connect_webviews.list)


def device_and_account_updates(c: Ctx) -> None:
    s = c.seam
    c.step("devices.update", lambda: s.devices.update(device_id=c.lock_id, name="Front door"))
    c.step(
        "devices.update over POST",
        _post(c, "/devices/update", {"device_id": c.lock_id, "custom_metadata": {"unit": "4B"}}),
    )
    c.step("devices.get updated", lambda: s.devices.get(device_id=c.lock_id))
    c.step(
        "devices.update missing over POST", _post(c, "/devices/update", {"device_id": MISSING, "name": "x"})
    )
    account = c.connected_account_id
    c.step(
        "connected_accounts.update",
        lambda: s.connected_accounts.update(connected_account_id=account, custom_metadata={"owner": "jo"}),
    )
    c.step(
        "connected_accounts.update over POST",
        _post(
            c, "/connected_accounts/update", {"connected_account_id": account, "custom_metadata": {"a": "b"}}
        ),
    )
    c.step(
        "connected_accounts.update missing over POST",
        _post(c, "/connected_accounts/update", {"connected_account_id": MISSING, "custom_metadata": {}}),
    )


def connected_account_deletes(c: Ctx) -> None:
    """Last: an account that holds neither lock nor the ACS system goes (through the SDK, then over POST)."""
    s = c.seam
    keep = {c.connected_account_id}
    keep |= {d.connected_account_id for d in s.devices.list() if d.device_id == c.other_lock_id}
    keep |= {a.connected_account_id for a in s.acs.systems.list()}
    spare = [
        a.connected_account_id for a in s.connected_accounts.list() if a.connected_account_id not in keep
    ]
    c.step("delete missing", lambda: s.connected_accounts.delete(connected_account_id=MISSING))
    c.step(
        "delete missing over POST", _post(c, "/connected_accounts/delete", {"connected_account_id": MISSING})
    )
    if spare:
        c.step("delete", lambda: s.connected_accounts.delete(connected_account_id=spare[0]))
        c.step("delete over POST", _post(c, "/connected_accounts/delete", {"connected_account_id": spare[0]}))
        c.step("get deleted", lambda: s.connected_accounts.get(connected_account_id=spare[0]))


SCENARIOS: dict[str, Callable[[Ctx], None]] = {
    "devices": devices_and_accounts,
    "access codes": access_code_lifecycle,
    "access code errors": access_code_errors,
    "access codes over POST": access_codes_over_post,
    "access code helpers": access_code_helpers,
    "locks": locks_and_attempts,
    "events": events,
    "webhooks": webhooks,
    "user identities": user_identities,
    "access codes on many devices": access_codes_multiple,
    "acs systems and entrances": acs_systems_and_entrances,
    "acs users": acs_users,
    "client sessions": client_sessions,
    "connect webviews": connect_webviews,
    "device and account updates": device_and_account_updates,
    "connected account deletes": connected_account_deletes,
}


# ------------------------------------------------------------------------------------------- comparing
@dataclass(frozen=True)
class Difference:
    """One way the two servers answered a step differently. ``id``: stable, what the table is keyed by."""

    id: str
    route: str
    fake: str
    emulator: str


def compare(fake: list[Answer], emulator: list[Answer]) -> list[Difference]:
    by_step = {(a.scenario, a.step): a for a in emulator}
    out: list[Difference] = []
    for f in fake:
        e = by_step.get((f.scenario, f.step))
        where = f"{f.scenario} / {f.step}"
        route = f.route or (e.route if e else "")
        if e is None:
            out.append(Difference(f"{where}: step", route, "answered", "not run"))
            continue
        if f.status != e.status:
            out.append(Difference(f"{where}: status", route, str(f.status), str(e.status)))
        if f.error_type != e.error_type:
            out.append(Difference(f"{where}: error type", route, str(f.error_type), str(e.error_type)))
        if f.status == e.status == 200:
            out.extend(_shape_differences(where, route, f.shape, e.shape))
    ran = {(f.scenario, f.step) for f in fake}
    for e in emulator:
        if (e.scenario, e.step) not in ran:
            out.append(Difference(f"{e.scenario} / {e.step}: step", e.route, "not run", "answered"))
    return out


def _shape_differences(where: str, route: str, fake: dict[str, str], emu: dict[str, str]) -> list[Difference]:
    # keyed by route and key path, not by step: the same resource's shape differs the same way everywhere
    out = []
    for path in sorted(set(fake) | set(emu)):
        f, e = fake.get(path, "absent"), emu.get(path, "absent")
        if f == e or "null" in (f, e):  # a null is a value (nullable), not a shape
            continue
        out.append(Difference(f"{route} shape: {path}", route, f, e))
    return out


def dedupe(found: list[Difference]) -> list[Difference]:
    return list({d.id: d for d in found}.values())


# ------------------------------------------------------------------------------------------- the spec
def spec_key(document: dict[str, Any], route: str, path: str) -> str | None:
    """What the spec's 200 answer schema of ``route`` says of key path ``path`` (``access_code.errors``,
    ``access_codes[].starts_at``): "required", "optional", or None when it does not name it."""
    ops = document["paths"].get(route) or {}
    op = ops.get("post") or next(iter(ops.values()), {})
    schema = (
        op.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {}).get("schema")
    )
    parts = path.replace("[]", ".[]").split(".")
    found: str | None = "required"
    for part in parts:
        if schema is None:
            return None
        if part == "[]":
            schema = _items(document, schema)
            continue
        schema, how = _property(document, schema, part)
        if how is None:
            return None
        if how == "optional":
            found = "optional"
    return found


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _variants(document: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(document, schema)
    subs = [s for k in ("allOf", "oneOf", "anyOf") for s in schema.get(k, [])]
    return [schema] + [v for s in subs for v in _variants(document, s)]


def _property(document: dict[str, Any], schema: dict[str, Any], name: str) -> tuple[Any, str | None]:
    hits = [
        (v["properties"][name], "required" if name in v.get("required", []) else "optional")
        for v in _variants(document, schema)
        if name in (v.get("properties") or {})
    ]
    if not hits:
        return None, None
    # required when every variant that names it requires it
    how = "required" if all(h == "required" for _, h in hits) else "optional"
    return hits[0][0], how


def _items(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    for v in _variants(document, schema):
        if "items" in v:
            return v["items"]
    return None


# ------------------------------------------------------------------------------------------- the table
@dataclass
class Settlement:
    id: str
    route: str
    fake: str
    emulator: str
    follows: str  # "spec" | "fake" | "sdk"
    emulator_now: str  # "as the fake" (the difference is gone) | "kept" (the difference stays, on purpose)
    reason: str


def load_table(path: Path = TABLE) -> list[Settlement]:
    return [Settlement(**row) for row in json.loads(path.read_text())["differences"]]


def audit(found: list[Difference], table: list[Settlement]) -> list[str]:
    """What is wrong with the table against what was found: an unsettled difference, a settled one that no
    longer shows (the table is stale), a difference the table says the emulator no longer has."""
    rows = {s.id: s for s in table}
    seen = {d.id: d for d in found}
    problems = []
    for d in found:
        row = rows.get(d.id)
        if row is None:
            problems.append(f"unsettled difference: {d.id} ({d.route}): fake {d.fake}, emulator {d.emulator}")
        elif row.emulator_now != "kept":
            problems.append(
                f"settled to follow the fake but still differs: {d.id}: fake {d.fake}, emulator {d.emulator}"
            )
        elif (row.fake, row.emulator) != (d.fake, d.emulator):
            problems.append(
                f"{d.id}: the table says fake {row.fake}, emulator {row.emulator}; found fake {d.fake}, "
                f"emulator {d.emulator}"
            )
    for row in table:
        if row.emulator_now == "kept" and row.id not in seen:
            problems.append(f"stale row (the difference no longer shows): {row.id}")
    return problems


def followed(table: list[Settlement], fake: list[Answer], emulator: list[Answer]) -> list[str]:
    """For each row settled "as the fake": the fake still answers as the row says, and so does the emulator
    now (a row whose step is gone, or whose fake answer changed, is stale)."""
    problems = []
    for row in table:
        if row.emulator_now == "kept":
            continue
        got = [_aspect(row, side) for side in (fake, emulator)]
        if got[0] != row.fake:
            problems.append(f"{row.id}: the table says the fake answers {row.fake}; it answers {got[0]}")
        elif got[1] != got[0]:
            problems.append(f"{row.id}: settled as the fake ({got[0]}), the emulator answers {got[1]}")
    return problems


def _aspect(row: Settlement, answers: list[Answer]) -> str | None:
    if " shape: " in row.id:
        path = row.id.split(" shape: ", 1)[1]
        types = {a.shape[path] for a in answers if a.route == row.route and path in a.shape} - {"null"}
        return next(iter(types)) if len(types) == 1 else ("absent" if not types else "/".join(sorted(types)))
    where, aspect = row.id.rsplit(": ", 1)
    scenario, step = where.split(" / ", 1)
    answer = next((a for a in answers if (a.scenario, a.step) == (scenario, step)), None)
    if answer is None:
        return None
    return str(answer.status) if aspect == "status" else str(answer.error_type)
