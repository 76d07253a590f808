"""A node-local ledger of the process groups a distributed job's runs started, so they can be killed from
outside.

Agents and apps run in their own sessions: when the worker process that started them is killed (Ray's
force-cancel, the OOM killer, a lost node) they live on. So while a run executes, every group it registers
with ``reaper`` is also written here (one small file per group, under the system temp folder of the machine),
with enough identity to never kill a stranger that inherited the number: the start time of the group's leader
and of the worker that owns it.

``sweep`` runs on each node (a tiny task the driver sends there): it kills the groups of dead workers (after a
worker died) or all of the job's groups (Ctrl-C), and can leave a stop mark that makes any run still starting
refuse to start anything new.

Entries are signed with a key only the job's tasks hold (it travels as a task argument, never through a file),
so an agent that writes a forged entry cannot make the sweep kill anything of its choosing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from skillassay import reaper

STOP = "STOP"


def ledger_dir(session: str) -> Path:
    return Path(tempfile.gettempdir()) / "skillassay-ledger" / session


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat); None if it is gone
    or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


_FIELDS = ("pgid", "leader_start", "owner", "owner_start", "run")


def _sign(key: str, entry: dict) -> str:
    text = json.dumps([entry.get(f) for f in _FIELDS])
    return hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()


class Ledger:
    """What one run on this node registers, mirrored to files. Install with
    ``reaper.add_watcher(ledger.watch)``.
    """

    def __init__(self, session: str, key: str, run: str):
        self.key = key
        self.dir = ledger_dir(session)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.run = run
        self.owner = os.getpid()
        self.owner_start = _start_time(self.owner)

    def stopped(self) -> bool:
        return (self.dir / STOP).exists()

    def watch(self, event: str, pgid: int) -> None:
        entry = self.dir / f"{pgid}.json"
        if event == "register":
            if self.stopped():
                raise KeyboardInterrupt  # the job is being cancelled on this node: start nothing new
            data = {
                "pgid": pgid,
                "leader_start": _start_time(pgid),
                "owner": self.owner,
                "owner_start": self.owner_start,
                "run": self.run,
            }
            data["sig"] = _sign(self.key, data)
            tmp = entry.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            os.replace(tmp, entry)
        elif event == "unregister":
            entry.unlink(missing_ok=True)


def _ours(entry: dict) -> bool:
    """Is the group the entry names still the one that was registered (not a stranger reusing the number)?"""
    pgid = entry.get("pgid")
    if not isinstance(pgid, int) or pgid <= 1:
        return False
    members = reaper.group_members(pgid)
    if not members:
        return False
    leader = _start_time(pgid)
    # a live leader must be the one registered; a group whose leader exited keeps its number until its last
    # member dies, and the kernel hands out no pid equal to a live group's id, so it is still the same group
    return leader is None or entry.get("leader_start") in (None, leader)


def _owner_alive(entry: dict) -> bool:
    owner = entry.get("owner")
    return (
        isinstance(owner, int)
        and _start_time(owner) is not None
        and _start_time(owner) == entry.get("owner_start")
    )


def sweep(
    session: str,
    key: str,
    *,
    stop: bool = False,
    orphans_only: bool = False,
    runs: list[str] | None = None,
    remove: bool = False,
    grace: float = 2.0,
) -> int:
    """Kill the job's registered groups on this machine; return how many were still alive.

    ``orphans_only``: only groups whose owning worker is dead (a run still going keeps its processes), and
    those of ``runs`` (runs whose attempt failed: whatever of them is left is an orphan, whether or not its
    worker is). ``stop``: first leave the stop mark, so a run starting here from now on starts nothing.
    ``remove``: delete the ledger afterwards (the job is over on this machine)."""
    root = ledger_dir(session)
    if not root.is_dir():
        if stop:
            root.mkdir(parents=True, exist_ok=True)
        else:
            return 0
    if stop:
        (root / STOP).touch()
    targets: dict[int, Path] = {}
    for path in root.glob("*.json"):
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict) or not hmac.compare_digest(str(entry.get("sig")), _sign(key, entry)):
            continue  # not written by this job's runs: never acted on
        if orphans_only and entry.get("run") not in (runs or ()) and _owner_alive(entry):
            continue
        if _ours(entry):
            targets[entry["pgid"]] = path
        else:
            path.unlink(missing_ok=True)
    for pgid in targets:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = {g for g in targets if reaper.group_alive(g)}
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {g for g in left if reaper.group_alive(g)}
    for pgid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for path in targets.values():
        path.unlink(missing_ok=True)
    if remove:
        shutil.rmtree(root, ignore_errors=True)
    return len(targets)
