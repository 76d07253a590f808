"""Where skillassay keeps what outlives a run on this machine: one cache folder for every part."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported on a fast command's path
if TYPE_CHECKING:
    from pathlib import Path


def cache_folder() -> str:
    """``$SKILLASSAY_CACHE_DIR``, else ``~/.cache/skillassay``, as a string: for a fast command's process,
    which does not import pathlib (``workspace/output_memo.py``)."""
    home = os.path.expanduser("~")
    return os.environ.get("SKILLASSAY_CACHE_DIR") or os.path.join(home, ".cache", "skillassay")


def cache_dir() -> Path:
    """``$SKILLASSAY_CACHE_DIR``, else ``~/.cache/skillassay`` (install and build caches, agent CLIs,
    exports).
    """
    from pathlib import Path

    return Path(cache_folder())
