"""Injected faults, always scoped to one workspace: a fault set for one run can never fail another run's
calls.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any

FAULT_TYPES = {
    429: "rate_limited",
    500: "internal_server_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


@dataclass
class Fault:
    fault_id: str
    workspace_id: str
    route: str  # "/access_codes/list" or "*"
    status: int | None  # None: latency only
    times: int | None  # None: every time
    latency: float = 0.0
    hits: int = field(default=0)

    @property
    def error_type(self) -> str:
        return FAULT_TYPES.get(self.status or 0, "injected_fault")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class FaultTable:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, list[Fault]] = {}  # workspace_id -> faults, in the order they were added

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.setdefault(fault.workspace_id, []).append(fault)

    def clear(self, workspace_id: str | None = None, fault_id: str | None = None) -> None:
        """Remove one fault (``fault_id``), every fault of a workspace, or (neither given) all faults."""
        with self._lock:
            for wid in [workspace_id] if workspace_id is not None else list(self._faults):
                kept = [
                    f for f in self._faults.get(wid, []) if fault_id is not None and f.fault_id != fault_id
                ]
                if kept:
                    self._faults[wid] = kept
                else:
                    self._faults.pop(wid, None)

    def list(self, workspace_id: str | None = None) -> list[Fault]:
        with self._lock:
            if workspace_id is not None:
                return list(self._faults.get(workspace_id, []))
            return [f for faults in self._faults.values() for f in faults]

    def take(self, route: str, workspace_id: str) -> Fault | None:
        """The first fault of this workspace that matches ``route``, counted as used once."""
        if not self._faults:  # the common case, without the lock
            return None
        with self._lock:
            faults = self._faults.get(workspace_id)
            for fault in faults or []:
                if fault.route not in ("*", route):
                    continue
                fault.hits += 1
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        faults.remove(fault)  # type: ignore[union-attr]
                        if not faults:
                            self._faults.pop(workspace_id, None)
                return fault
        return None
