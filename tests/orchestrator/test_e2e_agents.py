"""The main job with the real agent CLIs, offline: `skillassay run` drives Claude Code and Codex against the
project's scripted model server, then grades both layers on the embedded Seam emulator."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from parts import pinned_node_version
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.testing import ModelServer, Script
from skillassay.workspace.changes import compare_trees

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long(reason="real agent CLIs, then an app installed and built on an empty cache and graded"),
]
runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "examples" / "skills" / "seam-lock-access"


def changed_files(app_dir: Path, solution: Path) -> dict[str, str]:
    """Every file of ``solution`` that is new or differs from ``app_dir``: what an agent has to write."""
    return {rel: (solution / rel).read_text() for rel in compare_trees(app_dir, solution).written}


def writer_command(files: dict[str, str], *, only_with_skill: bool = False, then_print: str = "") -> str:
    """A command agent that writes ``files`` into its workspace. The files travel in the command line: a
    sealed agent cannot read the suite (which is the point), so it cannot copy a golden solution from
    there."""
    blob = base64.b64encode(json.dumps(files).encode()).decode()
    load = f"json.loads(base64.b64decode('{blob}'))"
    if only_with_skill:  # the skill folder's presence, as the command agent is told it
        load += " if os.environ.get('SKILLASSAY_SKILL_DIR') else {}"
    code = (
        f"import base64,json,os,pathlib; d = {load}; "
        "[(pathlib.Path(k).parent.mkdir(parents=True, exist_ok=True), pathlib.Path(k).write_text(v)) "
        "for k, v in d.items()]; " + (f"print({then_print!r})" if then_print else "")
    )
    return f'{sys.executable} -c "{code}"'


def claude_script(script_id: str, files: dict[str, str], skill: str | None = "seam-lock-access") -> Script:
    """The model's side of a session: use the skill, read the service, write each file with Claude's Write
    tool.
    """
    turns: list = []
    if skill:
        turns.append([{"tool_use": {"name": "Skill", "input": {"skill": skill}}}])
    turns.append(
        [
            {"text": "Reading the routes and the service layer first."},
            {"tool_use": {"name": "Glob", "input": {"pattern": "**/*"}}},
        ]
    )
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
    return Script.model_validate(
        {
            "id": script_id,
            "turns": turns,
            "final_text": "Integrated Seam in create, update and cancel, with a webhook route.",
        }
    )


def _run(args: list[str]) -> dict:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def server():
    with ModelServer() as s:
        yield s


def test_claude_code_with_the_skill_installed_natively_scores_100(
    server, tmp_path: Path, evals_dir: Path
) -> None:
    fx = evals_dir / "fixtures" / "express-ts"
    sid = server.add_script(claude_script("golden", changed_files(fx / "app", fx / "test_golden")))
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "claude-code",
            "--skill",
            str(SKILL),
            "--fixtures",
            "express-ts",
            "--results",
            str(tmp_path),
            "--json",
            "--timeout",
            "180",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
            "--agent-env",
            "SKILLASSAY_MAX_RETRIES=1",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed", run.get("error")
    assert run["grades"]["sandbox_total"] == 100
    assert run["grades"]["rubric_total"] == 100 and run["grades"]["combined"] == 100
    assert run["verdict"]["passed"] is True
    assert run["transcript"]["skill_loaded"] and run["transcript"]["skill_invoked"]
    # the pinned CLI, not any on PATH
    assert run["agent_version"] == pinned_node_version("@anthropic-ai/claude-code")
    run_dir = tmp_path / run["run_dir"]
    transcript = json.loads((run_dir / "transcript.json").read_text())
    assert "seam-lock-access" in transcript["skills_available"]
    assert [c["name"] for c in transcript["tool_calls"]][:2] == ["Skill", "Glob"]
    assert (run_dir / "transcript.raw.jsonl").is_file()
    # the skill lives in the agent's private home, never in the diff
    assert ".claude" not in (run_dir / "diff.patch").read_text()


def test_a_script_that_takes_the_wrong_path_scores_lower(server, tmp_path: Path, evals_dir: Path) -> None:
    fx = evals_dir / "fixtures" / "express-ts"
    sid = server.add_script(
        claude_script("wrong", changed_files(fx / "app", fx / "test_controls" / "wrong-path"))
    )
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "claude-code",
            "--skill",
            str(SKILL),
            "--fixtures",
            "express-ts",
            "--results",
            str(tmp_path),
            "--json",
            "--timeout",
            "180",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed"
    assert run["grades"]["api_path_correct"] is False and run["grades"]["api_path"] == "access_codes"
    assert run["grades"]["rubric_total"] <= 40 and run["grades"]["combined"] < 80
    assert run["verdict"]["passed"] is False


def test_hung_agent_is_killed_at_the_timeout(server, tmp_path: Path, evals_dir: Path) -> None:
    sid = server.add_script(Script.model_validate({"id": "hang", "turns": [{"hang": 120, "actions": []}]}))
    # both layers: with one layer the other's criteria are unjudged and no run could pass, whatever happened
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "claude-code",
            "--fixtures",
            "flask-py",
            "--results",
            str(tmp_path),
            "--json",
            "--timeout",
            "8",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "timed_out"
    assert run["timings"]["agent"] < 60
    assert run["files_changed"] == 0
    # scored like any run (a timeout is the agent's failure), on both layers, and the empty change fails
    assert run["verdict"]["unjudged"] == []
    assert run["grades"]["sandbox_total"] is not None and run["grades"]["rubric_total"] is not None
    assert run["verdict"]["passed"] is False and run["grades"]["combined"] < 80


def test_codex_run_completes_end_to_end(server, tmp_path: Path, evals_dir: Path) -> None:
    fx = evals_dir / "fixtures" / "flask-py"
    files = changed_files(fx / "app", fx / "test_golden")
    # Codex writes through its shell tool here: one exec per file, content passed base64-encoded
    import base64

    turns = []
    for rel, content in files.items():
        b64 = base64.b64encode(content.encode()).decode()
        cmd = (
            f"{sys.executable} -c \"import base64,pathlib; p=pathlib.Path('{rel}'); "
            f"p.parent.mkdir(parents=True, exist_ok=True); p.write_bytes(base64.b64decode('{b64}'))\""
        )
        turns.append([{"exec": {"cmd": cmd}}])
    sid = server.add_script(
        Script.model_validate({"id": "codex-golden", "turns": turns, "final_text": "Done."})
    )
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "codex",
            "--skill",
            str(SKILL),
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
            "--timeout",
            "180",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
            "--agent-env",
            "SKILLASSAY_MAX_RETRIES=1",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed", run.get("error")
    assert run["grades"]["rubric_total"] == 100
    transcript = json.loads((tmp_path / run["run_dir"] / "transcript.json").read_text())
    assert sum(1 for c in transcript["tool_calls"] if c["kind"] == "shell") == len(files)
