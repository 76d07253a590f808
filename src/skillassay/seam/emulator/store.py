"""Per-workspace state, each workspace with its own lock, a condition notified on every change, and a log of
the requests sent to it.

A lock per workspace, not one for all: one run's expensive request (a huge push, a long list) holds only its
own workspace, never another run's. Records are plain dicts in the API's own shape; keys that start with ``_``
are the emulator's links (grant of a code, customer of a reservation, ...) and never leave the server.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TypeVar

T = TypeVar("T")


_ID_BATCH = 256
_VARIANT = "89ab"  # the RFC 4122 variant: the top two bits of the 17th hex digit are 10
_ids: list[str] = []
_ids_lock = threading.Lock()


def new_id() -> str:
    """A random UUID (version 4), as ``str(uuid.uuid4())``, from ``os.urandom`` drawn 256 ids at a time: one
    system call (which also lets go of the interpreter lock) a batch, not one an id, and no ``UUID`` object
    (under half of uuid4's cost)."""
    with _ids_lock:
        if not _ids:
            _ids.extend(_id_batch(_ID_BATCH))
        return _ids.pop()


def _id_batch(count: int) -> list[str]:
    digits = os.urandom(16 * count).hex()
    out = []
    for i in range(0, len(digits), 32):
        h = digits[i : i + 32]
        out.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}")
    return out


def _forget_ids() -> None:
    _ids.clear()  # a forked child must never hand out its parent's next ids


os.register_at_fork(after_in_child=_forget_ids)


def to_iso(dt: datetime) -> str:
    """Seam's timestamp format: UTC with milliseconds and ``Z``."""
    utc = dt.astimezone(UTC)
    if utc.year < 1000:  # strftime's %Y does not pad them: kept as Seam's clients have seen them
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    return utc.isoformat(timespec="milliseconds")[:-6] + "Z"  # a third of strftime's cost


def now_iso() -> str:
    return to_iso(datetime.now(UTC))


def public(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k[0] != "_"}


def public_copy(record: Mapping[str, Any]) -> dict[str, Any]:
    # A JSON round trip: records are JSON data, and this is several times faster than copy.deepcopy.
    return json.loads(json.dumps(public(record)))


REQUEST_LOG_SIZE = 2000  # requests remembered per workspace
_request_seq = itertools.count(1)
_task_seq = itertools.count(1)


@dataclass
class RequestRecord:
    """One API request to a workspace, by its key (for the harness: what the app sent to Seam, and how it
    ended).

    Logged when it arrives; ``status`` and ``error`` are filled in once the emulator answers (None until
    then), so the harness can tell "the app's Seam requests all failed" from "still running"."""

    seq: int  # increasing across the emulator: a marker for "requests after this one"
    method: str
    path: str
    query: str
    at: float = 0.0  # time.monotonic() when it arrived
    status: int | None = None  # the HTTP status answered
    error: str | None = None  # "<type>: <message>" of an error answer
    answered_at: float | None = None  # time.monotonic() when answered

    def answer(self, status: int, error: str | None = None) -> None:
        self.error = error
        self.answered_at = time.monotonic()
        self.status = status  # last: a reader that sees the status sees the rest


