"""Where skillassay keeps its cache: ``$SKILLASSAY_CACHE_DIR``, else ``~/.cache/skillassay`` of the user
running it, as a new user's process resolves it (tests/test_first_run.py gives its run the session's
cache)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fresh_home import fresh_home

PRINT_CACHE = "from skillassay.paths import cache_dir; print(cache_dir())"


def test_a_new_users_cache_is_under_their_home() -> None:
    with fresh_home() as env:
        out = subprocess.run(
            [sys.executable, "-c", PRINT_CACHE], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert Path(out) == Path(env["HOME"]) / ".cache" / "skillassay"


def test_skillassay_cache_dir_overrides_the_home(tmp_path: Path) -> None:
    with fresh_home() as env:
        env["SKILLASSAY_CACHE_DIR"] = str(tmp_path / "elsewhere")
        out = subprocess.run(
            [sys.executable, "-c", PRINT_CACHE], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert Path(out) == tmp_path / "elsewhere"
