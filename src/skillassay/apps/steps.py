"""Child processes that always die with their whole process group, on every way out (including Ctrl-C)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from skillassay import reaper
from skillassay.isolation import IsolationError


class StepFailed(Exception):
    """An install/build/start step failed; ``reason`` is for the result, ``log_tail`` the evidence."""

    def __init__(self, step: str, reason: str, log_tail: str = ""):
        self.step, self.reason, self.log_tail = step, reason, log_tail
        super().__init__(f"{step}: {reason}")


def kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds; reap the leader.

    The child was started with ``start_new_session=True``, so its pid is its group id, and the group
    outlives the leader: children that the leader forked (npm -> node, sh -> python) die too.
    """
    reaper.kill_group(proc.pid, grace)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return  # still registered, so an interrupt's kill_all tries again
    reaper.unregister(proc.pid)


def tail(path: Path, max_bytes: int = 4000) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_step(
    step: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    sandbox=None,
) -> float:
    """Run one command to completion, appending its output to ``log``; sealed in ``sandbox`` (a
    ``skillassay.isolation.Sandbox``) when given. Returns seconds taken; raises StepFailed."""
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        try:
            if sandbox is not None:
                proc = sandbox.popen(list(argv), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT)
            else:
                proc = subprocess.Popen(
                    list(argv),
                    cwd=cwd,
                    env=dict(env),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        except OSError as e:
            raise StepFailed(step, f"could not run {argv[0]!r}: {e}") from e
        # timeout, exception or KeyboardInterrupt: the group never outlives the block; registered meanwhile so
        # a Ctrl-C, which never reaches the step's own group, can end it
        with reaper.tracked(proc, grace=1.0):
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise StepFailed(
                    step, f"{' '.join(argv)} took longer than {timeout:.0f} s", tail(log)
                ) from None
    if sandbox is not None and (problem := sandbox.setup_error(proc)):
        raise IsolationError(f"{step}: {problem}: {tail(log, 600).strip()}")  # the harness's, not the app's
    if rc != 0:
        raise StepFailed(step, f"{' '.join(argv)} exited with {rc}", tail(log))
    return time.monotonic() - t0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]
