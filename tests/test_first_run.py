"""The README's first run, as a new user makes it: `skillassay run evals --agent reference` from the checkout
(its .venv and node tools), with a home and skillassay's caches that are new, empty and under /tmp. Every eval
passes: nothing the golden solutions need may lean on a warm cache, a home outside /tmp or a system Python."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fresh_home import fresh_home

from skillassay.definitions import load_suite

# every install and build from nothing: minutes (docs/DEVELOPING.md gives the figure)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3000),
    pytest.mark.long(reason="the whole main job on an empty cache: every eval installed, built and graded"),
]


def test_the_readmes_first_run_passes_every_eval_on_a_new_machine(evals_dir: Path, tmp_path: Path) -> None:
    skillassay = Path(sys.executable).with_name("skillassay")
    with fresh_home() as env:
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
        cache = Path(env["HOME"]) / ".cache" / "skillassay"
        assert cache.is_dir()  # the run filled the new home's cache, not the operator's
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
