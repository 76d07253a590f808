"""The host backend: process groups die on every way out (success, failure, exception, Ctrl-C); caches hit."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from skillassay.apps.backends.host import HostBackend
from skillassay.apps.runplan import InstallSpec, RunPlan
from skillassay.apps.steps import StepFailed, run_step
from skillassay.seam.behaviour import validate
from skillassay.seam.behaviour.endpoint_checks import Checker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _read_pids(path: Path, n: int, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= n:
                return pids
        time.sleep(0.05)
    raise AssertionError(f"{path} never got {n} pids")


def _marked(marker: str) -> list[int]:
    """Live host processes whose command line or environment holds ``marker``: a sealed app has its own PID
    namespace and file system, so it cannot write down host pids for the test to read."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [p for p in found if _alive(p)]


def _wait_marked(marker: str, n: int, timeout: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = _marked(marker)
        if len(pids) >= n:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"never {n} processes marked {marker}")


def _marker() -> str:
    return f"skillassay-test-{os.getpid()}-{time.monotonic_ns()}"


def _backend(tmp_path: Path, start: list[str], build: list[list[str]] | None = None) -> HostBackend:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "requirements.txt").write_text("")
    plan = RunPlan(
        runtime="python",
        install=InstallSpec(pip_requirements=["requirements.txt"]),
        build=build or [],
        start=start,
    )
    return HostBackend(
        plan=plan,
        source_dir=src,
        fixture="proc",
        run_id="p",
        logs_dir=tmp_path / "logs",
        fixture_dir=tmp_path,
        health_timeout=20,
    )


# the app forks a grandchild (sleep, in a session of its own) and serves health: both must die with the
# sandbox
SERVER = "MARK={mark} setsid sleep 300 & MARK={mark} exec python -m http.server --bind 127.0.0.1 $PORT"


def test_stop_kills_the_whole_group(tmp_path):
    mark = _marker()
    b = _backend(tmp_path, ["/bin/sh", "-c", SERVER.format(mark=mark)])
    with b:
        b.prepare()
        b.start({})
        pids = _wait_marked(mark, 2)
        assert all(_alive(p) for p in pids)
    assert all(_wait_dead(p) for p in pids)
    assert _marked(mark) == []
    assert not b.workdir.exists()


def test_keyboard_interrupt_during_the_checks_still_kills_the_app(tiny, emulator, tmp_path, monkeypatch):
    mark = _marker()
    d = tiny("good", run={"env": {"MODE": "good", "MARK": mark}})
    seen: list[int] = []

    def interrupted(self, check, id_path):
        seen.extend(_marked(mark))
        raise KeyboardInterrupt

    monkeypatch.setattr(Checker, "create", interrupted)
    with pytest.raises(KeyboardInterrupt):
        validate(d.app_dir, d, "ctrlc1", emulator=emulator, logs_dir=tmp_path / "logs")
    assert seen and all(_wait_dead(p) for p in seen)


def test_exception_during_the_checks_still_kills_the_app(tiny, emulator, tmp_path, monkeypatch):
    mark = _marker()
    d = tiny("good", run={"env": {"MODE": "good", "MARK": mark}})
    seen: list[int] = []

    def broken(self, check):
        seen.extend(_marked(mark))
        raise RuntimeError("harness bug")

    monkeypatch.setattr(Checker, "update", broken)
    with pytest.raises(RuntimeError, match="harness bug"):
        validate(d.app_dir, d, "exc1", emulator=emulator, logs_dir=tmp_path / "logs")
    assert seen and all(_wait_dead(p) for p in seen)


def test_real_sigint_while_a_build_step_runs_kills_its_group(tmp_path):
    pids_file = tmp_path / "pids"
    argv = ["/bin/sh", "-c", f"sleep 300 & echo $! >> {pids_file}; echo $$ >> {pids_file}; wait"]
    timer = threading.Timer(1.0, os.kill, args=(os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_step("build", argv, cwd=tmp_path, env=dict(os.environ), log=tmp_path / "b.log", timeout=60)
    finally:
        timer.cancel()
    pids = _read_pids(pids_file, 2)
    assert all(_wait_dead(p) for p in pids)


def test_step_timeout_kills_the_group_and_says_so(tmp_path):
    pids_file = tmp_path / "pids"
    argv = ["/bin/sh", "-c", f"sleep 300 & echo $! >> {pids_file}; wait"]
    with pytest.raises(StepFailed, match="took longer than 1 s"):
        run_step("build", argv, cwd=tmp_path, env=dict(os.environ), log=tmp_path / "b.log", timeout=1)
    assert _wait_dead(_read_pids(pids_file, 1)[0])


def test_failed_health_kills_the_app(tmp_path):
    mark = _marker()
    # never listens: health can only time out
    b = _backend(tmp_path, ["/bin/sh", "-c", f"echo starting; MARK={mark} exec sleep 300"])
    b.health_timeout = 1.0
    with b:
        b.prepare()
        with pytest.raises(StepFailed, match="no healthy answer"):
            b.start({})
        pids = _wait_marked(mark, 1)
    assert all(_wait_dead(p) for p in pids)


def test_failing_build_step_names_the_command_and_keeps_the_log(tmp_path):
    b = _backend(
        tmp_path,
        ["true"],
        build=[["/bin/sh", "-c", "echo compiling; echo 'TS2304: cannot find name' >&2; exit 2"]],
    )
    with b, pytest.raises(StepFailed) as e:
        b.prepare()
    assert e.value.step == "build" and "exited with 2" in e.value.reason
    assert "TS2304" in e.value.log_tail


def test_dependency_and_build_caches_hit_on_repeat(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    build = [["/bin/sh", "-c", "mkdir -p dist && date +%s%N > dist/out.txt"]]
    outs = []
    for i in range(2):
        run_dir = tmp_path / f"r{i}"
        run_dir.mkdir()
        b = _backend(run_dir, ["true"], build=build)
        (b.source_dir / "app.py").write_text("print('hi')\n")
        with b:
            b.prepare()
            outs.append(
                (
                    b.facts.get("install_cache_hit"),
                    b.facts.get("build_cache_hit"),
                    (b.app_dir / "dist" / "out.txt").read_text(),
                )
            )
    assert outs[0][:2] == (False, False)
    assert outs[1][:2] == (True, True)
    assert outs[0][2] == outs[1][2]  # restored, not rebuilt
