"""`skillassay run` end to end on the rubric layer with the built-in agents, resume after a kill, and exit
codes.

The sandbox layer and the real agent CLIs have their own end-to-end tests
(tests/orchestrator/test_e2e_*.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.scoring import GRADING_VERSION
from skillassay.store import open as open_store

runner = CliRunner()
SKILLASSAY = [sys.executable, "-m", "skillassay"]


def _run(args: list[str]) -> tuple[int, dict | str]:
    result = runner.invoke(app, ["run", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, result.output


def test_reference_agent_scores_full_rubric_and_keeps_everything(tmp_path: Path, evals_dir: Path) -> None:
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0, out
    [summary] = out["evals"]
    assert summary["eval_id"] == "flask-py" and summary["rubric"]["mean"] == 100
    assert summary["api_path_correct"] == 1
    [run] = out["runs"]
    assert run["outcome"] == "completed" and run["grades"]["rubric_total"] == 100
    assert (
        run["grades"]["api_path"] == "reservation_automations" and run["grades"]["api_path_correct"] is True
    )
    run_dir = tmp_path / run["run_dir"]
    assert run_dir.as_posix().endswith(f"{out['job_id']}/flask-py/run_1")
    for name in ("run.json", "diff.patch", "transcript.json", "rubric.json", "changes.json"):
        assert (run_dir / name).is_file(), name
    assert "seam" in (run_dir / "diff.patch").read_text()
    stored = json.loads((run_dir / "run.json").read_text())
    assert stored["config"]["layers"] == "rubric" and stored["machine"]["cpus"] >= 1
    # unjudged sandbox criteria score zero and are listed: a rubric-only run cannot pass the combined
    # threshold
    assert set(stored["verdict"]["unjudged"]) == {
        "sandbox_build",
        "sandbox_create",
        "sandbox_update",
        "sandbox_cancel",
    }
    assert stored["verdict"]["passed"] is False
    assert open_store(tmp_path).runs(job_id=out["job_id"])[0].figure("rubric_total") == 100


def test_noop_agent_is_an_empty_diff_and_fails_the_threshold(tmp_path: Path, evals_dir: Path) -> None:
    code, _out = _run(
        [
            str(evals_dir),
            "--agent",
            "noop",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
            "--fail-under",
            "50",
        ]
    )
    assert code == 1
    result = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "noop",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ],
    )
    data = json.loads(result.stdout)
    [run] = data["runs"]
    assert run["outcome"] == "completed" and run["empty_diff"] is True and run["files_changed"] == 0
    assert run["grades"]["rubric_total"] < 50 and run["verdict"]["passed"] is False


def test_api_path_filters_and_runs_repeat(tmp_path: Path, evals_dir: Path) -> None:
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--api-path",
            "reservation_automations",
            "--layers",
            "rubric",
            "--runs",
            "2",
            "--jobs",
            "2",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0, out
    ids = {s["eval_id"] for s in out["evals"]}
    ra = ["express-ts", "fastapi-py", "flask-py", "nextjs-ts", "php-laravel", "rails-rb"]
    assert ids == set(ra)  # only the reservation-automations fixtures, nothing overridden
    assert sorted((r["eval_id"], r["run_index"]) for r in out["runs"]) == [(e, i) for e in ra for i in (1, 2)]
    assert all(s["runs"] == 2 and s["rubric"]["n"] == 2 for s in out["evals"])


def test_bad_input_exits_2(tmp_path: Path, evals_dir: Path) -> None:
    assert (
        runner.invoke(
            app, ["run", str(evals_dir), "--fixtures", "nope", "--results", str(tmp_path)]
        ).exit_code
        == 2
    )
    assert runner.invoke(app, ["run", str(evals_dir), "--agent", "gpt-9"]).exit_code == 2
    assert runner.invoke(app, ["run", str(evals_dir), "--layers", "some"]).exit_code == 2
    assert runner.invoke(app, ["run", str(tmp_path / "missing")]).exit_code == 2


def test_secrets_never_reach_stored_files(tmp_path: Path, evals_dir: Path) -> None:
    key = "sk-ant-api03-" + "x" * 40
    cmd = f"{sys.executable} -c \"import os; print('my key is', os.environ['ANTHROPIC_API_KEY'])\""
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            cmd,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
            "--agent-env",
            f"ANTHROPIC_API_KEY={key}",
        ]
    )
    assert code == 0, out
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix != ".db":
            assert key not in path.read_text(errors="replace"), path
    assert "my key is" in json.dumps(out["runs"][0]["transcript"])


def test_resume_after_the_orchestrator_is_killed(tmp_path: Path, evals_dir: Path) -> None:
    """Kill mid-job: finished runs stay as they were; --resume runs only what was unfinished."""
    slow = f'{sys.executable} -c "import time; time.sleep(3)"'
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
            "3",
            "--results",
            str(tmp_path),
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = list(tmp_path.glob("*/flask-py/run_*/run.json"))
            if done:
                break
            time.sleep(0.2)
        assert done, "no run finished"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    [first] = done
    job_id = first.parts[-4]
    before = first.read_text()
    db = open_store(tmp_path)
    assert len(db.missing_runs(job_id)) == 2
    code, out = _run(["--resume", job_id, "--results", str(tmp_path), "--json"])
    assert code == 0, out
    assert out["job_id"] == job_id
    assert sorted(r["run_index"] for r in out["runs"]) == [1, 2, 3]
    assert first.read_text() == before  # the finished run was not re-rolled
    assert open_store(tmp_path).missing_runs(job_id) == []


def test_regrade_rescores_stored_workspaces_and_reports_changes(tmp_path: Path, evals_dir: Path) -> None:
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    job = out["job_id"]
    run_dir = tmp_path / out["runs"][0]["run_dir"]
    assert out["runs"][0]["grading_version"] == GRADING_VERSION
    # the run as results from before grading versions hold it: read as version 1, regraded to the current one
    old = json.loads((run_dir / "run.json").read_text())
    del old["grading_version"]
    (run_dir / "run.json").write_text(json.dumps({**old, "schema_version": 2}))
    with open_store(tmp_path) as st:
        st.rebuild_index()
        assert [r.grading_version for r in st.runs(job_id=job)] == [1]
    result = runner.invoke(app, ["regrade", job, "--results", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changes"] == []  # same graders, same scores
    assert json.loads((run_dir / "run.json").read_text())["grading_version"] == GRADING_VERSION
    with open_store(tmp_path) as st:
        assert [r.grading_version for r in st.runs(job_id=job)] == [GRADING_VERSION]
        assert st._conn().execute("SELECT grading_version FROM runs").fetchone()[0] == GRADING_VERSION
    # the agent's stored work changes under the grader's feet: the Seam call in cancel disappears
    svc = run_dir / "workspace" / "services" / "reservation_service.py"
    svc.write_text(svc.read_text().replace("delete_data", "forget_data"))
    result = runner.invoke(app, ["regrade", job, "--results", str(tmp_path), "--json"])
    data = json.loads(result.stdout)
    fields = {c["field"]: c for c in data["changes"]}
    assert fields["rubric"]["before"] == 100 and fields["rubric"]["after"] < 100
    assert "criterion:lifecycle_completeness" in fields
    assert (run_dir / "run.prev.json").is_file()
    assert json.loads((run_dir / "run.json").read_text())["regraded_at"]
    assert runner.invoke(app, ["regrade", "no-such-job", "--results", str(tmp_path)]).exit_code == 2


def test_an_agent_that_cannot_run_is_refused_before_the_job(
    tmp_path: Path, evals_dir: Path, monkeypatch
) -> None:
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    for agent, words in (
        ("claude-code", "ANTHROPIC_API_KEY"),
        ("codex", "OPENAI_API_KEY"),
        ("command", "--command"),
    ):
        result = runner.invoke(app, ["run", str(evals_dir), "--agent", agent, "--results", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert words in result.output
    assert not list(tmp_path.glob("*/job.json"))  # nothing was started


def test_harness_errors_are_not_scored(tmp_path: Path, evals_dir: Path) -> None:
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            "/nonexistent/agent {prompt}",
            "--fixtures",
            "flask-py",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    [run] = out["runs"]
    assert run["outcome"] == "harness_error" and "nonexistent" in run["error"]
    assert (
        run["grades"].get("rubric_total") is None
        and run["grades"].get("sandbox_total") is None
        and run["verdict"] is None
    )
    [summary] = out["evals"]
    assert summary["graded"] == 0 and summary["rubric"] is None and summary["errors"]
