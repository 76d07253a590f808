"""Seam: an embedded emulator of the Seam API (per-run workspaces) and the official OpenAPI document."""

from skillassay.seam.emulator.bodies import Limits
from skillassay.seam.emulator.emulator import SeamEmulator, WorkspaceHandle
from skillassay.seam.emulator.spec import SeamSpec, load_spec

__all__ = ["Limits", "SeamEmulator", "SeamSpec", "WorkspaceHandle", "load_spec"]
