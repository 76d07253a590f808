"""What an agent is handed (a ``ModelEndpoint``), what a run gets back (a ``GrantReport``), and the client by
which a harness on any node asks a job's proxy for them."""

from __future__ import annotations

from typing import Protocol
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from skillassay.errors import InfrastructureError
from skillassay.usage import ModelCall, ModelUsage

ADMIN_PREFIX = "/_skillassay"


class ModelEndpoint(BaseModel):
    """The agent's only way to its model: the proxy's root URL and a token that is worth nothing elsewhere.

    Claude Code takes ``base_url`` as ``ANTHROPIC_BASE_URL`` (it appends ``/v1/messages``), Codex as its
    provider's ``base_url`` plus ``/v1``. The token goes where the CLI sends its key (``x-api-key`` or
    ``Authorization``)."""

    base_url: str
    token: str = Field(repr=False)

    @property
    def netloc(self) -> str:
        """host:port of the proxy, as the agent dials it (what a sandbox must let through)."""
        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{parts.hostname}:{port}"


class GrantReport(BaseModel):
    """What a run's model calls used: the sum, and every call in order."""

    run_id: str
    usage: ModelUsage = Field(default_factory=ModelUsage)
    calls: list[ModelCall] = Field(default_factory=list)
    # the body of the grant's first model call (up to 2 MB): what the CLI told the model at the start, before
    # any command of the agent's ran (not stored in run.json)
    first_request: str | None = None


class ModelGrants(Protocol):
    """Handing out per-run endpoints and reading back what they used: the proxy itself, or a client of it."""

    def grant(self, run_id: str) -> ModelEndpoint: ...

    def report(self, token: str) -> GrantReport: ...

    def release(self, token: str) -> GrantReport: ...

    def job_usage(self) -> ModelUsage: ...


class ModelProxyClient(BaseModel):
    """The admin side of a job's proxy over HTTP, for runs on other nodes. Holds the admin token: it stays in
    the harness and is never given to an agent. Plain data, so it pickles to any worker."""

    url: str
    admin_token: str = Field(repr=False)
    timeout: float = 30.0

    def _call(self, method: str, path: str, json: dict | None = None) -> dict:
        try:
            resp = httpx.request(
                method,
                self.url.rstrip("/") + ADMIN_PREFIX + path,
                json=json,
                headers={"authorization": f"Bearer {self.admin_token}"},
                timeout=self.timeout,
            )
        except httpx.HTTPError as exc:
            raise InfrastructureError(f"the model proxy at {self.url} did not answer: {exc}") from None
        if resp.status_code != 200:
            raise InfrastructureError(
                f"the model proxy at {self.url} answered {resp.status_code} to {method} {path}"
            )
        return resp.json()

    def grant(self, run_id: str) -> ModelEndpoint:
        return ModelEndpoint.model_validate(self._call("POST", "/grants", {"run_id": run_id}))

    def report(self, token: str) -> GrantReport:
        return GrantReport.model_validate(self._call("GET", f"/grants/{token}"))

    def release(self, token: str) -> GrantReport:
        return GrantReport.model_validate(self._call("DELETE", f"/grants/{token}"))

    def job_usage(self) -> ModelUsage:
        return ModelUsage.model_validate(self._call("GET", "/usage"))
