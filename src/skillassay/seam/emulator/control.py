"""``/_emulator``: the harness's control routes over HTTP, behind the emulator's admin credential.

The credential is random per emulator start and lives only in the harness process
(``SeamEmulator.admin_token``); an app is given its run's Seam key and the endpoint, never the credential. A
request to ``/_emulator`` without it (a run's key, no key, a wrong token) is answered exactly like any route
Seam does not have: 404 ``not_found``. So a run's ``SEAM_ENDPOINT`` cannot reach the control routes at all,
though it is the same listener.

Bodies are typed (pydantic, strict): a wrong type is a 400 ``invalid_input`` naming the field, in Seam's error
shape.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from skillassay.seam.emulator.bodies import Limits, parse_json, read_body
from skillassay.seam.emulator.conditions import ConditionError, compile_condition
from skillassay.seam.emulator.errors import SeamApiError, invalid_input
from skillassay.seam.emulator.faults import Fault
from skillassay.seam.emulator.store import WorkspaceSnapshot

T = TypeVar("T")


class ControlPlane(Protocol):
    """What the control routes need from the emulator (``SeamEmulator`` is one)."""

    def info(self) -> dict[str, Any]: ...
    def create_workspace(self, name: str | None = None) -> Any: ...
    def workspaces(self) -> list[Any]: ...
    def delete_workspace(self, workspace_id: str) -> None: ...
    def state(self, workspace_id: str) -> WorkspaceSnapshot: ...
    def wait_for(
        self, workspace_id: str, predicate: Callable[[WorkspaceSnapshot], T], timeout: float = 60.0
    ) -> T: ...
    def inject_fault(
        self,
        *,
        workspace_id: str,
        route: str = "*",
        status: int | None = 500,
        times: int | None = 1,
        latency: float = 0.0,
    ) -> str: ...
    def faults_of(self, workspace_id: str | None = None) -> list[Fault]: ...
    def clear_faults(self, fault_id: str | None = None, *, workspace_id: str | None = None) -> None: ...
    def webhook_deliveries_of(self, workspace_id: str | None = None) -> list[Any]: ...


# -- bodies --------------------------------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CreateWorkspace(_Body):
    name: str | None = Field(default=None, min_length=1, max_length=200)


class InjectFault(_Body):
    workspace_id: str = Field(min_length=1)
    route: str = Field(default="*", min_length=1, max_length=200)
    status: int | None = Field(default=500, ge=400, le=599)
    times: int | None = Field(default=1, ge=1)
    latency: float = Field(default=0.0, ge=0.0, le=120.0, allow_inf_nan=False)


class Wait(_Body):
    workspace_id: str = Field(min_length=1)
    condition: dict[str, Any] = Field(default_factory=dict)
    timeout: float = Field(default=60.0, gt=0.0, le=600.0, allow_inf_nan=False)


B = TypeVar("B", bound=_Body)


def _typed(model: type[B], data: Any) -> B:
    if not isinstance(data, dict):
        raise invalid_input("Request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        tree: dict[str, Any] = {"_errors": []}
        first = None
        for err in exc.errors():
            node = tree
            for part in err["loc"]:
                node = node.setdefault(str(part), {"_errors": []})
            node["_errors"].append(err["msg"])
            if first is None:
                first = f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
        raise invalid_input(first or "Invalid input", tree) from None


def _not_found(method: str, path: str) -> SeamApiError:
    # Word for word what an unknown Seam route answers: nothing tells an app that /_emulator exists.
    return SeamApiError(404, "not_found", f"Route not found: {method} {path}")


def _no_workspace(workspace_id: str) -> SeamApiError:
    return SeamApiError(404, "workspace_not_found", f"No workspace {workspace_id}")


class ControlRoutes:
    def __init__(self, plane: ControlPlane, admin_token: str, limits: Limits):
        self.plane = plane
        self._token = admin_token.encode()
        self.limits = limits

    def admitted(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        return bool(token) and hmac.compare_digest(token.encode(), self._token)

    async def handle(self, request: Request) -> dict[str, Any]:
        """The answer's body (``ok: true`` added); raises SeamApiError."""
        method, path = request.method, "/" + request.url.path.strip("/")
        if not self.admitted(request):
            raise _not_found(method, path)
        parts = path.split("/")[2:]
        query = request.query_params
        raw = await read_body(request.scope, request.receive, self.limits)
        body = parse_json(raw, self.limits) if raw.strip() else {}
        plane = self.plane

        if parts == ["info"] and method == "GET":
            return plane.info()
        if parts == ["workspaces"] and method == "POST":
            handle = plane.create_workspace(name=_typed(CreateWorkspace, body).name)
            return {"workspace": handle.to_json()}
        if parts == ["workspaces"] and method == "GET":
            # Ids and names only: a key is handed out once, to whoever created the workspace.
            return {"workspaces": [w.to_json(with_key=False) for w in plane.workspaces()]}
        if len(parts) == 2 and parts[0] == "workspaces" and method == "DELETE":
            self._snapshot(parts[1])
            plane.delete_workspace(parts[1])
            return {}
        if len(parts) == 3 and parts[0] == "workspaces" and parts[2] == "state" and method == "GET":
            return {"state": self._snapshot(parts[1]).to_json()}
        if parts == ["wait"] and method == "POST":
            return await self._wait(_typed(Wait, body))
        if parts == ["faults"] and method == "POST":
            spec = _typed(InjectFault, body)
            self._snapshot(spec.workspace_id)
            return {"fault_id": plane.inject_fault(**spec.model_dump())}
        if parts == ["faults"] and method == "GET":
            return {"faults": [f.to_json() for f in plane.faults_of(query.get("workspace_id"))]}
        if parts == ["faults"] and method == "DELETE":
            plane.clear_faults(workspace_id=query.get("workspace_id"), fault_id=query.get("fault_id"))
            return {}
        if parts == ["webhook_deliveries"] and method == "GET":
            return {"deliveries": [vars(r) for r in plane.webhook_deliveries_of(query.get("workspace_id"))]}
        raise _not_found(method, path)

    def _snapshot(self, workspace_id: str) -> WorkspaceSnapshot:
        try:
            return self.plane.state(workspace_id)
        except KeyError:
            raise _no_workspace(workspace_id) from None

    async def _wait(self, spec: Wait) -> dict[str, Any]:
        self._snapshot(spec.workspace_id)
        try:
            predicate = compile_condition(spec.condition)
        except ConditionError as exc:
            raise invalid_input(str(exc)) from None
        try:
            # blocks for up to `timeout`: Starlette's thread pool, never the API's workers
            matched = await run_in_threadpool(self.plane.wait_for, spec.workspace_id, predicate, spec.timeout)
        except TimeoutError as exc:
            raise SeamApiError(408, "timeout", str(exc)) from None
        except KeyError:
            raise _no_workspace(spec.workspace_id) from None
        return {"matched": matched}