@dataclass(eq=False)
class Workspace:
    workspace_id: str
    name: str
    api_key: str
    created_at: str
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    changed: threading.Condition = field(init=False, repr=False)
    requests: deque[RequestRecord] = field(default_factory=lambda: deque(maxlen=REQUEST_LOG_SIZE), repr=False)
    log_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    scheduled: dict[int, float] = field(default_factory=dict, repr=False)  # token -> when the work falls due
    deleted: bool = False
    # where this workspace's webhooks may be delivered ("http://127.0.0.1:8123"); None: anywhere
    webhook_origins: frozenset[str] | None = None
    connected_accounts: dict[str, dict] = field(default_factory=dict)
    devices: dict[str, dict] = field(default_factory=dict)
    spaces: dict[str, dict] = field(default_factory=dict)
    customers: dict[str, dict] = field(default_factory=dict)
    user_identities: dict[str, dict] = field(default_factory=dict)
    access_grants: dict[str, dict] = field(default_factory=dict)
    push_grants: dict[str, str] = field(default_factory=dict)  # push key -> access_grant_id (an index)
    access_methods: dict[str, dict] = field(default_factory=dict)
    access_codes: dict[str, dict] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    webhooks: dict[str, dict] = field(default_factory=dict)
    action_attempts: dict[str, dict] = field(default_factory=dict)
    # the families of seam/emulator/families/: connect webviews, client sessions, access systems
    unmanaged_devices: dict[str, dict] = field(default_factory=dict)
    connect_webviews: dict[str, dict] = field(default_factory=dict)
    client_sessions: dict[str, dict] = field(default_factory=dict)
    acs_systems: dict[str, dict] = field(default_factory=dict)
    acs_entrances: dict[str, dict] = field(default_factory=dict)
    acs_access_groups: dict[str, dict] = field(default_factory=dict)
    acs_users: dict[str, dict] = field(default_factory=dict)
    acs_credentials: dict[str, dict] = field(default_factory=dict)
    # what Seam no longer manages but the locks and access systems still hold (an account deleted, a device
    # unmanaged): gone from the API, still opening doors, so the harness still sees them
    forgotten_codes: dict[str, dict] = field(default_factory=dict)
    forgotten_credentials: dict[str, dict] = field(default_factory=dict)
    version: int = 0
    requests_logged: int = 0  # every request ever logged: the count the bounded log may have dropped from

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def schedule(self, due: float) -> int:
        """Note work the emulator will do for this workspace at ``due`` (time.monotonic()); returns its
        token.
        """
        token = next(_task_seq)
        self.scheduled[token] = due  # a dict assignment is atomic
        return token

    def unschedule(self, token: int) -> None:
        self.scheduled.pop(token, None)

    def due_within(self, seconds: float) -> int:
        """How many scheduled tasks (a code being programmed, a push being applied...) fall due within
        ``seconds`` (work due later, such as a code's expiry at its ends_at, does not count)."""
        horizon = time.monotonic() + seconds
        return sum(1 for due in list(self.scheduled.values()) if due <= horizon)

    def log_request(self, method: str, path: str, query: str) -> RequestRecord:
        record = RequestRecord(next(_request_seq), method, path, query, at=time.monotonic())
        # the log's own lock, not the workspace's: the event loop logs every request, and must not wait for
        # a worker or the scheduler busy in the workspace
        with self.log_lock:
            self.requests.append(record)
            self.requests_logged += 1
        return record

    # -- look-ups used by handlers and automations ------------------------------------------------------
    def space_by_key(self, key: str) -> dict | None:
        for space in self.spaces.values():
            if space.get("space_key") == key:
                return space
        return None

    def user_identity_by_key(self, key: str) -> dict | None:
        for ui in self.user_identities.values():
            if ui.get("user_identity_key") == key:
                return ui
        return None

    def grant_by_key(self, key: str) -> dict | None:
        for grant in self.access_grants.values():
            if grant.get("access_grant_key") == key or grant.get("_push_key") == key:
                return grant
        return None

    def grant_by_push_key(self, push_key: str) -> dict | None:
        """The grant a push made for ``push_key`` (``reservations:<key>``), from the index when it still
        holds (the grant there, with that key), by a scan otherwise."""
        grant = self.access_grants.get(self.push_grants.get(push_key, ""))
        if grant is not None and grant.get("_push_key") == push_key:
            return grant
        return next((g for g in self.access_grants.values() if g.get("_push_key") == push_key), None)

    def grant_by_reservation(self, key: str) -> dict | None:
        for grant in self.access_grants.values():
            if grant.get("reservation_key") == key:
                return grant
        return None

    def codes_of_grant(self, grant_id: str) -> list[dict]:
        return [c for c in self.access_codes.values() if c.get("_access_grant_id") == grant_id]


