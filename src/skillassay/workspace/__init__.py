"""Scratch workspaces: a pristine fixture copy as a git repo, and the one change an agent made to it.

``changes`` (the ChangeSet and the skip-list) imports nothing heavy, so the rubric reads it without pydantic;
the names below are imported on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported: the rubric's memo reads this package on a fast path
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "OUTPUT_DIRS": "skillassay.workspace.skiplist",
    "SKIP_DIRS": "skillassay.workspace.skiplist",
    "ChangeSet": "skillassay.workspace.changes",
    "FileChange": "skillassay.workspace.changes",
    "compare_trees": "skillassay.workspace.changes",
    "copy_ignore": "skillassay.workspace.changes",
    "skipped_dir": "skillassay.workspace.skiplist",
    "DEFAULT_MAX_CHANGE": "skillassay.workspace.bounded_copy",
    "OverLimit": "skillassay.workspace.bounded_copy",
    "SizeReport": "skillassay.workspace.bounded_copy",
    "keep": "skillassay.workspace.bounded_copy",
    "snapshot": "skillassay.workspace.bounded_copy",
    "Workspace": "skillassay.workspace.workspace",
    "create_workspace": "skillassay.workspace.workspace",
    "open_workspace": "skillassay.workspace.workspace",
    "safe_read": "skillassay.workspace.workspace",
}

__all__ = [
    "DEFAULT_MAX_CHANGE",
    "OUTPUT_DIRS",
    "SKIP_DIRS",
    "ChangeSet",
    "FileChange",
    "OverLimit",
    "SizeReport",
    "Workspace",
    "compare_trees",
    "copy_ignore",
    "create_workspace",
    "keep",
    "open_workspace",
    "safe_read",
    "skipped_dir",
    "snapshot",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
