"""What a user meets on a wrong step: one line naming the file (and field), exit 2, no traceback, nothing
lost.

And the steps that must work from anywhere: `run --resume JOB` reads the job's own suite, not the folder it is
started in."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.orchestrator.summary import Spread

runner = CliRunner()
SKILLASSAY = [sys.executable, "-m", "skillassay"]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed entry point in a child process: what a user's shell sees (stderr, exit code,
    tracebacks).
    """
    return subprocess.run([*SKILLASSAY, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _one_error(out: subprocess.CompletedProcess, *needles: str) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_resume_reads_the_jobs_own_suite_from_any_folder(tmp_path: Path, evals_dir: Path) -> None:
    """The suite was given by path; --resume is started from a folder without an `evals/` of its own."""
    suite = tmp_path / "suite"
    shutil.copytree(evals_dir, suite, ignore=shutil.ignore_patterns("node_modules", ".venv", "__pycache__"))
    results = tmp_path / "results"
    first = _cli(
        "run",
        str(suite),
        "--agent",
        "reference",
        "--fixtures",
        "flask-py",
        "--layers",
        "rubric",
        "--results",
        str(results),
        "--json",
    )
    assert first.returncode == 0, first.stderr
    job_id = json.loads(first.stdout)["job_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = _cli("run", "--resume", job_id, "--results", str(results), cwd=elsewhere)
    assert again.returncode == 0, again.stderr
    assert "evals: no such file or folder" not in again.stderr
    # the summary is the job's: its agent and its eval, whatever the (default) --agent of this command says
    assert f"Job {job_id}: reference" in again.stdout and "flask-py" in again.stdout


def test_resume_of_an_unknown_job_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    out = _cli(
        "run", "--resume", "20990101-000000-0000", "--results", str(tmp_path / "results"), cwd=tmp_path
    )
    _one_error(out, "--resume 20990101-000000-0000", "no such job")
    assert "0/?" not in out.stderr  # no progress bar for a job that never started


def test_a_missing_pricing_table_is_refused_before_the_job(tmp_path: Path, evals_dir: Path) -> None:
    out = _cli(
        "run",
        str(evals_dir),
        "--fixtures",
        "flask-py",
        "--layers",
        "rubric",
        "--results",
        str(tmp_path / "r"),
        "--pricing",
        str(tmp_path / "prices.toml"),
    )
    _one_error(out, f"--pricing {tmp_path / 'prices.toml'}")
    assert not list((tmp_path / "r").glob("*/job.json"))  # no job recorded


def test_compare_of_jobs_with_no_run_in_common_is_an_error(tmp_path: Path) -> None:
    make_job(tmp_path, job_id="20261201-000000-aaaa", evals=("express-ts",), runs=1, artifacts=False)
    make_job(tmp_path, job_id="20261201-000000-bbbb", evals=("flask-py",), runs=1, artifacts=False)
    result = runner.invoke(
        app, ["compare", "20261201-000000-aaaa", "20261201-000000-bbbb", "--results", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert (
        "nothing to compare" in result.output
        and "express-ts" in result.output
        and "flask-py" in result.output
    )
    assert "┏" not in result.output  # no empty table before the error


def test_rubric_names_the_missing_folder(tmp_path: Path, evals_dir: Path) -> None:
    fixture = evals_dir / "fixtures" / "flask-py"
    out = _cli(
        "rubric",
        "--pristine",
        str(fixture / "app"),
        "--modified",
        str(tmp_path / "nope"),
        "--fixture-dir",
        str(fixture),
    )
    _one_error(out, f"--modified {tmp_path / 'nope'}: no such folder")


def test_rubric_puts_each_problem_of_a_broken_fixture_on_its_own_line(
    tmp_path: Path, evals_dir: Path
) -> None:
    suite = tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True)
    shutil.copy(evals_dir / "rubric.json", suite / "rubric.json")
    fixture = suite / "fixtures" / "flask-py"
    shutil.copytree(evals_dir / "fixtures" / "flask-py", fixture)
    (fixture / "eval_config.json").write_text('{"prompt": ')
    key = json.loads((fixture / "answer_key.json").read_text())
    (fixture / "answer_key.json").write_text(json.dumps({**key, "nonsense": 1}))
    out = _cli(
        "rubric",
        "--pristine",
        str(fixture / "app"),
        "--modified",
        str(fixture / "test_golden"),
        "--fixture-dir",
        str(fixture),
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and all(ln.startswith("error: ") for ln in lines), out.stderr
    assert any("eval_config.json: invalid JSON" in ln for ln in lines)
    assert any("answer_key.json at /nonsense" in ln for ln in lines)


def test_model_server_names_a_script_that_is_not_yaml(tmp_path: Path) -> None:
    script = tmp_path / "broken.yaml"
    script.write_text("turns: [[\n")
    _one_error(_cli("model-server", str(script)), f"{script}: invalid YAML at line 2")


def test_several_runs_show_the_score_range_in_percent() -> None:
    assert Spread(mean=80.0, min=70.0, max=90.0, n=3).text("%") == "80% (70-90%)"
    assert Spread(mean=80.0, min=80.0, max=80.0, n=1).text("%") == "80%"