@dataclass(frozen=True)
class WorkspaceSnapshot:
    """A read-only copy of one workspace, taken under the lock: what predicates and ``state()`` see."""

    workspace_id: str
    name: str
    version: int
    devices: tuple[Mapping[str, Any], ...]
    spaces: tuple[Mapping[str, Any], ...]
    customers: tuple[Mapping[str, Any], ...]
    user_identities: tuple[Mapping[str, Any], ...]
    access_grants: tuple[Mapping[str, Any], ...]
    access_methods: tuple[Mapping[str, Any], ...]
    access_codes: tuple[Mapping[str, Any], ...]
    events: tuple[Mapping[str, Any], ...]
    webhooks: tuple[Mapping[str, Any], ...]
    action_attempts: tuple[Mapping[str, Any], ...]
    # access_code_id -> {"access_grant_id", "access_method_id", "reservation_key", "customer_key"}
    access_code_links: Mapping[str, Mapping[str, Any]]
    acs_credentials: tuple[Mapping[str, Any], ...] = ()
    # acs_credential_id -> the ids of the entrances it opens (forgotten credentials included)
    acs_credential_entrances: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # gone from the API, still on the locks / access systems (see Workspace.forgotten_codes)
    forgotten_codes: tuple[Mapping[str, Any], ...] = ()
    forgotten_credentials: tuple[Mapping[str, Any], ...] = ()

    def codes(
        self,
        device_id: str | None = None,
        reservation_key: str | None = None,
        access_grant_id: str | None = None,
        status: str | None = None,
    ) -> list[Mapping[str, Any]]:
        out = []
        for code in self.access_codes:
            link = self.access_code_links.get(code["access_code_id"], {})
            if device_id is not None and code["device_id"] != device_id:
                continue
            if reservation_key is not None and link.get("reservation_key") != reservation_key:
                continue
            if access_grant_id is not None and link.get("access_grant_id") != access_grant_id:
                continue
            if status is not None and code["status"] != status:
                continue
            out.append(code)
        return out

    def grant_for_reservation(self, reservation_key: str) -> Mapping[str, Any] | None:
        return next((g for g in self.access_grants if g.get("reservation_key") == reservation_key), None)

    def event_types(self) -> list[str]:
        return [e["event_type"] for e in self.events]

    def to_json(self) -> dict[str, Any]:
        def plain(obj: Any) -> Any:
            if isinstance(obj, Mapping):
                return {k: plain(v) for k, v in obj.items()}
            if isinstance(obj, (list, tuple)):
                return [plain(v) for v in obj]
            return obj

        return {
            "workspace_id": self.workspace_id,
            "name": self.name,
            "version": self.version,
            **{
                name: plain(getattr(self, name))
                for name in (
                    "devices",
                    "spaces",
                    "customers",
                    "user_identities",
                    "access_grants",
                    "access_methods",
                    "access_codes",
                    "events",
                    "webhooks",
                    "action_attempts",
                    "access_code_links",
                    "acs_credentials",
                    "acs_credential_entrances",
                    "forgotten_codes",
                    "forgotten_credentials",
                )
            },
        }


