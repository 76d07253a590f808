"""Where skillassay keeps what outlives a run on this machine: one cache folder for every part."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$SKILLASSAY_CACHE_DIR``, else ``~/.cache/skillassay`` (install and build caches, agent CLIs,
    exports).
    """
    env = os.environ.get("SKILLASSAY_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "skillassay"
