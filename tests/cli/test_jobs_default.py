"""``--jobs`` left out: ``SKILLASSAY_JOBS``, else twice the CPUs this process may use, at most 4 (a
run mostly waits on its app and on Seam); a bad ``SKILLASSAY_JOBS`` is a one-line error, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli import run as run_cli
from skillassay.cli.main import app
from skillassay.orchestrator.config import JOBS_ENV, JobOptions, default_jobs


@pytest.mark.parametrize(("cpus", "jobs"), [(1, 2), (2, 4), (3, 4), (16, 4)])
def test_twice_the_cpus_at_most_four(monkeypatch, cpus, jobs):
    monkeypatch.delenv(JOBS_ENV, raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(cpus)))
    assert default_jobs() == jobs
    assert JobOptions().jobs == jobs


def test_the_environment_sets_the_default(monkeypatch):
    monkeypatch.setenv(JOBS_ENV, "7")
    assert JobOptions().jobs == 7
    assert JobOptions(jobs=2).jobs == 2  # --jobs given wins


class _Taken(Exception):
    pass


def _job_options_of(monkeypatch, args: list[str]) -> JobOptions:
    taken: list[JobOptions] = []

    def take(opts, resume, judge, as_json):
        taken.append(opts)
        raise _Taken

    monkeypatch.setattr(run_cli, "_run_the_job", take)
    result = CliRunner().invoke(app, ["run", "evals", "--agent", "reference", *args])
    assert isinstance(result.exception, _Taken), result.output
    return taken[0]


def test_run_without_jobs_takes_the_default(monkeypatch):
    monkeypatch.delenv(JOBS_ENV, raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    assert _job_options_of(monkeypatch, []).jobs == 4
    assert _job_options_of(monkeypatch, ["--jobs", "1"]).jobs == 1


@pytest.mark.parametrize("value", ["0", "two"])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_bad_default_is_a_one_line_error(tmp_path: Path, value, command):
    repo = Path(__file__).resolve().parents[2]
    args = {
        "run": ["run", str(repo / "evals"), "--agent", "reference", "--results", str(tmp_path / "results")],
        "check": ["check", str(repo / "evals"), "--controls"],
    }[command]
    env = {**os.environ, JOBS_ENV: value}
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("skillassay")), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert lines == [f"error: {JOBS_ENV}={value!r}: expected a whole number of runs at once, 1 or more"]
    assert not (tmp_path / "results").exists()  # nothing recorded
