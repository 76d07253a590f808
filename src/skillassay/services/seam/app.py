"""The ASGI application: Seam's HTTP surface (auth, methods, query strings, validation, errors)
and ``/_emulator``.

Every answer carries a ``seam-request-id`` header. Handlers are quick in-memory work under one lock, so they
run on the event loop; only ``/_emulator/wait`` (which blocks) goes to a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from skillassay.services.seam.errors import SeamApiError, invalid_input, unauthorized
from skillassay.services.seam.handlers import HANDLERS, Ctx
from skillassay.services.seam.params import coerce_query, format_validation_errors

if TYPE_CHECKING:
    from skillassay.services.seam.emulator import SeamEmulator

log = logging.getLogger(__name__)

_FAULT_TYPES = {
    429: "rate_limited",
    500: "internal_server_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


@dataclass
class Fault:
    fault_id: str
    route: str  # "/access_codes/list" or "*"
    status: int | None
    times: int | None  # None: every time
    latency: float = 0.0
    workspace_id: str | None = None
    hits: int = field(default=0)


class FaultTable:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self, fault_id: str | None = None) -> None:
        with self._lock:
            self._faults = [f for f in self._faults if fault_id is not None and f.fault_id != fault_id]

    def list(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def take(self, route: str, workspace_id: str | None) -> Fault | None:
        if not self._faults:
            return None
        with self._lock:
            for fault in self._faults:
                if fault.route not in ("*", route):
                    continue
                if fault.workspace_id is not None and fault.workspace_id != workspace_id:
                    continue
                fault.hits += 1
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None


def _json(body: Any, status: int, request_id: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
        headers={"seam-request-id": request_id, **(headers or {})},
    )


class SeamApp:
    def __init__(self, emulator: SeamEmulator):
        self.emulator = emulator
        self.spec = emulator.spec

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        request_id = str(uuid.uuid4())
        try:
            if request.url.path.startswith("/_emulator"):
                response = await self._admin(request, request_id)
            else:
                response = await self._api(request, request_id)
        except SeamApiError as err:
            response = _json(err.body(request_id), err.status, request_id)
        except Exception:  # an emulator bug: answer like Seam's 500 and keep serving
            log.exception("seam emulator failed on %s %s", request.method, request.url.path)
            err = SeamApiError(500, "internal_server_error", "Internal error in the Seam emulator")
            response = _json(err.body(request_id), 500, request_id)
        await response(scope, receive, send)

    # -- the Seam API ------------------------------------------------------------------------------
    async def _api(self, request: Request, request_id: str) -> Response:
        path = "/" + request.url.path.strip("/")
        route = self.spec.routes.get(path)
        handler = HANDLERS.get(path)
        if route is None:
            raise SeamApiError(404, "not_found", f"Route not found: {request.method} {path}")
        if handler is None:
            raise SeamApiError(
                501, "not_implemented", f"The emulator does not implement {path} (it exists in Seam)"
            )
        # Older SDKs POST everything; current ones use the spec's GET/PUT/PATCH/DELETE.
        if request.method != "POST" and request.method not in route.methods:
            raise SeamApiError(405, "method_not_allowed", f"{request.method} is not allowed on {path}")

        ws = self._authenticate(request)
        self.emulator.request_log.append((ws.workspace_id, request.method, path, request.url.query))
        fault = self.emulator.faults.take(path, ws.workspace_id)
        if fault is not None:
            if fault.latency:
                await asyncio.sleep(fault.latency)
            if fault.status:
                raise SeamApiError(
                    fault.status,
                    _FAULT_TYPES.get(fault.status, "injected_fault"),
                    f"Injected fault: {fault.status} on {path}",
                )

        params = await self._params(request, route)
        errors = route.validate(params)
        if errors:
            message, tree = format_validation_errors(errors)
            raise invalid_input(message, tree)

        engine = self.emulator.engine
        store = self.emulator.store
        ctx = Ctx(ws=ws, engine=engine, base_url=self.emulator.base_url_or_request(request), path=path)
        with store.lock:
            try:
                result = handler(ctx, params)
                result["ok"] = True
                # Serialised under the lock: handlers answer shallow copies of live records.
                payload = json.dumps(result, separators=(",", ":"))
            finally:
                if not path.endswith(("/list", "/get")):  # reads never wake waiters
                    store.touch(ws)
        return Response(
            payload, status_code=200, media_type="application/json", headers={"seam-request-id": request_id}
        )

    def _authenticate(self, request: Request):
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not token:
            token = request.headers.get("seam-api-key", "")
        ws = self.emulator.store.by_api_key(token) if token else None
        if ws is None:
            raise unauthorized()
        return ws

    async def _params(self, request: Request, route) -> dict[str, Any]:
        params: dict[str, Any] = {}
        items = request.query_params.multi_items()
        if items:
            params.update(coerce_query(items, route.properties, route._resolve))
        body = await request.body()
        if body.strip():
            try:
                data = json.loads(body)
            except ValueError:
                raise invalid_input("Request body is not valid JSON") from None
            if not isinstance(data, dict):
                raise invalid_input("Request body must be a JSON object")
            params.update(data)
        return params

    # -- /_emulator: control routes for the harness (no auth: the server binds 127.0.0.1) ----------
    async def _admin(self, request: Request, request_id: str) -> Response:
        emu = self.emulator
        parts = [p for p in request.url.path.split("/") if p][1:]
        method = request.method
        body: dict[str, Any] = {}
        raw = await request.body()
        if raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                raise invalid_input("Request body is not valid JSON") from None
        if parts == ["info"] and method == "GET":
            return _json({"ok": True, **emu.info()}, 200, request_id)
        if parts == ["workspaces"] and method == "POST":
            handle = emu.create_workspace(name=body.get("name"))
            return _json({"ok": True, "workspace": handle.to_json()}, 200, request_id)
        if parts == ["workspaces"] and method == "GET":
            return _json({"ok": True, "workspaces": [w.to_json() for w in emu.workspaces()]}, 200, request_id)
        if len(parts) == 3 and parts[0] == "workspaces" and parts[2] == "state" and method == "GET":
            try:
                snap = emu.state(parts[1])
            except KeyError:
                raise SeamApiError(404, "workspace_not_found", f"No workspace {parts[1]}") from None
            return _json({"ok": True, "state": snap.to_json()}, 200, request_id)
        if parts == ["wait"] and method == "POST":
            return await self._wait(body, request_id)
        if parts == ["faults"] and method == "POST":
            fault_id = emu.inject_fault(
                route=body.get("route", "*"),
                status=body.get("status", 500),
                times=body.get("times", 1),
                latency=float(body.get("latency", 0.0)),
                workspace_id=body.get("workspace_id"),
            )
            return _json({"ok": True, "fault_id": fault_id}, 200, request_id)
        if parts == ["faults"] and method == "GET":
            return _json({"ok": True, "faults": [vars(f) for f in emu.faults.list()]}, 200, request_id)
        if parts == ["faults"] and method == "DELETE":
            emu.clear_faults()
            return _json({"ok": True}, 200, request_id)
        if parts == ["webhook_deliveries"] and method == "GET":
            return _json(
                {"ok": True, "deliveries": [vars(r) for r in emu.webhook_deliveries]}, 200, request_id
            )
        raise SeamApiError(404, "not_found", f"Route not found: {method} {request.url.path}")

    async def _wait(self, body: dict[str, Any], request_id: str) -> Response:
        from skillassay.services.seam.conditions import ConditionError, compile_condition

        workspace_id = body.get("workspace_id")
        if not workspace_id or workspace_id not in self.emulator.store.workspaces:
            raise SeamApiError(404, "workspace_not_found", f"No workspace {workspace_id}")
        try:
            predicate = compile_condition(body.get("condition") or {})
        except ConditionError as exc:
            raise invalid_input(str(exc)) from None
        timeout = float(body.get("timeout", 60.0))
        try:
            matched = await run_in_threadpool(self.emulator.wait_for, workspace_id, predicate, timeout)
        except TimeoutError as exc:
            raise SeamApiError(408, "timeout", str(exc)) from None
        return _json({"ok": True, "matched": matched}, 200, request_id)
