"""The ASGI application: Seam's HTTP surface (auth, methods, query strings, validation, errors) and, behind
the admin credential, ``/_emulator``.

Every answer carries a ``seam-request-id`` header and is in Seam's shape; an emulator bug is a 500 without any
traceback in the answer. The event loop only routes, authenticates and waits for bodies; the CPU work of a
request (parsing, validation, the handler, serialising the answer) runs on a worker thread under the
workspace's own lock (only a small request on a route always quick so far in its workspace runs on the
loop itself, when the lock is free: a thread hop would cost more), and each workspace has a fair share of
the workers and of the CPU (``fairness.py``). So one client's huge or slow request costs its own workspace
time, never another run's.

Collaborators are passed in (the emulator builds them); this module knows nothing of ``SeamEmulator``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import weakref
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from skillassay.seam.emulator.automations import Engine
from skillassay.seam.emulator.bodies import ClientGone, Limits, parse_json, read_body
from skillassay.seam.emulator.control import ControlRoutes
from skillassay.seam.emulator.errors import SeamApiError, invalid_input, unauthorized
from skillassay.seam.emulator.fairness import WorkspaceBudget, full_collections
from skillassay.seam.emulator.faults import FaultTable
from skillassay.seam.emulator.handlers import Ctx, Handler
from skillassay.seam.emulator.params import coerce_query, format_validation_errors
from skillassay.seam.emulator.spec import RouteSpec, SeamSpec
from skillassay.seam.emulator.store import Store, Workspace, new_id

log = logging.getLogger(__name__)

# A request runs on the event loop, not a worker thread, only with a body this small (bytes) and when the
# same route always cost under INLINE_MAX_SECONDS of CPU in its workspace: a thread hop costs more than such
# a request, and it holds up other workspaces no longer than a worker thread would (a thread running Python
# keeps the interpreter lock, the event loop waiting, for up to the switch interval, 5 ms, at a time).
INLINE_MAX_BODY = 8 * 1024
INLINE_MAX_SECONDS = sys.getswitchinterval()


def _json(body: Any, status: int, request_id: str) -> Response:
    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
        headers={"seam-request-id": request_id},
    )


@dataclass(frozen=True, slots=True)
class _Call:
    """One API request on its way to its answer: what the inline and worker paths both need."""

    ws: Workspace
    budget: WorkspaceBudget
    path: str
    route: RouteSpec
    handler: Handler
    query: list[tuple[str, str]]
    raw: bytes
    base_url: str


class SeamApp:
    def __init__(
        self,
        *,
        spec: SeamSpec,
        store: Store,
        engine: Engine,
        faults: FaultTable,
        handlers: Mapping[str, Handler],
        control: ControlRoutes,
        limits: Limits,
        workers: int = 8,
    ):
        self.spec = spec
        self.store = store
        self.engine = engine
        self.faults = faults
        self.handlers = handlers  # looked up per request
        self.control = control
        self.limits = limits
        self._workers = workers
        self._executor: ThreadPoolExecutor | None = None
        self._budgets: weakref.WeakKeyDictionary[Workspace, WorkspaceBudget] = weakref.WeakKeyDictionary()
        self._base_urls: dict[tuple[Any, ...], str] = {}

    def close(self) -> None:
        """Release the worker threads (made again on the next request)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        # their semaphores belong to the event loop that made them
        self._budgets = weakref.WeakKeyDictionary()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request_id = new_id()
        path = url_path(scope)
        try:
            if path.startswith("/_emulator"):
                body = await self.control.handle(Request(scope, receive))
                response = Response(
                    json.dumps({"ok": True, **body}, separators=(",", ":")),
                    media_type="application/json",
                    headers={"seam-request-id": request_id},
                )
            else:
                response = await self._api(scope, receive, path, request_id)
        except ClientGone:
            return
        except SeamApiError as err:
            response = _json(err.body(request_id), err.status, request_id)
            if err.status == 408:
                response.headers["connection"] = "close"  # the client is too slow to wait for further
        except Exception:  # an emulator bug: answer like Seam's 500 and keep serving
            log.exception("seam emulator failed on %s %s", scope["method"], path)
            internal = SeamApiError(500, "internal_server_error", "Internal error in the Seam emulator")
            response = _json(internal.body(request_id), 500, request_id)
        await response(scope, receive, send)

    # -- the Seam API ------------------------------------------------------------------------------
    async def _api(self, scope: Scope, receive: Receive, url: str, request_id: str) -> Response:
        path = "/" + url.strip("/")
        # A request carrying a workspace's key is logged for that workspace whatever its fate (a wrong route
        # is the app's mistake too), with the status it is answered: the harness reads what the app sent and
        # how it ended.
        ws = self._workspace(scope)
        query = scope.get("query_string", b"").decode()
        record = ws.log_request(scope["method"], path, query) if ws is not None else None
        try:
            response = await self._route(scope, receive, request_id, path, ws)
        except SeamApiError as err:
            if record is not None:
                record.answer(err.status, f"{err.type}: {err.message}")
            raise
        except ClientGone:
            if record is not None:
                record.answer(499, "client_gone: the client went away before the answer")
            raise
        except Exception:
            if record is not None:
                record.answer(500, "internal_server_error: Internal error in the Seam emulator")
            raise
        if record is not None:
            record.answer(response.status_code)
        return response

    async def _route(
        self, scope: Scope, receive: Receive, request_id: str, path: str, ws: Workspace | None
    ) -> Response:
        method = scope["method"]
        route = self.spec.routes.get(path)
        handler = self.handlers.get(path)
        if route is None:
            raise SeamApiError(404, "not_found", f"Route not found: {method} {path}")
        if handler is None:
            raise SeamApiError(
                501, "not_implemented", f"The emulator does not implement {path} (it exists in Seam)"
            )
        # Older SDKs POST everything; current ones use the spec's GET/PUT/PATCH/DELETE.
        if method != "POST" and method not in route.methods:
            raise SeamApiError(405, "method_not_allowed", f"{method} is not allowed on {path}")
        if ws is None:
            raise unauthorized()
        fault = self.faults.take(path, ws.workspace_id)
        if fault is not None:
            if fault.latency:
                await asyncio.sleep(fault.latency)
            if fault.status:
                raise SeamApiError(
                    fault.status, fault.error_type, f"Injected fault: {fault.status} on {path}"
                )

        raw = await read_body(scope, receive, self.limits)
        query_string = scope.get("query_string", b"")
        query = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True) if query_string else []
        base_url = self._base_url(scope)
        budget = self._budgets.get(ws)
        if budget is None:
            limits = self.limits
            budget = WorkspaceBudget(limits.cpu_share, limits.cpu_burst, limits.max_concurrent_per_workspace)
            self._budgets[ws] = budget
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=self._workers, thread_name_prefix="seam-emulator-work"
            )
        call = _Call(ws, budget, path, route, handler, query, raw, base_url)
        async with budget.turn():
            payload = self._inline(call)
            if payload is None:
                payload = await asyncio.get_running_loop().run_in_executor(
                    self._executor, self._metered, call
                )
        return Response(
            payload, status_code=200, media_type="application/json", headers={"seam-request-id": request_id}
        )

    def _inline(self, call: _Call) -> bytes | None:
        """The answer worked out on the event loop when that is cheaper than a thread hop: a small body, a
        route always quick so far in this workspace, and the workspace's lock free now (never waited
        for on the loop). None: do it on a worker thread."""
        if (
            len(call.raw) > INLINE_MAX_BODY
            or not call.budget.was_quick(call.path)
            or not call.ws.lock.acquire(blocking=False)
        ):
            return None
        try:
            return self._metered(call)
        finally:
            call.ws.lock.release()

    def _metered(self, call: _Call) -> bytes:
        """``_answer``, its CPU time charged to the workspace's budget and remembered for the route (whether
        it may run inline next time). CPU time, not wall time: on a loaded machine a cheap request's wall time
        takes in other threads' and processes' turns, and one such stall sent a route to the threads for
        good."""
        cpu, collections = time.thread_time(), full_collections()
        try:
            return self._answer(call)
        finally:
            spent = time.thread_time() - cpu
            call.budget.charge(spent)
            # a full collection that ran meanwhile (tens of ms on a big heap) is no sign the route is slow: a
            # request over the limit then is not judged (the route stays as it was, never made quick by it)
            if spent < INLINE_MAX_SECONDS or full_collections() == collections:
                call.budget.took(call.path, spent, INLINE_MAX_SECONDS)

    def _answer(self, call: _Call) -> bytes:
        """Parameters, validation, the handler, the answer."""
        ws, path, route, query, raw = call.ws, call.path, call.route, call.query, call.raw
        params: dict[str, Any] = {}
        if query:
            params.update(coerce_query(query, route.properties, route._resolve))
        if raw.strip():
            data = parse_json(raw, self.limits)
            if not isinstance(data, dict):
                raise invalid_input("Request body must be a JSON object")
            params.update(data)
        errors = route.validate(params, limit=self.limits.max_reported_errors)
        if errors:
            message, tree = format_validation_errors(errors)
            raise invalid_input(message, tree)

        ctx = Ctx(ws=ws, engine=self.engine, base_url=call.base_url, path=path)
        with ws.lock:
            if ws.deleted:
                raise unauthorized()
            try:
                result = call.handler(ctx, params)
                result["ok"] = True
                # Serialised under the lock: handlers answer shallow copies of live records.
                return json.dumps(result, separators=(",", ":")).encode()
            finally:
                if not path.endswith(("/list", "/get")):  # reads never wake waiters
                    self.store.touch(ws)

    def _workspace(self, scope: Scope) -> Workspace | None:
        """The workspace whose key the request carries, or None."""
        header = _header(scope, b"authorization")
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not token:
            token = _header(scope, b"seam-api-key")
        return self.store.by_api_key(token) if token else None

    def _base_url(self, scope: Scope) -> str:
        """``scheme://host[:port]`` (and the root path) the request was sent to, as starlette's
        ``request.base_url`` has it, remembered per scheme, Host header, server and root path (at most 64 of
        them: the Host header is the client's to choose)."""
        key = (
            scope.get("scheme"),
            _header(scope, b"host"),
            scope.get("server"),
            scope.get("root_path"),
            scope.get("app_root_path"),
        )
        known = self._base_urls.get(key)
        if known is None:
            known = str(Request(scope).base_url).rstrip("/")
            if len(self._base_urls) >= 64:
                self._base_urls.clear()
            self._base_urls[key] = known
        return known


def url_path(scope: Scope) -> str:
    """The request's path as starlette's ``request.url.path`` has it (``?``, ``#`` and ``\\`` escaped),
    without building the URL."""
    return scope["path"].replace("?", "%3F").replace("#", "%23").replace("\\", "%5C")


def _header(scope: Scope, name: bytes) -> str:
    """The first value of header ``name`` (lower case, as the server hands them over), or ""."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""
