"""Issue 14, item 3: runs are written once, atomically, exclusively. One process at a time holds a job; a
graded run is never overwritten (only `regrade` changes one, keeping the previous record); a run whose
record cannot be written is a harness error with its traceback in its folder, and the job never ends
"finished" with a run missing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.definitions import load_suite
from skillassay.orchestrator import trial
from skillassay.orchestrator.config import RunConfig
from skillassay.orchestrator.trial import RunSpec, execute
from skillassay.store import open as open_store
from skillassay.store.files import RunAlreadyRecorded, claim_run_dir

runner = CliRunner()
SKILLASSAY = [sys.executable, "-m", "skillassay"]


def _run(args: list[str]) -> tuple[int, dict | str]:
    result = runner.invoke(app, ["run", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, result.output


def test_a_second_run_of_a_job_in_use_is_refused(tmp_path: Path, evals_dir: Path) -> None:
    """Two `run --resume` of one job at once: the second is refused with a clear message (exit 2) and touches
    nothing; the first finishes and records every run once."""
    slow = f'{sys.executable} -c "import time; time.sleep(4)"'
    proc = subprocess.Popen(
        [
            *SKILLASSAY,
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            slow,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--runs",
            "2",
            "--results",
            str(tmp_path),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        jobs: list[Path] = []
        while time.monotonic() < deadline and not jobs:
            jobs = list(tmp_path.glob("*/job.json"))
            time.sleep(0.1)
        assert jobs, "the job never started"
        job_id = jobs[0].parent.name
        result = runner.invoke(app, ["run", "--resume", job_id, "--results", str(tmp_path), "--json"])
        assert result.exit_code == 2, result.output
        assert f"job {job_id} is in use by another skillassay process (pid {proc.pid}" in result.output
        assert "wait for it to end" in result.output
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    first = json.loads(out)
    assert first["status"] == "finished" and sorted(r["run_index"] for r in first["runs"]) == [1, 2]
    assert not list(tmp_path.glob(f"{job_id}/flask-py/.superseded/*"))  # nothing was started twice
    # once the holder is gone, the job is free again (the lock dies with its process)
    code, again = _run(["--resume", job_id, "--results", str(tmp_path), "--json"])
    assert code == 0 and again["status"] == "finished"


@pytest.fixture()
def express(evals_dir: Path):
    [d] = [e for e in load_suite(evals_dir, ["express-ts"]) if e.id == "express-ts"]
    return d


def _spec(job: str = "J1", agent: str = "reference") -> RunSpec:
    return RunSpec(
        job_id=job, eval_id="express-ts", run_index=1, config=RunConfig(agent=agent, layers="rubric")
    )


def test_a_graded_run_is_never_overwritten(tmp_path: Path, express) -> None:
    record = execute(_spec(), express, tmp_path)
    assert record.outcome == "completed"
    run_json = tmp_path / record.run_dir / "run.json"
    before = run_json.read_bytes()
    with pytest.raises(RunAlreadyRecorded, match="never overwritten"):
        execute(_spec(agent="noop"), express, tmp_path)
    assert run_json.read_bytes() == before
    assert (tmp_path / record.run_dir / "workspace").is_dir()  # the folder is untouched, not only run.json


def test_an_unfinished_or_unscored_attempt_is_kept_aside(tmp_path: Path) -> None:
    run_dir = tmp_path / "J1" / "e" / "run_1"
    run_dir.mkdir(parents=True)
    (run_dir / "agent.stdout.log").write_text("half a run")
    claimed = claim_run_dir(tmp_path, "J1/e/run_1")
    assert claimed == run_dir and list(claimed.iterdir()) == []
    [aside] = (tmp_path / "J1" / "e" / ".superseded").iterdir()
    assert (aside / "agent.stdout.log").read_text() == "half a run"
    with pytest.raises(FileExistsError):
        run_dir.mkdir()  # the claim is a real, exclusive folder


def test_a_run_that_cannot_be_written_is_a_harness_error_with_its_traceback(
    tmp_path: Path, evals_dir: Path, monkeypatch
) -> None:
    real = trial.write_run_file
    calls = {"n": 0}

    def flaky(root, record):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(28, "No space left on device")
        return real(root, record)

    monkeypatch.setattr(trial, "write_run_file", flaky)
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0, out
    [run] = out["runs"]
    assert run["outcome"] == "harness_error" and "could not be written" in run["error"]
    assert [f["stage"] for f in run["harness_failures"]] == ["write"]
    tb = (tmp_path / run["run_dir"] / "harness_error.txt").read_text()
    assert "Traceback" in tb and "No space left on device" in tb
    assert json.loads((tmp_path / run["run_dir"] / "run.json").read_text())["outcome"] == "harness_error"
    assert out["status"] == "finished" and out["evals"][0]["outcomes"] == {"harness_error": 1}
    # --resume reruns it
    assert open_store(tmp_path).missing_runs(out["job_id"]) == [("express-ts", 1, "skill")]


def test_a_job_with_a_run_it_could_not_write_at_all_is_not_finished(
    tmp_path: Path, evals_dir: Path, monkeypatch
) -> None:
    def broken(root, record):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(trial, "write_run_file", broken)
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0, out
    assert out["status"] == "incomplete"
    [run] = out["runs"]  # the index still knows it, as a harness error
    assert run["outcome"] == "harness_error" and "could not be written" in run["error"]
    assert out["evals"][0]["outcomes"] == {"harness_error": 1}
    assert "Input/output error" in (tmp_path / run["run_dir"] / "harness_error.txt").read_text()
    job = json.loads((tmp_path / out["job_id"] / "job.json").read_text())
    assert job["status"] == "incomplete"


def test_regrade_keeps_every_previous_record(tmp_path: Path, evals_dir: Path) -> None:
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    run_dir = tmp_path / out["runs"][0]["run_dir"]
    original = (run_dir / "run.json").read_text()
    for _ in range(2):
        result = runner.invoke(app, ["regrade", out["job_id"], "--results", str(tmp_path)])
        assert result.exit_code == 0, result.output
    assert (run_dir / "run.prev-1.json").read_text() == original
    assert json.loads((run_dir / "run.prev.json").read_text())["regraded_at"] is not None
