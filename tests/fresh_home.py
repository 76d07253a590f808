"""A new user's machine for the tests that play one: a home and skillassay's caches, emptied, under /tmp
(where CI runners and throwaway accounts keep them), with the package managers' download caches left where
they were."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# what would point the run at the operator's own caches or configuration instead of the new home's
HOME_VARIABLES = (
    "SKILLASSAY_CACHE_DIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
)


@contextmanager
def fresh_home() -> Iterator[dict[str, str]]:
    """The environment of a user whose home (so ``~/.cache/skillassay``) is new and empty, under /tmp."""
    old_home = Path.home()
    with tempfile.TemporaryDirectory(prefix="skillassay-new-user-", dir="/tmp") as root:
        env = {k: v for k, v in os.environ.items() if k not in HOME_VARIABLES}
        env["HOME"] = str(Path(root) / "home")
        Path(env["HOME"]).mkdir()
        # the downloads stay warm (a re-download proves nothing): the usual pip and npm caches
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(old_home / ".cache" / "pip")
        env["npm_config_cache"] = os.environ.get("npm_config_cache") or str(  # noqa: SIM112 - npm's own spelling
            old_home / ".npm"
        )
        yield env
