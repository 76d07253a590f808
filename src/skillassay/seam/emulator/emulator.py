"""``SeamEmulator``: the embedded Seam sandbox's lifecycle (uvicorn in a background thread) and harness API.

emu = SeamEmulator(async_delay=1.0).start()
ws = emu.create_workspace(name="run-123")     # own seam_test_... key, own seeded locks
... point an app at emu.base_url with SEAM_ENDPOINT / SEAM_API_KEY=ws.api_key (and nothing else) ...
emu.wait_for_access_codes(ws.workspace_id, device_id, lambda codes: any(c["status"] == "set" for c in codes))
emu.stop()

The harness holds ``emu.admin_token`` (random per start): the HTTP control routes under ``/_emulator`` answer
only to it. Never give it to an app; an app's requests to ``/_emulator`` get Seam's 404 for an unknown route.
"""

from __future__ import annotations

import gc
import secrets
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

from skillassay.asgi import ThreadedServer, bind
from skillassay.errors import InfrastructureError
from skillassay.seam.emulator.app import SeamApp
from skillassay.seam.emulator.automations import Engine, Scheduler
from skillassay.seam.emulator.bodies import Limits
from skillassay.seam.emulator.control import ControlRoutes
from skillassay.seam.emulator.families import routes as _family_routes  # noqa: F401 - registers them
from skillassay.seam.emulator.faults import Fault, FaultTable
from skillassay.seam.emulator.generic import GenericEngine, RouteTable
from skillassay.seam.emulator.handlers import HANDLERS
from skillassay.seam.emulator.seed import seed_sandbox
from skillassay.seam.emulator.spec import SPEC_PACKAGE, SeamSpec, load_spec, route_name
from skillassay.seam.emulator.store import RequestRecord, Store, WorkspaceSnapshot, public_copy
from skillassay.seam.emulator.webhooks import DeliveryRecord, WebhookDispatcher, origin

T = TypeVar("T")


@dataclass(frozen=True)
class WorkspaceHandle:
    workspace_id: str
    api_key: str
    name: str
    devices: list[dict[str, Any]] = field(default_factory=list)

    def device(self, name: str) -> dict[str, Any]:
        """A seeded device by its name (e.g. ``"FRONT DOOR"``)."""
        for device in self.devices:
            if device["properties"]["name"] == name:
                return device
        raise KeyError(name)

    def to_json(self, *, with_key: bool = True) -> dict[str, Any]:
        out = {"workspace_id": self.workspace_id, "name": self.name, "devices": self.devices}
        if with_key:
            out["api_key"] = self.api_key
        return out


