"""Ctrl-C ends the agents too: they run in their own process groups, which a terminal's SIGINT never reaches,
so skillassay kills every registered group on the way out (serially, and from worker threads with --jobs
2)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillassay import reaper

SKILLASSAY = [sys.executable, "-m", "skillassay"]


def _gone(pid: int) -> bool:
    """No such process, or a zombie (dead, waiting for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].split()[0] in ("Z", "X")


def _agents(mark: str) -> list[int]:
    """The agents whose command line holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # the agent itself: its sandbox's bwrap, the forwarder and strace name it too, in their own command
        # lines
        if mark.encode() in argv and argv[0] == sys.executable.encode() and not _gone(int(entry.name)):
            found.append(int(entry.name))
    return found


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    left = [p for p in pids if not _gone(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if not _gone(p)]
    return left


def _sleep_group() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], start_new_session=True, stdin=subprocess.DEVNULL)


# -- the registry --------------------------------------------------------------------------------------------


def test_kill_all_kills_a_registered_group() -> None:
    proc = _sleep_group()
    try:
        reaper.register(proc.pid)
        assert reaper.kill_all(grace=1.0) == 1
        assert proc.wait(timeout=5) == -signal.SIGTERM
    finally:
        reaper.unregister(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.pid not in reaper.registered()


def test_tracked_kills_the_group_on_any_way_out() -> None:
    proc = _sleep_group()
    with pytest.raises(KeyboardInterrupt), reaper.tracked(proc, grace=1.0) as pgid:
        assert pgid in reaper.registered()
        raise KeyboardInterrupt
    assert proc.returncode == -signal.SIGTERM
    assert proc.pid not in reaper.registered()


def test_a_group_started_while_stopping_is_refused() -> None:
    proc = _sleep_group()
    with reaper.stopping(), pytest.raises(KeyboardInterrupt):
        reaper.register(proc.pid)
    assert proc.wait(timeout=5) == -signal.SIGTERM
    assert proc.pid not in reaper.registered()
    assert not reaper.interrupted()


# -- skillassay run, interrupted -----------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_kills_the_agents(tmp_path: Path, evals_dir: Path, jobs: int) -> None:
    # the agent sleeps, marked by a word in its command line: sealed, it has its own PID namespace and sees no
    # folder of the test's, so it cannot write down its (host) pid; the test finds it in /proc instead
    mark = f"skillassay-interrupt-{os.getpid()}-{time.monotonic_ns()}"
    agent = f'{sys.executable} -c "import time; time.sleep(60)" {mark}'
    runs = jobs  # --jobs 2 --runs 2: both agents run at once, each in a worker thread
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # its own session, as a terminal's foreground job is: SIGINT to this group reaches skillassay, not the
    # agents
    proc = subprocess.Popen(
        [
            *SKILLASSAY,
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            agent,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--runs",
            str(runs),
            "--jobs",
            str(jobs),
            "--results",
            str(tmp_path / "results"),
            "--json",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            pids = _agents(mark)
            if len(pids) == runs:
                break
            time.sleep(0.1)
        assert len(pids) == runs, f"agents did not start: {proc.poll()=}"
        assert not any(_gone(p) for p in pids)  # running, before the interrupt
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("skillassay did not exit within 30 s of SIGINT")
        assert proc.returncode == 130, stderr.decode(errors="replace")
        assert not _wait_gone(pids, 5), "an agent outlived the interrupted skillassay"
        # the killed runs are abandoned (rerun by --resume), never recorded as if their agents had finished
        assert not list((tmp_path / "results").rglob("run.json"))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in pids:  # never leave a sleeping agent behind, whatever failed
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
