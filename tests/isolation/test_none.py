"""--isolation none: nothing sealed, said plainly."""

import subprocess

from skillassay.isolation import Seal, get_isolation


def test_none_runs_the_command_as_is(tmp_path):
    iso = get_isolation("none")
    assert not iso.sealed and iso.problem() is None
    with iso.open(Seal(phase="agent", writable=[tmp_path], registries=["pypi.org"])) as box:
        out = (
            box.popen(
                ["bash", "-c", "id -u; echo $HTTPS_PROXY"],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"},
                stdout=subprocess.PIPE,
            )
            .communicate()[0]
            .decode()
        )
        assert box.record().isolation == "none" and not box.record().audit
    assert out.splitlines()[0] == str(__import__("os").getuid()) and out.splitlines()[1] == ""


def _marked(mark: str) -> list[int]:
    from pathlib import Path

    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[0] == mark.encode():
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def _gone(mark: str, within: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + within
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _marked(mark)


def test_nothing_outlives_its_command_unsealed(tmp_path):
    """setsid and a double-forked daemon left the run's process group and outlived it; the subreaper finds
    them."""
    import os
    import time

    mark = f"skillassay-none-{os.getpid()}-{time.monotonic_ns()}"
    line = (
        f"setsid bash -c 'exec -a {mark} sleep 300' </dev/null >/dev/null 2>&1 & "
        f"( ( exec -a {mark} sleep 300 ) & ) ; sleep 0.3; exit 3"
    )
    try:
        with get_isolation("none").open(Seal(phase="agent", writable=[tmp_path])) as box:
            proc = box.popen(["bash", "-c", line], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
            assert proc.wait(timeout=30) == 3  # the command's own status
        assert _gone(mark), "a setsid child outlived its command"
    finally:
        for pid in _marked(mark):
            os.kill(pid, 9)


def test_an_ended_run_ends_everything_below_it(tmp_path):
    """A timeout kills the run's process group: what left the group dies with it too, and the signal shows."""
    import os
    import time

    from skillassay import reaper

    mark = f"skillassay-none-{os.getpid()}-{time.monotonic_ns()}"
    line = f"setsid bash -c 'exec -a {mark} sleep 300' </dev/null >/dev/null 2>&1 & exec sleep 300"
    try:
        with get_isolation("none").open(Seal(phase="agent", writable=[tmp_path])) as box:
            proc = box.popen(["bash", "-c", line], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
            deadline = time.monotonic() + 10
            while not _marked(mark) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _marked(mark)
            reaper.kill_group(proc.pid)
            assert proc.wait(timeout=10) == -15
        assert _gone(mark), "a setsid child outlived its killed run"
    finally:
        for pid in _marked(mark):
            os.kill(pid, 9)


HARNESS = """
import sys, time
from pathlib import Path
from skillassay.isolation import Seal, get_isolation
box = get_isolation("none").open(Seal(phase="agent", writable=[Path(sys.argv[2])]))
box.popen(["bash", "-c", "setsid bash -c 'exec -a %s sleep 300' </dev/null >/dev/null 2>&1 & exec sleep 300"
           % sys.argv[1]], cwd=Path(sys.argv[2]), env={"PATH": "/usr/bin:/bin"})
print("started", flush=True)
time.sleep(300)
"""


def test_a_sigkilled_harness_leaves_nothing_running_unsealed(tmp_path):
    import os
    import subprocess
    import sys
    import time

    mark = f"skillassay-none-{os.getpid()}-{time.monotonic_ns()}"
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, mark, str(tmp_path)], stdout=subprocess.PIPE)
    try:
        assert harness.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 10
        while not _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(mark)
        harness.kill()
        harness.wait()
        assert _gone(mark), "a setsid child outlived the SIGKILLed harness"
    finally:
        harness.kill()
        for pid in _marked(mark):
            os.kill(pid, 9)