class SeamEmulator:
    """An in-memory Seam API for the routes an integration uses, faithful to the official SDKs."""

    def __init__(
        self,
        async_delay: float = 1.0,
        *,
        automation_delay: float = 0.0,
        spec: SeamSpec | None = None,
        webhook_retries: int = 2,
        limits: Limits | None = None,
    ):
        self.spec = spec or load_spec()
        for path in HANDLERS:  # compile every emulated route's validator now (~40 ms), not on first use
            _ = self.spec.routes[path].validator
        # (the fast validators compile on a background thread, each on its route's first request: spec.py)
        self.limits = limits or Limits()
        # The harness's credential for /_emulator: new at every start, held only in this process.
        self._admin_token = secrets.token_urlsafe(32)
        self.store = Store()
        self.faults = FaultTable()
        self._scheduler = Scheduler()
        self._dispatcher = WebhookDispatcher(retries=webhook_retries)
        self.engine = Engine(self.store, self._scheduler, self._dispatcher, async_delay, automation_delay)
        # hand-written handlers first; the rest of the public API from the spec (approximate)
        self.routes = RouteTable(HANDLERS, GenericEngine(self.spec))
        self._seam_app = SeamApp(
            spec=self.spec,
            store=self.store,
            engine=self.engine,
            faults=self.faults,
            handlers=self.routes,
            control=ControlRoutes(self, self._admin_token, self.limits),
            limits=self.limits,
        )
        self.app: Any = self._seam_app  # what uvicorn serves (tests may wrap it before start())
        self._server: ThreadedServer | None = None
        self._base_url: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def async_delay(self) -> float:
        return self.engine.async_delay

    @property
    def spec_version(self) -> str:
        return self.spec.version

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise InfrastructureError("the Seam emulator is not serving: call start() first")
        return self._base_url

    @property
    def admin_token(self) -> str:
        """The credential the HTTP control routes (``/_emulator``) demand, as ``authorization: Bearer
        <token>``. For the harness only: an app must never see it."""
        return self._admin_token

    def start(self, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0) -> Self:
        """Serve on a background thread; returns once the socket accepts connections."""
        self._scheduler.start()
        self._dispatcher.start()
        # The parsed OpenAPI document and compiled validators are hundreds of thousands of long-lived
        # objects; moving them out of the collector's generations keeps full collections (latency
        # spikes) short.
        gc.freeze()
        if self._server is not None:
            return self
        try:
            sock = bind(host, port)
        except OSError as exc:
            raise InfrastructureError(f"the Seam emulator cannot listen on {host}:{port}: {exc}") from exc
        self._server = ThreadedServer(
            self.app,
            sock,
            name="seam-emulator-http",
            what="the Seam emulator's HTTP server",
            error=InfrastructureError,
            lifespan="off",
            http="httptools",  # a C parser: a third of h11's cost per request
            timeout_keep_alive=30,
            backlog=512,
        ).start(timeout)
        bound_port = self._server.port
        shown = f"[{host}]" if ":" in host else host
        self._base_url = f"http://{shown}:{bound_port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
            self._base_url = None
        self._scheduler.stop()
        self._dispatcher.stop()
        self._seam_app.close()

    def __enter__(self) -> Self:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Blocking variant for the CLI (Ctrl-C stops it)."""
        self.start(host, port)
        try:
            while self._server is not None and self._server.join(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    # -- workspaces --------------------------------------------------------------------------------
    def create_workspace(self, name: str | None = None) -> WorkspaceHandle:
        ws = self.store.add_workspace(name or f"skillassay-{uuid.uuid4().hex[:8]}")
        with ws.lock:
            seed_sandbox(ws)
            self.store.touch(ws)
            devices = [public_copy(d) for d in ws.devices.values()]
        return WorkspaceHandle(ws.workspace_id, ws.api_key, ws.name, devices)

    def limit_webhooks(self, workspace_id: str, origins: Iterable[str]) -> None:
        """Deliver this workspace's webhooks only to these origins (``"http://127.0.0.1:8123"``; an empty
        list: none). Deliveries elsewhere are recorded as refused, never sent: the emulator posts from the
        harness's process, so an app must not use it to reach what its sandbox does not let it reach. By
        default a workspace may post anywhere (a standalone emulator serving one developer)."""
        allowed = set()
        for url in origins:
            o = origin(url)
            if o is None:
                raise ValueError(f"not an http(s) origin: {url!r}")
            allowed.add(o)
        ws = self.store.get(workspace_id)
        with ws.lock:
            ws.webhook_origins = frozenset(allowed)

    def workspaces(self) -> list[WorkspaceHandle]:
        handles = []
        for ws in self.store.all():
            with ws.lock:
                devices = [public_copy(d) for d in ws.devices.values()]
            handles.append(WorkspaceHandle(ws.workspace_id, ws.api_key, ws.name, devices))
        return handles

    def delete_workspace(self, workspace_id: str) -> None:
        """Remove a workspace: its key stops working, its waiters wake with KeyError, its faults go."""
        self.store.remove_workspace(workspace_id)
        self.faults.clear(workspace_id=workspace_id)

    def state(self, workspace_id: str) -> WorkspaceSnapshot:
        return self.store.snapshot(workspace_id)

    def requests(self, workspace_id: str) -> list[RequestRecord]:
        """The workspace's recent authenticated API requests, oldest first (the last 2000): what its app
        sent.
        """
        return list(self.store.get(workspace_id).requests)

    def requests_logged(self, workspace_id: str) -> int:
        """How many requests the workspace ever logged (its log keeps the last 2000)."""
        return self.store.get(workspace_id).requests_logged

    def due_within(self, workspace_id: str, seconds: float) -> int:
        """How many of the workspace's scheduled tasks (codes being programmed, pushes being applied) fall due
        within ``seconds``: 0 means nothing will change there unless a client sends another request."""
        return self.store.get(workspace_id).due_within(seconds)

    def info(self) -> dict[str, Any]:
        return {
            "emulator": "skillassay-seam-emulator",
            "spec_version": self.spec_version,
            "spec_package": SPEC_PACKAGE,
            "async_delay": self.async_delay,
            "workspace_count": len(self.store.workspaces),
            "limits": vars(self.limits),
        }

    # -- waiting -----------------------------------------------------------------------------------
    def wait_for(
        self, workspace_id: str, predicate: Callable[[WorkspaceSnapshot], T], timeout: float = 60.0
    ) -> T:
        """Block until ``predicate(snapshot)`` is truthy (re-checked on every change); return its value."""
        return self.store.wait_for(workspace_id, predicate, timeout)

    def wait_for_access_codes(
        self,
        workspace_id: str,
        device_id: str | None = None,
        predicate: Callable[[list[Mapping[str, Any]]], Any] | None = None,
        timeout: float = 60.0,
        *,
        reservation_key: str | None = None,
    ) -> Any:
        """Wait until the codes on ``device_id`` (optionally only those of ``reservation_key``) satisfy
        ``predicate`` (default: at least one code, all ``set``). Returns the predicate's value (or the
        codes)."""

        def check(snap: WorkspaceSnapshot) -> Any:
            codes = snap.codes(device_id=device_id, reservation_key=reservation_key)
            if predicate is None:
                return codes if codes and all(c["status"] == "set" for c in codes) else None
            return predicate(codes)

        return self.wait_for(workspace_id, check, timeout)

    def wait_for_events(
        self, workspace_id: str, event_type: str, count: int = 1, timeout: float = 60.0, **fields: Any
    ) -> list[Mapping[str, Any]]:
        def check(snap: WorkspaceSnapshot) -> Any:
            found = [
                e
                for e in snap.events
                if e["event_type"] == event_type and all(e.get(k) == v for k, v in fields.items())
            ]
            return found if len(found) >= count else None

        return self.wait_for(workspace_id, check, timeout)

    # -- fault injection ---------------------------------------------------------------------------
    def inject_fault(
        self,
        *,
        workspace_id: str,
        route: str = "*",
        status: int | None = 500,
        times: int | None = 1,
        latency: float = 0.0,
    ) -> str:
        """Make the next ``times`` requests (None: every request) of one workspace to ``route`` fail with
        ``status`` and/or wait ``latency`` seconds first. ``route`` is ``"/access_codes/list"``,
        ``"access_codes.list"`` or ``"*"``. Faults are always per workspace: one run's never touch
        another's."""
        self.store.get(workspace_id)  # KeyError for an unknown workspace
        if route != "*":
            route = route_name(route)
        fault_id = str(uuid.uuid4())
        self.faults.add(Fault(fault_id, workspace_id, route, status or None, times, latency))
        return fault_id

    def faults_of(self, workspace_id: str | None = None) -> list[Fault]:
        return self.faults.list(workspace_id)

    def clear_faults(self, fault_id: str | None = None, *, workspace_id: str | None = None) -> None:
        """Remove one fault, one workspace's faults, or every fault."""
        self.faults.clear(workspace_id=workspace_id, fault_id=fault_id)

    def webhook_deliveries_of(self, workspace_id: str | None = None) -> list[DeliveryRecord]:
        return [r for r in self._dispatcher.records if workspace_id is None or r.workspace_id == workspace_id]

    @property
    def webhook_deliveries(self) -> list[DeliveryRecord]:
        return self.webhook_deliveries_of()


def wait_until(check: Callable[[], T], timeout: float, interval: float = 0.05) -> T:
    """Poll ``check`` for out-of-band conditions (e.g. a webhook receiver got N posts)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(interval)


__all__ = ["SeamEmulator", "WorkspaceHandle", "wait_until"]
