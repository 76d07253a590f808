"""Seam: an embedded emulator of the Seam API (per-run workspaces) and the official OpenAPI document."""

from skillgrade.services.seam.emulator import SeamEmulator, WorkspaceHandle
from skillgrade.services.seam.spec import SeamSpec, load_spec

__all__ = ["SeamEmulator", "SeamSpec", "WorkspaceHandle", "load_spec"]
