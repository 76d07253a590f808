"""Seam: an embedded emulator of the Seam API (per-run workspaces) and the official OpenAPI document."""

from skillassay.services.seam.bodies import Limits
from skillassay.services.seam.emulator import SeamEmulator, WorkspaceHandle
from skillassay.services.seam.spec import SeamSpec, load_spec

__all__ = ["Limits", "SeamEmulator", "SeamSpec", "WorkspaceHandle", "load_spec"]
