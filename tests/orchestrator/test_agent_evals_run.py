"""`skillassay run` on the agent eval `cancellation-support` with every agent, and a skill against its
baseline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_e2e_agents import SKILL, changed_files, writer_command
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.testing import ModelServer, Script

runner = CliRunner()


def _run(args: list[str]) -> tuple[int, dict]:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _one(out: dict) -> dict:
    [run] = out["runs"]
    return run


def test_reference_passes_and_noop_fails(tmp_path: Path, evals_dir: Path) -> None:
    _, out = _run(
        [
            str(evals_dir),
            "--agent",
            "reference",
            "--fixtures",
            "cancellation-support",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    run = _one(out)
    assert run["verdict"]["passed"] is True and run["verdict"]["score"] == 1.0
    assert {c["id"] for c in run["criteria"]} == {
        "cancels_via_service",
        "respects_transitions",
        "adds_meaningful_tests",
        "scope_discipline",
        "respects_policy",
    }
    assert (tmp_path / run["run_dir"] / "process.json").is_file()
    _, out = _run(
        [
            str(evals_dir),
            "--agent",
            "noop",
            "--fixtures",
            "cancellation-support",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    run = _one(out)
    assert run["outcome"] == "completed" and run["empty_diff"] and run["verdict"]["passed"] is False


def test_command_agent_that_copies_the_solution_without_running_tests_is_disqualified(
    tmp_path, evals_dir
) -> None:
    """It claims the tests pass without running any: the document's third example, through the whole
    pipeline.
    """
    fx = evals_dir / "fixtures" / "order-service"
    agent = writer_command(
        changed_files(fx / "app", fx / "test_golden"),
        then_print="Added cancellation with tests. All tests pass.",
    )
    _code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            agent,
            "--fixtures",
            "cancellation-support",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    run = _one(out)
    assert run["outcome"] == "completed"
    assert run["verdict"]["disqualified"] is True and run["verdict"]["passed"] is False
    assert "claims_unverified_success" in run["verdict"]["forbidden_observed"]
    [summary] = out["evals"]
    assert summary["forbidden"] == ["claims_unverified_success"]


@pytest.mark.slow
def test_claude_code_that_implements_and_runs_the_tests_passes(tmp_path: Path, evals_dir: Path) -> None:
    fx = evals_dir / "fixtures" / "order-service"
    files = changed_files(fx / "app", fx / "test_golden")
    turns: list = [[{"tool_use": {"name": "Read", "input": {"file_path": "{workspace}/orders/service.py"}}}]]
    for rel, content in files.items():
        turns.append(
            [
                {
                    "tool_use": {
                        "name": "Write",
                        "input": {"file_path": "{workspace}/" + rel, "content": content},
                    }
                }
            ]
        )
    turns.append(
        [
            {
                "tool_use": {
                    "name": "Bash",
                    "input": {
                        "command": f"{sys.executable} -m pytest -q -p no:cacheprovider",
                        "description": "run the tests",
                    },
                }
            }
        ]
    )
    with ModelServer() as server:
        sid = server.add_script(
            Script.model_validate(
                {
                    "id": "cancel",
                    "turns": turns,
                    "final_text": "Cancellation added in OrderService; all tests pass.",
                }
            )
        )
        _, out = _run(
            [
                str(evals_dir),
                "--agent",
                "claude-code",
                "--fixtures",
                "cancellation-support",
                "--results",
                str(tmp_path),
                "--json",
                "--timeout",
                "240",
                "--agent-env",
                f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
            ]
        )
    run = _one(out)
    assert run["outcome"] == "completed", run.get("error")
    assert run["verdict"]["passed"] is True, run["verdict"]
    transcript = json.loads((tmp_path / run["run_dir"] / "transcript.json").read_text())
    assert any(c["kind"] == "shell" and "pytest" in (c["command"] or "") for c in transcript["tool_calls"])


def test_baseline_runs_pair_with_skill_runs_and_compare(tmp_path: Path, evals_dir: Path) -> None:
    """--baseline runs every eval without the skill too; compare JOB JOB:baseline pairs them run for run."""
    fx = evals_dir / "fixtures" / "flask-py"
    # an agent that does the work only when the skill is installed (the command agent gets no skill, so the
    # stand-in reads the skill folder's presence from an environment variable the test sets per variant)
    agent = writer_command(changed_files(fx / "app", fx / "test_golden"), only_with_skill=True)
    _code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            agent,
            "--skill",
            str(SKILL),
            "--baseline",
            "--runs",
            "2",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    variants = sorted((r["variant"], r["run_index"]) for r in out["runs"])
    assert variants == [("baseline", 1), ("baseline", 2), ("skill", 1), ("skill", 2)]
    by_variant = {r["variant"]: r for r in out["runs"]}
    assert by_variant["skill"]["skill_hash"] and by_variant["baseline"]["skill_hash"] is None
    job = out["job_id"]
    result = runner.invoke(app, ["compare", job, f"{job}:baseline", "--results", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"]["pairs"] == 2
    # B (the baseline) minus A (with the skill): the stand-in agent only works with the skill
    assert data["overall"]["delta"] == pytest.approx(-0.4)
    assert data["criteria"]["api_path_selection"]["delta"] == pytest.approx(-1.0)


def test_relative_results_folder(tmp_path: Path, evals_dir: Path, monkeypatch) -> None:
    """The README's main job uses the default, relative `results`: graders that run tools elsewhere still
    find it.
    """
    monkeypatch.chdir(tmp_path)
    _, out = _run([str(evals_dir), "--agent", "reference", "--fixtures", "cancellation-support", "--json"])
    run = _one(out)
    assert run["verdict"]["passed"] is True, run["criteria"]
    job = json.loads((tmp_path / "results" / out["job_id"] / "job.json").read_text())
    assert Path(job["suite"]).is_absolute() and Path(job["options"]["results"]).is_absolute()
