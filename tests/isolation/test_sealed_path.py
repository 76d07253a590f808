"""A sealed process's PATH: the phase's own environment (an app's venv) first, wherever it lies, then the
runtimes before the system's program folders. The cache (so the venv) under /tmp once put the harness's Python
first, and the app ran an interpreter without its packages."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from skillassay.isolation import Mount, Seal
from skillassay.isolation.base import sealed_path
from skillassay.isolation.runtimes import runtimes


def test_the_venv_comes_first_wherever_it_lies() -> None:
    runtime = ["/opt/pyenv/versions/3.11/bin"]
    venvs = ("/tmp/home/.cache/skillassay/deps/py-1/bin", "/usr/local/cache/py-1/bin", "/tmpfoo/py-1/bin")
    for venv in venvs:
        path = sealed_path(f"{venv}:/home/u/.local/bin:/usr/bin:/bin", [venv], runtime).split(":")
        assert path == [venv, "/home/u/.local/bin", *runtime, "/usr/bin", "/bin"]
    # not said to be its own, a folder under /tmp (or /tmpfoo) is still nobody's system program
    path = sealed_path("/tmp/c/venv/bin:/tmpfoo/bin:/usr/bin", [], runtime).split(":")
    assert path == ["/tmp/c/venv/bin", "/tmpfoo/bin", *runtime, "/usr/bin"]


def test_a_venv_under_tmp_runs_its_own_python_sealed(bubblewrap) -> None:
    # a venv of the harness's Python in a cache under /tmp, as `skillassay run` makes one for a Python app
    with tempfile.TemporaryDirectory(prefix="skillassay-cache-", dir="/tmp") as cache:
        venv = Path(cache) / "deps" / "py-test"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        mounts, path = runtimes(venv=True)
        seal = Seal(
            phase="app",
            writable=[Path(cache)],
            readable=[Mount(src=venv), *mounts],
            first=[str(venv / "bin")],
            path=path,
            audit=False,
        )
        with bubblewrap.open(seal) as box:
            proc = box.popen(
                ["python", "-c", "import sys; print(sys.prefix)"],
                cwd=Path(cache),
                env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin"},
                stdout=subprocess.PIPE,
            )
            out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert out.decode().strip() == str(venv)  # the app's venv, not the harness's base interpreter
