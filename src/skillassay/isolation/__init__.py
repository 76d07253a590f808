"""Sealed processes: what the agent, the app under test and the graders' commands may see and reach.

One module per backend behind ``skillassay.isolation.base.Isolation``, found through the
``skillassay.isolation`` entry points: ``bubblewrap`` (the default on Linux) and ``none``. See
docs/sealing.md.
"""

from __future__ import annotations

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
GROUP = "skillassay.isolation"  # entry points: one per backend (pyproject.toml)


def available_isolations() -> list[str]:
    from skillassay import plugins

    return plugins.names(GROUP)


def get_isolation(name: str = DEFAULT) -> Isolation:
    from skillassay import plugins

    if not plugins.registered(GROUP, name):
        raise IsolationError(f"unknown isolation {name!r}; available: {', '.join(available_isolations())}")
    return plugins.load(GROUP, name)()


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
