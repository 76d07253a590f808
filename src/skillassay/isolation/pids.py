"""How many tasks (processes and threads) a sandbox may hold: a pids cgroup of its own. (The other limit, the
size of any one file a sealed process writes, is ``RLIMIT_FSIZE``, set inside the sandbox by its backend.)

A sealed process runs as the harness's user outside its namespaces, and the kernel exempts root from the
per-user process limit (``RLIMIT_NPROC``): without a cgroup, a fork bomb in one sandbox takes every process
slot of the machine, and the harness (and every other run) can start nothing. So each sandbox gets a child of
the pids controller (cgroup v1 ``/sys/fs/cgroup/pids``, or v2 ``/sys/fs/cgroup`` with ``pids`` enabled),
``pids.max`` set, joined by the sandbox's first process before it starts bubblewrap (everything it starts is
counted).

Creating cgroups needs write access to the hierarchy (root, or a delegated subtree); without it there is no
limit and the run records ``max_tasks: null``.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from pathlib import Path

DEFAULT_MAX_TASKS = 1024  # a CLI with its tools, an npm install, a Next.js build: a few hundred at most
# bytes of any one file a sealed process writes (RLIMIT_FSIZE): a run keeps 20 MB
DEFAULT_MAX_FILE_SIZE = 1 << 30
_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")
_counter = itertools.count()


@functools.lru_cache(maxsize=1)
def _base() -> Path | None:
    """``<hierarchy>/skillassay``, made when missing; None when no pids hierarchy is writable here."""
    try:
        if (_V1 / "cgroup.procs").is_file():
            base = _V1 / "skillassay"
            base.mkdir(exist_ok=True)
        elif "pids" in (_V2 / "cgroup.controllers").read_text().split():
            base = _V2 / "skillassay"
            base.mkdir(exist_ok=True)
            for parent in (_V2, base):
                if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
                    (parent / "cgroup.subtree_control").write_text("+pids")
        else:
            return None
    except OSError:
        return None
    _sweep(base)
    return base


def _sweep(base: Path) -> None:
    """Remove what sandboxes of dead harnesses left (an empty cgroup is removable; a live one is not
    touched).
    """
    for child in base.glob("s-*"):
        pid = child.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                child.rmdir()


class TaskLimit:
    """One sandbox's pids cgroup. ``procs`` is the file its first process writes its pid into (None: no
    limit).
    """

    def __init__(self, max_tasks: int | None = DEFAULT_MAX_TASKS):
        self.max_tasks: int | None = None
        self.path: Path | None = None
        base = _base() if max_tasks else None
        if base is None:
            return
        path = base / f"s-{os.getpid()}-{next(_counter)}-{time.monotonic_ns()}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_tasks))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return
        self.path, self.max_tasks = path, max_tasks

    @property
    def procs(self) -> Path | None:
        return self.path / "cgroup.procs" if self.path else None

    def peak(self) -> int | None:
        """The most tasks it held at once (where the kernel says: pids.peak), else None."""
        try:
            return int((self.path / "pids.peak").read_text()) if self.path else None
        except (OSError, ValueError):
            return None

    def refused(self) -> int:
        """How many forks the limit refused (pids.events ``max``)."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines() if self.path else []:
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def close(self, wait: float = 2.0) -> None:
        """Remove the cgroup once its tasks are gone (killing any left: the sandbox is over)."""
        if self.path is None:
            return
        deadline = time.monotonic() + wait
        while True:
            try:
                self.path.rmdir()
                break
            except OSError:
                if time.monotonic() >= deadline:
                    break
            with contextlib.suppress(OSError, ValueError):
                for pid in (self.path / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.05)
        self.path = None
