"""Sealed processes: what the agent, the app under test and the graders' commands may see and reach.

One module per backend behind ``skillassay.isolation.base.Isolation``: ``bubblewrap`` (the default on Linux) and
``none``. See docs/sealing.md.
"""

from __future__ import annotations

import importlib

from skillassay.isolation.base import (
    Endpoint,
    Isolation,
    IsolationError,
    Mount,
    Policy,
    Sandbox,
    Seal,
    SealRecord,
    SealReport,
)

DEFAULT = "bubblewrap"

# name -> "module:Class"; modules are imported on first use
_REGISTRY = {
    "bubblewrap": "skillassay.isolation.bubblewrap:Bubblewrap",
    "none": "skillassay.isolation.none:NoIsolation",
}


def available_isolations() -> list[str]:
    return list(_REGISTRY)


def get_isolation(name: str = DEFAULT) -> Isolation:
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise IsolationError(f"unknown isolation {name!r}; available: {', '.join(_REGISTRY)}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)()


__all__ = [
    "DEFAULT",
    "Endpoint",
    "Isolation",
    "IsolationError",
    "Mount",
    "Policy",
    "Sandbox",
    "Seal",
    "SealRecord",
    "SealReport",
    "available_isolations",
    "get_isolation",
]
