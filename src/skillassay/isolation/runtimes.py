"""The language runtimes a sealed process is shown (read-only): the Python the harness runs on (its base
install and its virtual environment, whose absolute paths other venvs point into) and the ``node`` on the
harness's PATH. Runtimes under the system folders are visible anyway; others (pyenv, nvm, a venv in a
checkout) are mounted at the same path and their ``bin`` folders put first on the sealed PATH."""

from __future__ import annotations

from skillassay import stacks
from skillassay.isolation.base import Mount


def runtimes(venv: bool = True) -> tuple[list[Mount], list[str]]:
    """(mounts, bin folders for PATH) of every stack family's runtime: the harness's Python (with its venv
    when ``venv``) and node (``Stack.runtime_paths``)."""
    mounts: list[Mount] = []
    path: list[str] = []
    for family in stacks.families():
        shown, bins = family.runtime_paths(venv)
        mounts += [Mount(src=p) for p in shown]
        path += bins
    return mounts, path
