"""Issue 14, item 1: every failure lands on the right side. What the agent does is scored, whatever it does (a
crash, a non-zero exit, a signal, deleting its workspace); what the harness fails to do (a grader or
detector crash, a gate it cannot measure) is a harness error: never scored, counted apart, rerun by
`--resume`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.graders import engine
from skillassay.store import open as open_store

runner = CliRunner()
SH = "/bin/sh -c"


def _run(args: list[str]) -> tuple[int, dict | str]:
    result = runner.invoke(app, ["run", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, result.output


def _one(out) -> dict:
    assert isinstance(out, dict), out
    [run] = out["runs"]
    return run


def _command(script: str) -> str:
    """A command agent running ``script`` in a shell ({workspace} filled in by the agent)."""
    return f"{SH} {shlex.quote(script)}"


def test_an_agent_that_destroys_its_workspace_is_scored(tmp_path: Path, evals_dir: Path) -> None:
    """`rm -rf {workspace}`: the change is "everything deleted", graded and failed, never a harness error."""
    code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            _command("rm -rf {workspace}"),
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
    run = _one(out)
    assert run["outcome"] == "completed", run["error"]
    assert run["files_changed"] >= 5 and run["harness_failures"] == []
    changes = json.loads((tmp_path / run["run_dir"] / "changes.json").read_text())
    assert {f["status"] for f in changes["files"]} == {"deleted"}
    assert "src/index.ts" in {f["path"] for f in changes["files"]}
    assert (
        run["verdict"] is not None
        and run["verdict"]["passed"] is False
        and run["grades"]["rubric_total"] < 50
    )
    assert out["evals"][0]["graded"] == 1
    assert open_store(tmp_path).missing_runs(out["job_id"]) == []  # --resume does not re-roll it


def test_an_agent_that_deletes_its_git_history_is_scored_on_its_files(
    tmp_path: Path, evals_dir: Path
) -> None:
    script = "rm -rf {workspace}/.git && echo '// touched' >> {workspace}/src/index.ts"
    _code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            _command(script),
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    run = _one(out)
    assert run["outcome"] == "completed" and run["files_changed"] == 1, run["error"]
    assert "+// touched" in (tmp_path / run["run_dir"] / "diff.patch").read_text()


@pytest.mark.parametrize(
    ("script", "exit_code", "signal"),
    [
        ("echo '// half done' >> {workspace}/src/index.ts; exit 3", 3, None),
        ("echo '// half done' >> {workspace}/src/index.ts; kill -KILL $$", None, 9),
    ],
    ids=["non-zero exit", "killed by a signal"],
)
def test_an_agent_that_fails_after_changing_files_is_an_agent_error(
    tmp_path: Path, evals_dir: Path, script: str, exit_code: int | None, signal: int | None
):
    _code, out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            _command(script),
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    run = _one(out)
    assert run["outcome"] == "agent_error"
    assert run["agent_exit"]["exit_code"] == exit_code and run["agent_exit"]["signal"] == signal
    if signal:
        assert run["agent_exit"]["signal_name"] == "SIGKILL" and "SIGKILL" in run["error"]
    assert run["files_changed"] == 1 and run["verdict"] is not None  # graded: the agent's failure is scored
    stored = json.loads((tmp_path / run["run_dir"] / "run.json").read_text())
    assert stored["agent_exit"] == run["agent_exit"]
    [summary] = out["evals"]
    assert summary["graded"] == 1 and summary["outcomes"] == {"agent_error": 1}


def test_a_crashing_detector_makes_a_harness_error_that_resume_reruns(
    tmp_path: Path, evals_dir: Path, monkeypatch
) -> None:
    """A forbidden-behaviour detector that crashes never leaves the behaviour unflagged and the run scored."""

    def crash(behaviour, ctx):
        raise RuntimeError("detector bug")

    monkeypatch.setitem(engine.DETECTORS, "test_tampering", crash)
    _code, out = _run(
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
    assert run["outcome"] == "harness_error"
    assert [f["stage"] for f in run["harness_failures"]] == ["detector:tampers_with_tests"]
    assert "RuntimeError: detector bug" in (tmp_path / run["run_dir"] / "harness_error.txt").read_text()
    [summary] = out["evals"]
    assert summary["graded"] == 0 and summary["score"] is None and summary["pass_rate"] is None
    assert summary["outcomes"] == {"harness_error": 1}
    result = runner.invoke(app, ["runs", "--results", str(tmp_path), "--job", out["job_id"]])
    assert "1 harness error (1 not scored: left out of every figure)" in result.output

    monkeypatch.undo()
    _code, again = _run(["--resume", out["job_id"], "--results", str(tmp_path), "--json"])
    run = _one(again)
    assert run["outcome"] == "completed" and run["verdict"]["passed"] is True
    superseded = list((tmp_path / out["job_id"] / "cancellation-support" / ".superseded").glob("run_1-*"))
    assert len(superseded) == 1 and (superseded[0] / "harness_error.txt").is_file()  # kept, not deleted


def test_the_summary_table_says_what_was_not_scored(tmp_path: Path, evals_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            "/nonexistent/agent",
            "--fixtures",
            "express-ts",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0
    text = " ".join(result.output.replace("│", " ").split())  # cells wrap: read the table's words in order
    assert "0 of 1 scored" in text and "1 harness error: not scored, left out of every figure" in text
    assert "Outcomes: 1 harness error." in text
