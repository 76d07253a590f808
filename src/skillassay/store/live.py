"""A job's live state: ``<job>/live.json``, written (atomically, scrubbed of secrets) by the process running
the job each time a run changes phase or finishes, and every ``HEARTBEAT_S`` seconds besides; read by
``skillassay serve --live``. The owner's pid, host and heartbeat let a reader tell a job that crashed from
one still running (``staleness``)."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay.secrets import Redactor
from skillassay.store.files import scrub_record, write_json_atomic
from skillassay.store.records import Variant

LIVE_FILE = "live.json"
HEARTBEAT_S = 2.0
STALE_AFTER_S = 15.0  # no heartbeat for this long: the job's process is gone (or its machine is)
FINISHED_KEPT = 50  # the newest finished runs kept in the file (the counts cover all of them)


class LiveLane(BaseModel):
    """A run under way."""

    eval_id: str
    variant: Variant
    run_index: int
    phase: str
    started_at: datetime  # its first phase
    phase_at: datetime  # its current phase's start


class LiveRun(BaseModel):
    """A run finished in this session of the job."""

    eval_id: str
    variant: Variant
    run_index: int
    outcome: str
    passed: bool | None = None
    score: float | None = None
    cost_usd: float | None = None
    seconds: float | None = None
    run_dir: str | None = None
    finished_at: datetime


class LiveJob(BaseModel):
    job_id: str
    status: str = "running"  # then the job's end: finished, stopped, incomplete, interrupted
    executor: str = "local"
    pid: int = Field(default_factory=os.getpid)
    host: str = Field(default_factory=socket.gethostname)
    started_at: datetime
    heartbeat: datetime
    ended_at: datetime | None = None
    planned: int  # the runs this session set out to do
    done: int = 0
    not_started: int = 0  # kept from starting by --max-cost
    outcomes: dict[str, int] = Field(default_factory=dict)  # every finished run's outcome, counted
    max_cost: float | None = None
    spent_usd: float = 0.0
    lanes: list[LiveLane] = Field(default_factory=list)
    finished: list[LiveRun] = Field(default_factory=list)  # newest first, at most FINISHED_KEPT


def live_path(results_root: Path, job_id: str) -> Path:
    return Path(results_root) / job_id / LIVE_FILE


def write_live(results_root: Path, state: LiveJob, redactor: Redactor) -> Path:
    """Write the state through the same scrubbing as every stored record."""
    path = live_path(results_root, state.job_id)
    write_json_atomic(path, scrub_record(state, redactor)[0].model_dump_json(indent=1))
    return path


def read_live(path: Path) -> LiveJob:
    return LiveJob.model_validate_json(Path(path).read_text(encoding="utf-8"))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process of that pid: alive
        return True
    try:  # a zombie is dead for this purpose
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")
    except OSError:
        return True


def staleness(state: LiveJob, now: datetime | None = None) -> str | None:
    """Why a job that says it is running is not (its owner on this machine is gone, or its heartbeat is
    older than ``STALE_AFTER_S``), or None."""
    if state.status != "running":
        return None
    if state.host == socket.gethostname() and not _pid_alive(state.pid):
        return f"its process (pid {state.pid}) is no longer running"
    age = ((now or datetime.now(UTC)) - state.heartbeat).total_seconds()
    if age > STALE_AFTER_S:  # said the same way on every poll: the view's document stays the same
        return f"no heartbeat since {state.heartbeat:%Y-%m-%d %H:%M:%S} UTC (pid {state.pid} on {state.host})"
    return None
