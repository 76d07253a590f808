"""Per-workspace state, one lock for all of it, and a condition notified on every change.

Records are plain dicts in the API's own shape; keys that start with ``_`` are the emulator's links
(grant of a code, customer of a reservation, ...) and never leave the server.
"""

from __future__ import annotations

import json
import secrets
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TypeVar

T = TypeVar("T")


def new_id() -> str:
    return str(uuid.uuid4())


def to_iso(dt: datetime) -> str:
    """Seam's timestamp format: UTC with milliseconds and ``Z``."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return to_iso(datetime.now(UTC))


def public(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k[0] != "_"}


def public_copy(record: Mapping[str, Any]) -> dict[str, Any]:
    # A JSON round trip: records are JSON data, and this is several times faster than copy.deepcopy.
    return json.loads(json.dumps(public(record)))


@dataclass
class Workspace:
    workspace_id: str
    name: str
    api_key: str
    created_at: str
    connected_accounts: dict[str, dict] = field(default_factory=dict)
    devices: dict[str, dict] = field(default_factory=dict)
    spaces: dict[str, dict] = field(default_factory=dict)
    customers: dict[str, dict] = field(default_factory=dict)
    user_identities: dict[str, dict] = field(default_factory=dict)
    access_grants: dict[str, dict] = field(default_factory=dict)
    access_methods: dict[str, dict] = field(default_factory=dict)
    access_codes: dict[str, dict] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    webhooks: dict[str, dict] = field(default_factory=dict)
    action_attempts: dict[str, dict] = field(default_factory=dict)
    version: int = 0

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
                )
            },
        }


def _frozen(records: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(MappingProxyType(public_copy(r)) for r in records)


class Store:
    """All workspaces of one emulator. Every mutation happens under ``lock`` and ends with ``touch``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
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

    def by_api_key(self, key: str) -> Workspace | None:
        wid = self._by_key.get(key)
        return self.workspaces.get(wid) if wid else None

    def get(self, workspace_id: str) -> Workspace:
        try:
            return self.workspaces[workspace_id]
        except KeyError:
            raise KeyError(f"no emulator workspace {workspace_id}") from None

    def touch(self, ws: Workspace) -> None:
        """Call under the lock after changing ``ws``: wakes every ``wait_for``."""
        ws.version += 1
        self.changed.notify_all()

    def snapshot(self, workspace_id: str) -> WorkspaceSnapshot:
        with self.lock:
            ws = self.get(workspace_id)
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
            )

    def wait_for(
        self, workspace_id: str, predicate: Callable[[WorkspaceSnapshot], T], timeout: float = 60.0
    ) -> T:
        """Block until ``predicate(snapshot)`` is truthy; return that value. Raises TimeoutError."""
        import time

        deadline = time.monotonic() + timeout
        seen = -1
        while True:
            with self.lock:
                ws = self.get(workspace_id)
                while ws.version == seen:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(
                            f"condition not met in workspace {workspace_id} within {timeout} s"
                        )
                    self.changed.wait(remaining)
                seen = ws.version
                snap = self.snapshot(workspace_id)
            # Evaluated outside the lock so a slow predicate never stalls the server.
            result = predicate(snap)
            if result:
                return result
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition not met in workspace {workspace_id} within {timeout} s")
