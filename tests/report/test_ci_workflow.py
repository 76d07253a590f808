"""docs/ci.md's workflow, its commands run in order with bash (as GitHub Actions runs a step) on a local
copy of a skill repository: both arms with the real Claude Code CLI against the scripted model server.

What a runner has and this machine need not do is left out: the set-up steps (apt, pip, ``install-agents``)
and the actions (checkout, cache, upload). The run step is adapted in two ways only (``adapted``): one run
per eval, the model server as upstream. Both layers run, as the workflow's do: the rubric, and the sandbox
(the app installed, built and started, driven against the Seam emulator)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from skillassay.store.records import RunRecord
from skillassay.testing import ModelServer, parse_scripts

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-" + "ci-workflow-test-key-0123456789abcdef"
pytestmark = pytest.mark.slow


def workflow() -> dict:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    return yaml.safe_load(block)


def skillassay_steps(flow: dict) -> list[tuple[str, str]]:
    """(name, script) of each step that runs skillassay, set-up lines left out."""
    (job,) = flow["jobs"].values()
    out = []
    for step in job["steps"]:
        lines = [
            ln
            for ln in step.get("run", "").splitlines()
            if "pip install" not in ln and "install-agents" not in ln
        ]
        if any("skillassay" in ln for ln in lines):
            out.append((step.get("name", ""), "\n".join(lines)))
    return out


def skill_repo(root: Path) -> Path:
    """A skill repository: its skill at skills/my-skill, a suite of one eval at evals/."""
    shutil.copytree(REPO / "examples" / "skills" / "seam-lock-access", root / "skills" / "my-skill")
    (root / "evals" / "fixtures").mkdir(parents=True)
    shutil.copy(REPO / "evals" / "rubric.json", root / "evals" / "rubric.json")
    shutil.copytree(REPO / "evals" / "fixtures" / "flask-py", root / "evals" / "fixtures" / "flask-py")
    return root


def adapted(script: str, upstream: str) -> str:
    if "skillassay run " not in script:
        return script
    assert "--runs 3" in script and "--skill skills/my-skill" in script, script
    return script.replace("--runs 3", "--runs 1").replace(
        "--skill skills/my-skill", f"--skill skills/my-skill --model-upstream {upstream}"
    )


def test_the_ci_workflow_runs_on_a_skill_repository(tmp_path):
    flow = workflow()
    steps = skillassay_steps(flow)
    names = [n for n, _ in steps]
    assert names == [
        "Agent CLIs; the suite's definitions",
        "Run the baseline and the skill",
        "Summary",
        "HTML report",
        "Fail if the skill makes things worse",
    ], names
    repo = skill_repo(tmp_path / "repo")
    summary, output = tmp_path / "step_summary.md", tmp_path / "github_output"
    summary.touch()
    output.touch()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "ANTHROPIC_API_KEY": KEY,  # the run step's env: the repository's secret
    }
    (script,) = parse_scripts({"id": "ci", "turns": [{"actions": [{"text": "Looked; nothing to change."}]}]})
    with ModelServer([script]) as server:
        for name, script_text in steps:
            outputs = dict(ln.split("=", 1) for ln in output.read_text().splitlines() if "=" in ln)
            text = adapted(script_text, server.base_url("ci"))
            text = text.replace("${{ steps.run.outputs.job }}", outputs.get("job", ""))
            assert "${{" not in text, text
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", text],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        calls = len(server.conversation_requests("ci"))
    job = dict(ln.split("=", 1) for ln in output.read_text().splitlines())["job"]
    md = summary.read_text()
    assert f"### skillassay job `{job}`" in md
    assert "suite evals, skill skills/my-skill:" in md  # as the repository names them
    assert "#### With the skill against without it" in md
    assert f"### skillassay: `{job}` against `{job}:baseline`" in md
    assert (repo / "report" / "index.html").is_file()
    assert (repo / "report" / "jobs" / job / "index.html").is_file()
    runs = [RunRecord.model_validate_json(p.read_text()) for p in (repo / "results" / job).rglob("run.json")]
    assert sorted(r.variant for r in runs) == ["baseline", "skill"]
    assert all(r.agent == "claude-code" and r.outcome == "completed" for r in runs), [r.error for r in runs]
    # the sandbox layer ran in both arms: the app built and started, its checks scored
    for r in runs:
        sandbox = json.loads((repo / "results" / r.run_dir / "sandbox.json").read_text())
        assert r.figure("rubric_total") is not None and r.figure("sandbox_total") == sandbox["total"], (
            r.grades
        )
        assert sandbox["checks"]["build"]["passed"] is True, sandbox["checks"]["build"]
        # the agent changed nothing: the app starts and is driven, and no Seam check passes
        assert "start" in sandbox["timings"] and not sandbox["checks"]["create"]["passed"]
    # both arms talked to the scripted model through the job's proxy, and only the skill's had the skill
    assert all(r.model_usage and r.model_usage.requests >= 1 for r in runs)
    assert calls >= len(runs)
    assert {r.variant: r.skill_path is not None for r in runs} == {"skill": True, "baseline": False}
    assert KEY not in md
