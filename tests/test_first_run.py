"""The README's first run, as a new user makes it: `skillassay run evals --agent reference` from the
checkout (its .venv and node tools), with a home that is new, empty and under /tmp. Every eval passes: nothing
the golden solutions need may lean on a home outside /tmp or a system Python.

skillassay's cache is the test session's own (``SKILLASSAY_CACHE_DIR`` as the suite runs; in CI a folder
empty when the run starts), as in tests/test_suite_controls.py: each install and build runs once in the run,
from nothing, by whichever test needs the tree first, and is shared with the rest (a cache of its own made
this test install and build every golden a second time, about 110 CPU-seconds of a 2-core run). The first
run from a cache empty for it alone is measured by ``benchmarks/first_run.py``; where the cache lies by
default (under the home) is held by tests/test_paths.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fresh_home import fresh_home

from skillassay.definitions import load_suite
from skillassay.paths import cache_dir

# every install and build from nothing: minutes (docs/DEVELOPING.md gives the figure)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3000),
    pytest.mark.long(reason="the whole main job on a new home: every eval installed, built and graded"),
]


def test_the_readmes_first_run_passes_every_eval_on_a_new_machine(evals_dir: Path, tmp_path: Path) -> None:
    skillassay = Path(sys.executable).with_name("skillassay")
    session_cache = str(cache_dir())  # the run's, read before the new home hides it
    with fresh_home() as env:
        env["SKILLASSAY_CACHE_DIR"] = session_cache
        env["COLUMNS"] = "200"
        env.pop("SKILLASSAY_JOBS", None)  # the README's command as written: --jobs at its default
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                str(skillassay),
                "run",
                str(evals_dir),
                "--agent",
                "reference",
                "--results",
                str(tmp_path / "results"),
                "--json",
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=3000,
        )
        seconds = time.monotonic() - t0
        # the run kept to the cache it was given: nothing in the new home's default one
        assert not (Path(env["HOME"]) / ".cache" / "skillassay").exists()
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    runs = json.loads(proc.stdout)["runs"]
    ids = [d.id for d in load_suite(evals_dir)]
    assert len(ids) >= 13 and sorted(r["eval_id"] for r in runs) == sorted(ids)  # one run of every eval
    failed = {
        r["eval_id"]: r.get("error") or r["verdict"]
        for r in runs
        if r["outcome"] != "completed" or not (r.get("verdict") or {}).get("passed")
    }
    assert failed == {}, json.dumps(failed, indent=1)[:6000]
    print(f"first run on a new machine: {len(ids)} evals in {seconds:.0f} s")
