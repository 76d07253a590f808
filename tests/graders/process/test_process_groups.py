"""Issue 14, item 6: every command the process graders start (quality gates, hidden tests, the agent's tests)
runs in its own process group (sealed or not), registered for Ctrl-C, and is killed whole: at its timeout,
when its leader exits leaving children behind, and when the job is interrupted. Nothing it started survives
it.

Processes are found by a marker in their command line (a sealed one has other pids inside its namespace)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest

from skillassay import reaper
from skillassay.definitions.agent_eval import QualityGate
from skillassay.graders import gates
from skillassay.isolation.base import Policy

APP = {"calc.py": "def add(a, b):\n    return a + b\n"}  # no manifest: the bare interpreter runs the gates
ISOLATIONS = ["none", "bubblewrap"]


def _alive(marker: str) -> list[int]:
    """Host pids of live (non-zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rfind(")") + 2 :].split()[0] != "Z":
            found.append(int(entry.name))
    return found


def _all_gone(marker: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(marker)


def _wait_for(path: Path, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _stubborn(marker: str, seconds: int = 40) -> str:
    """Python that ignores SIGTERM, says it is up (``ready`` in its working folder) and sleeps."""
    return (
        f"import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"open('ready', 'w').close(); time.sleep({seconds})  # {marker}"
    )


def _ctx(make_ctx, isolation: str):
    ctx = make_ctx(APP, APP)
    ctx.policy = Policy(isolation=isolation)
    return ctx


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_gate_that_times_out_takes_its_whole_group_with_it(make_ctx, isolation: str) -> None:
    marker = f"skillassay-test-{uuid.uuid4().hex}"
    parent = (
        f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {_stubborn(marker)!r}]); "
        f"time.sleep(40)  # {marker}"
    )
    gate = QualityGate(id="hang", command=["python", "-c", parent], timeout=4)
    started = time.monotonic()
    results = gates.run_gates([gate], _ctx(make_ctx, isolation))
    took = time.monotonic() - started
    assert results["hang"].status == "failed" and "timed out after 4s" in results["hang"].reason
    assert took < 25, f"the gate kept the harness waiting {took:.0f} s"
    assert _all_gone(marker), "a process of the gate (its grandchild ignores SIGTERM) outlived its timeout"
    assert reaper.registered() == set()


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_what_a_finished_gate_left_running_is_killed(make_ctx, isolation: str) -> None:
    marker = f"skillassay-test-{uuid.uuid4().hex}"
    ctx = _ctx(make_ctx, isolation)
    (ctx.modified_dir / "stubborn.py").write_text(_stubborn(marker))
    # started in the background; the gate ends (successfully) once it is up
    gate = QualityGate(
        id="bg",
        command=f"python stubborn.py {marker} & while [ ! -e ready ]; do sleep 0.05; done",
        timeout=30,
    )
    results = gates.run_gates([gate], ctx)
    assert results["bg"].status == "passed", results["bg"].output
    assert _all_gone(marker), "a background process of the gate outlived it"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_running_gate_is_registered_for_ctrl_c(make_ctx, isolation: str) -> None:
    marker = f"skillassay-test-{uuid.uuid4().hex}"
    ctx = _ctx(make_ctx, isolation)
    gate = QualityGate(id="long", command=["python", "-c", _stubborn(marker, 60)], timeout=120)
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(gates.run_gates([gate], ctx)))
    thread.start()
    _wait_for(ctx.work_dir / "gates" / "ready")
    assert reaper.registered(), "the gate's group is not registered: a Ctrl-C would miss it"
    reaper.kill_all(grace=0.5)  # what an interrupted job does
    thread.join(20)
    assert not thread.is_alive() and _all_gone(marker)
    assert out["long"].status == "failed"
