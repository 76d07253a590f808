"""The language runtimes a sealed process is shown (read-only): the Python the harness runs on (its base install
and its virtual environment, whose absolute paths other venvs point into) and the ``node`` on the harness's PATH.
Runtimes under the system folders are visible anyway; others (pyenv, nvm, a venv in a checkout) are mounted at the
same path and their ``bin`` folders put first on the sealed PATH."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from skillassay.isolation.base import Mount

SYSTEM = ("/usr/", "/bin/", "/lib/", "/lib64/", "/sbin/")


def _system(path: Path) -> bool:
    return any(str(path).startswith(p) for p in SYSTEM)


def runtimes(venv: bool = True) -> tuple[list[Mount], list[str]]:
    """(mounts, bin folders for PATH) of the harness's Python (with its venv when ``venv``) and of node."""
    mounts: list[Mount] = []
    path: list[str] = []
    prefixes = [Path(sys.base_prefix)]
    if venv and sys.prefix != sys.base_prefix:
        prefixes.append(Path(sys.prefix))
    for prefix in prefixes:
        if not _system(prefix):
            mounts.append(Mount(src=prefix))
    base_bin = Path(sys.base_prefix) / "bin"
    if not _system(base_bin):
        path.append(str(base_bin))
    node = shutil.which("node")
    if node:
        real = Path(os.path.realpath(node))
        prefix = real.parent.parent  # <prefix>/bin/node
        if not _system(real):
            mounts.append(Mount(src=prefix))
            path.append(str(prefix / "bin"))
    return mounts, path
