"""Seam: an embedded emulator of the Seam API (per-run workspaces) and the official OpenAPI document.

The names below are loaded when first asked for: importing one submodule (``seam.emulator.spec``, as the
rubric does for the routes' names) must not start the whole server's imports (ASGI, HTTP client, automations).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillassay.seam.emulator.bodies import Limits
    from skillassay.seam.emulator.emulator import SeamEmulator, WorkspaceHandle
    from skillassay.seam.emulator.spec import SeamSpec, load_spec

__all__ = ["Limits", "SeamEmulator", "SeamSpec", "WorkspaceHandle", "load_spec"]

_HOME = {
    "Limits": "bodies",
    "SeamEmulator": "emulator",
    "WorkspaceHandle": "emulator",
    "SeamSpec": "spec",
    "load_spec": "spec",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
