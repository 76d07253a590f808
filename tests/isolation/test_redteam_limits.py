"""Red team: a sealed process that tries to take the machine down with it (a fork bomb, a file without end). A
sandbox runs as the harness's user outside its namespaces, and the kernel exempts root from the per-user
process limit: nothing held a fork bomb, and every run of the job (and the harness itself) could start nothing
more.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from parts import needs

from skillassay.isolation import Policy, Seal
from skillassay.isolation.pids import TaskLimit
from skillassay.isolation.runtimes import runtimes

FORKS = r"""
import os, sys, time
started = 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    started += 1
print("started", started, flush=True)
"""


def _probe_limit() -> bool:
    limit = TaskLimit(8)
    ok = limit.path is not None
    limit.close()
    return ok


@needs(_probe_limit(), "a writable pids cgroup (root, or a delegated cgroup subtree)")
def test_a_fork_bomb_is_held_to_the_sandboxs_task_limit(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    mounts, path = runtimes(venv=True)
    seal = Seal(
        phase="agent",
        writable=[work],
        readable=mounts,
        path=path,
        audit=False,
        max_tasks=64,
        max_file_size=1 << 20,
    )
    out = tmp_path / "out.txt"
    with Policy().open(seal) as box, out.open("wb") as fh:
        proc = box.popen(
            ["python3", "-c", FORKS],
            cwd=work,
            env={"PATH": "/usr/bin:/bin"},
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
        proc.wait(timeout=60)
        big = box.popen(
            ["dd", "if=/dev/zero", f"of={work}/big", "bs=64k", "count=64"],
            cwd=work,
            env={"PATH": "/usr/bin:/bin"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        big.wait(timeout=60)
    started = int(out.read_text().split("started", 1)[1].split()[0])
    assert started < 64, f"{started} processes started in a sandbox limited to 64 tasks"
    report, record = box.final, box.record()
    assert report.forks_refused > 0
    assert record.max_tasks == 64 and record.max_file_size == 1 << 20
    assert (work / "big").stat().st_size == 1 << 20, "a file grew past the sandbox's file size limit"
