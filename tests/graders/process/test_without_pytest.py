"""The agent eval graded by skillassay as a user who ran `pip install skillassay` has it (no test extra): the
golden passes and every control gets its declared verdict, because gates and the agent's new tests run in
the app's environment (its requirements.txt pins pytest), never in skillassay's; only black-box hidden
tests are judged by skillassay's own pytest (a dependency of the package), outside the code under test.

The bare skillassay is a virtual environment with an editable install of this checkout and no extras, kept
in the cache folder (outside /tmp, like a user's) and reused while pyproject.toml is unchanged."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from parts import REPO

from skillassay.apps.deps import cache_root

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long(reason="setup pip-installs skillassay in a new venv; each test grades every control"),
]

EVAL = REPO / "evals" / "agent-evals" / "cancellation-support.toml"


@pytest.fixture(scope="module")
def bare() -> dict:
    """skillassay installed without its test extra: (its bin folder, the environment to run it with)."""
    key = hashlib.sha256(
        b"\0".join([str(REPO).encode(), (REPO / "pyproject.toml").read_bytes(), sys.version.encode()])
    ).hexdigest()[:16]
    venv = cache_root() / "test-envs" / f"skillassay-bare-{key}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
            proc = subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", "-e", str(REPO)],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            (venv / ".complete").write_text("")
    # the premise: this skillassay has none of the test extra (the app's own packages are not there either)
    for module in ("hypothesis", "flask"):
        assert (
            subprocess.run(
                [str(venv / "bin" / "python"), "-c", f"import {module}"], capture_output=True, check=False
            ).returncode
            != 0
        ), module
    ours = {str(Path(sys.prefix) / "bin")}
    path = [str(venv / "bin")] + [p for p in os.environ["PATH"].split(os.pathsep) if p not in ours]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "PYTEST"))}
    env.update(PATH=os.pathsep.join(path), NO_COLOR="1", COLUMNS="200")
    return {"bin": venv / "bin", "env": env}


def test_the_controls_and_the_golden_get_their_verdicts(bare: dict) -> None:
    proc = subprocess.run(
        [str(bare["bin"] / "skillassay"), "check", str(EVAL), "--controls"],
        env=bare["env"],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    for name in (
        "test_golden",
        "refactors_unrelated_code",
        "cancels_any_status",
        "deletes_failing_test",
        "writes_database_directly",
        "claims_without_running",
    ):
        assert name in out, name
    assert "✗" not in out and "harness" not in out.lower(), out[-6000:]


def test_the_reference_agent_scores_full_marks(bare: dict, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            str(bare["bin"] / "skillassay"),
            "run",
            str(REPO / "evals"),
            "--agent",
            "reference",
            "--fixtures",
            "cancellation-support",
            "--results",
            str(tmp_path / "results"),
            "--json",
        ],
        env=bare["env"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    [run] = json.loads(proc.stdout)["runs"]
    assert run["outcome"] == "completed", run
    assert run["verdict"]["passed"] and run["verdict"]["score"] == 1.0, run["verdict"]
    record = json.loads(
        next((tmp_path / "results").glob("*/cancellation-support/run_1/run.json")).read_text()
    )
    assert {c["id"]: c["fraction"] for c in record["criteria"]} == {
        "cancels_via_service": 1.0,
        "respects_transitions": 1.0,
        "adds_meaningful_tests": 1.0,
        "scope_discipline": 1.0,
        "respects_policy": 1.0,
    }
