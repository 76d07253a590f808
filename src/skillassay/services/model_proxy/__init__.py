"""The agent's path to its model: one proxy per job (``proxy.ModelProxy``), per-run grants
(``ModelEndpoint``), the usage each run's calls recorded (``GrantReport``) and an HTTP client for runs on
other nodes (``ModelProxyClient``).

``proxy`` (uvicorn, starlette) is imported only by whoever starts a proxy; agents need only the endpoint
model."""

from skillassay.services.model_proxy.grants import GrantReport, ModelEndpoint, ModelGrants, ModelProxyClient

__all__ = ["GrantReport", "ModelEndpoint", "ModelGrants", "ModelProxyClient"]
