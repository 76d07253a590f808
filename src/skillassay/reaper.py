"""The live child process groups of this skillassay process, so an interrupt can end them all.

Agents and apps under test run in their own sessions (``start_new_session=True``): killing the group reaches
every process they forked. The price is that a terminal's Ctrl-C (sent to the foreground group) never reaches
them, and worker threads never see KeyboardInterrupt at all. So every such group is registered here while it
lives, and whoever catches the interrupt calls ``kill_all()``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

_lock = threading.Lock()
_groups: set[int] = set()
_stopping = 0  # > 0 while an interrupted job shuts down (see stopping())
_watchers: list[Callable[[str, int], None]] = []


# -- looking at groups ---------------------------------------------------------------------------------------


def _live_groups() -> dict[int, list[int]] | None:
    """pgid -> live (non-zombie) member pids, from /proc; None where /proc is not available."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    groups: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields after the last ")" are fixed
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and fields[2].isdigit():
            groups.setdefault(int(fields[2]), []).append(int(entry.name))
    return groups


def group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) processes of the group, from /proc; None where /proc is not available."""
    groups = _live_groups()
    return None if groups is None else groups.get(pgid, [])


def _alive(pgids: set[int]) -> set[int]:
    # a zombie leader nobody reaped yet is not alive: /proc tells them apart, killpg(pgid, 0) does not
    groups = _live_groups()
    if groups is not None:
        return {g for g in pgids if g in groups}
    alive = set()
    for pgid in pgids:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        alive.add(pgid)
    return alive


def group_alive(pgid: int) -> bool:
    return bool(_alive({pgid}))


def _signal(pgids: set[int], sig: int) -> set[int]:
    """Send ``sig`` to each group; return the groups that still existed."""
    reached = set()
    for pgid in pgids:
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            continue
        except PermissionError:  # pgid reused by someone else's group: not ours to kill
            continue
        reached.add(pgid)
    return reached


def _wait_gone(pgids: set[int], timeout: float) -> set[int]:
    left = _alive(pgids)
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _alive(left)
    return left


def _terminate(pgids: set[int], grace: float) -> set[int]:
    """SIGTERM the groups, SIGKILL whatever is left after ``grace`` seconds; return the groups that
    existed.
    """
    reached = _signal(pgids, signal.SIGTERM)
    left = _wait_gone(reached, grace)
    if left:
        _signal(left, signal.SIGKILL)
        _wait_gone(left, 5.0)
    return reached


def kill_group(pgid: int, grace: float = 2.0) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left after ``grace`` seconds."""
    _terminate({pgid}, grace)


# -- the registry --------------------------------------------------------------------------------------------


def add_watcher(fn: Callable[[str, int], None]) -> None:
    """Call ``fn("register", pgid)`` before each group is noted (raising KeyboardInterrupt there refuses the
    group, which is then killed) and ``fn("unregister", pgid)`` once it is gone. The Ray executor keeps a
    node-local ledger this way, so groups a dead worker leaves behind can still be found and killed."""
    with _lock:
        _watchers.append(fn)


def remove_watcher(fn: Callable[[str, int], None]) -> None:
    with _lock:
        if fn in _watchers:
            _watchers.remove(fn)


def register(pgid: int) -> None:
    """Note a live group. While an interrupted job shuts down (``stopping()``), the group is killed at once
    and KeyboardInterrupt raised instead: a worker thread must not start anything new then."""
    with _lock:
        refused = _stopping > 0
        watchers = list(_watchers)
    if not refused:
        try:
            for watch in watchers:
                watch("register", pgid)
        except KeyboardInterrupt:
            refused = True
    if not refused:
        with _lock:
            refused = _stopping > 0
            if not refused:
                _groups.add(pgid)
    if refused:
        kill_group(pgid, grace=0.5)
        for watch in watchers:
            _quietly(watch, "unregister", pgid)
        raise KeyboardInterrupt


def unregister(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)
        watchers = list(_watchers)
    for watch in watchers:
        _quietly(watch, "unregister", pgid)


def _quietly(watch: Callable[[str, int], None], event: str, pgid: int) -> None:
    with suppress(OSError, KeyboardInterrupt):
        watch(event, pgid)


def registered() -> set[int]:
    with _lock:
        return set(_groups)


def kill_all(grace: float = 2.0) -> int:
    """SIGTERM every registered group, SIGKILL what is left after ``grace`` seconds; return how many groups
    were still there. The owners unregister them once they have reaped their leaders."""
    return len(_terminate(registered(), grace))


def interrupted() -> bool:
    """True while an interrupted job shuts down: a worker thread's run is abandoned, not recorded."""
    with _lock:
        return _stopping > 0


def check() -> None:
    """Raise KeyboardInterrupt in a worker thread while an interrupted job shuts down (its run is
    abandoned).
    """
    if interrupted():
        raise KeyboardInterrupt


@contextmanager
def stopping() -> Iterator[None]:
    """For the block (an executor killing its runs and waiting for its threads), new groups are refused and
    ``tracked`` blocks raise KeyboardInterrupt on the way out, so the threads return promptly."""
    global _stopping  # noqa: PLW0603 - a count the reaper's threads read under _lock
    with _lock:
        _stopping += 1
    try:
        yield
    finally:
        with _lock:
            _stopping -= 1


@contextmanager
def tracked(proc: subprocess.Popen, grace: float = 2.0) -> Iterator[int]:
    """Register ``proc``'s group (it was started with ``start_new_session=True``, so its pid is the pgid) for
    the block; on leaving it any way (including KeyboardInterrupt), kill whatever of the group is still
    alive and reap the leader. Yields the pgid."""
    pgid = proc.pid
    register(pgid)
    try:
        yield pgid
    finally:
        if proc.poll() is None or group_alive(pgid):
            kill_group(pgid, grace)
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        # only once the group is gone: if the kill above is interrupted (a second Ctrl-C), kill_all still sees
        # it
        unregister(pgid)
    check()