def _frozen(records: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(MappingProxyType(public_copy(r)) for r in records)


class Store:
    """All workspaces of one emulator. Every change to a workspace happens under ``ws.lock`` and ends with
    ``touch(ws)``; ``lock`` guards only the set of workspaces (never held while a workspace's lock is
    wanted)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.workspaces: dict[str, Workspace] = {}
        self._by_key: dict[str, str] = {}

    def add_workspace(self, name: str) -> Workspace:
        ws = Workspace(
            workspace_id=new_id(),
            name=name,
            # The SDKs only check the ``seam_`` prefix (and refuse ``seam_at``/``seam_cst``/``seam_pk``).
            api_key="seam_test_" + secrets.token_hex(16),
            created_at=now_iso(),
        )
        with self.lock:
            self.workspaces[ws.workspace_id] = ws
            self._by_key[ws.api_key] = ws.workspace_id
        return ws

    def remove_workspace(self, workspace_id: str) -> Workspace | None:
        with self.lock:
            ws = self.workspaces.pop(workspace_id, None)
            if ws is not None:
                self._by_key.pop(ws.api_key, None)
        if ws is not None:
            with ws.lock:
                ws.deleted = True
                ws.changed.notify_all()  # waiters see it gone
        return ws

    def all(self) -> list[Workspace]:
        with self.lock:
            return list(self.workspaces.values())

    def by_api_key(self, key: str) -> Workspace | None:
        wid = self._by_key.get(key)
        return self.workspaces.get(wid) if wid else None

    def get(self, workspace_id: str) -> Workspace:
        ws = self.workspaces.get(workspace_id)
        if ws is None:
            raise KeyError(f"no emulator workspace {workspace_id}")
        return ws

    @staticmethod
    def touch(ws: Workspace) -> None:
        """Call under ``ws.lock`` after changing ``ws``: wakes every ``wait_for`` on it."""
        ws.version += 1
        ws.changed.notify_all()

    def snapshot(self, workspace_id: str) -> WorkspaceSnapshot:
        ws = self.get(workspace_id)
        with ws.lock:
            return _snapshot(ws)

    def wait_for(
        self, workspace_id: str, predicate: Callable[[WorkspaceSnapshot], T], timeout: float = 60.0
    ) -> T:
        """Block until ``predicate(snapshot)`` is truthy; return that value. Raises TimeoutError (and KeyError
        when the workspace is deleted meanwhile)."""
        deadline = time.monotonic() + timeout
        ws = self.get(workspace_id)
        seen = -1
        while True:
            with ws.lock:
                while ws.version == seen and not ws.deleted:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(
                            f"condition not met in workspace {workspace_id} within {timeout} s"
                        )
                    ws.changed.wait(remaining)
                if ws.deleted:
                    raise KeyError(f"no emulator workspace {workspace_id}")
                seen = ws.version
                snap = _snapshot(ws)
            # Evaluated outside the lock so a slow predicate never stalls the server.
            result = predicate(snap)
            if result:
                return result
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition not met in workspace {workspace_id} within {timeout} s")


def _snapshot(ws: Workspace) -> WorkspaceSnapshot:
    """A copy of ``ws``; call under ``ws.lock``."""
    links = {}
    for code in ws.access_codes.values():
        grant = ws.access_grants.get(code.get("_access_grant_id") or "")
        links[code["access_code_id"]] = MappingProxyType(
            {
                "access_grant_id": code.get("_access_grant_id"),
                "access_method_id": code.get("_access_method_id"),
                "reservation_key": grant.get("reservation_key") if grant else None,
                "customer_key": grant.get("_customer_key") if grant else None,
            }
        )
    return WorkspaceSnapshot(
        workspace_id=ws.workspace_id,
        name=ws.name,
        version=ws.version,
        devices=_frozen(ws.devices.values()),
        spaces=_frozen(ws.spaces.values()),
        customers=_frozen(ws.customers.values()),
        user_identities=_frozen(ws.user_identities.values()),
        access_grants=_frozen(ws.access_grants.values()),
        access_methods=_frozen(ws.access_methods.values()),
        access_codes=_frozen(ws.access_codes.values()),
        events=_frozen(ws.events),
        webhooks=_frozen(ws.webhooks.values()),
        action_attempts=_frozen(ws.action_attempts.values()),
        access_code_links=MappingProxyType(links),
        acs_credentials=_frozen(ws.acs_credentials.values()),
        acs_credential_entrances=MappingProxyType(
            {
                c["acs_credential_id"]: tuple(c["_entrance_ids"])
                for c in (*ws.acs_credentials.values(), *ws.forgotten_credentials.values())
            }
        ),
        forgotten_codes=_frozen(ws.forgotten_codes.values()),
        forgotten_credentials=_frozen(ws.forgotten_credentials.values()),
    )
