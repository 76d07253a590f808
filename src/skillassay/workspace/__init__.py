"""Scratch workspaces: a pristine fixture copy as a git repo, and the change an agent made to it."""

from skillassay.workspace.workspace import (
    EXCLUDED_DIRS,
    Change,
    FileChange,
    Workspace,
    compute_change,
    create_workspace,
    open_workspace,
    safe_read,
)

__all__ = [
    "EXCLUDED_DIRS",
    "Change",
    "FileChange",
    "Workspace",
    "compute_change",
    "create_workspace",
    "open_workspace",
    "safe_read",
]
