"""Issue 14, item 6: every command the process graders start (quality gates, hidden tests, the agent's tests) runs in
its own process group, registered for Ctrl-C, and is killed whole: at its timeout, when its leader exits leaving
children behind, and when the job is interrupted. Nothing it started survives it."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from skillassay import reaper
from skillassay.definitions.agent_eval import QualityGate
from skillassay.graders.process import gates

APP = {"calc.py": "def add(a, b):\n    return a + b\n"}


def _gone(pid: int, within: float = 10.0) -> bool:
    """The process no longer exists (or is a zombie its new parent has yet to reap)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat[stat.rfind(")") + 2:].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


def _wait_for(path: Path, within: float = 20.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _stubborn(pidfile: Path, seconds: int = 40) -> str:
    """A grandchild that ignores SIGTERM and outlives its parent unless its whole group is killed."""
    return (f"import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            f"open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep({seconds})")


def test_a_gate_that_times_out_takes_its_whole_group_with_it(make_ctx, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    parent = (f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {_stubborn(pidfile)!r}]); "
              f"time.sleep(40)")
    gate = QualityGate(id="hang", command=[sys.executable, "-c", parent], timeout=3)
    started = time.monotonic()
    results = gates.run_gates([gate], make_ctx(APP, APP))
    took = time.monotonic() - started
    assert results["hang"].status == "failed" and "timed out after 3s" in results["hang"].reason
    assert took < 20, f"the gate's output pipe kept the harness waiting {took:.0f} s"
    assert _gone(_wait_for(pidfile)), "the grandchild (ignoring SIGTERM) outlived the gate's timeout"
    assert reaper.registered() == set()


def test_what_a_finished_gate_left_running_is_killed(make_ctx, tmp_path: Path) -> None:
    pidfile = tmp_path / "background.pid"
    script = tmp_path / "stubborn.py"
    script.write_text(_stubborn(pidfile))
    # started in the background, and the gate ends (successfully) once it is up
    gate = QualityGate(id="bg", command=f"{sys.executable} {script} & while [ ! -s {pidfile} ]; do sleep 0.05; done",
                       timeout=30)
    results = gates.run_gates([gate], make_ctx(APP, APP))
    assert results["bg"].status == "passed"
    assert _gone(_wait_for(pidfile)), "a background process of the gate outlived it"


def test_a_running_gate_is_registered_for_ctrl_c(make_ctx, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    gate = QualityGate(id="long", command=[sys.executable, "-c", _stubborn(pidfile, 60)], timeout=120)
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(gates.run_gates([gate], make_ctx(APP, APP))))
    thread.start()
    pid = _wait_for(pidfile)
    assert reaper.registered(), "the gate's group is not registered: a Ctrl-C would miss it"
    reaper.kill_all(grace=0.5)  # what an interrupted job does
    thread.join(20)
    assert not thread.is_alive() and _gone(pid)
    assert out["long"].status == "failed"
