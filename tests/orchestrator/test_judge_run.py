"""Issue 14, item 4: the LLM judge works, end to end through `skillassay run`, `regrade` and `check
--controls`, with the scripted model server playing the judge; a judge that fails is a harness error (never
the agent's zero), and an eval that needs a judge is refused before anything runs when none is configured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.store import open as open_store
from skillassay.testing.model_server import ModelServer
from skillassay.testing.script import Script

runner = CliRunner()
QUOTE = "def cancel(self, order_id: int) -> Order:"
JUDGED = """
[[criteria]]
id = "judged_design"
description = "The cancellation reads like the rest of the service"
weight = 10
grader = "llm_judge"
[criteria.options]
question = "Does the cancellation follow the service's existing transition pattern?"
"""


@pytest.fixture(scope="module")
def server():
    with ModelServer() as s:
        yield s


def _judge(
    server: ModelServer, sid: str, score: float = 0.9, quote: str = QUOTE, error: int | None = None
) -> str:
    turn = (
        {"error": error}
        if error
        else [
            {
                "tool_use": {
                    "name": "record_judgement",
                    "input": {
                        "score": score,
                        "quotes": [quote],
                        "reasoning": "It goes through _transition like pay and ship.",
                    },
                }
            }
        ]
    )
    server.add_script(Script.model_validate({"id": sid, "turns": [turn]}))
    return server.base_url(sid)


@pytest.fixture()
def suite(tmp_path: Path, evals_dir: Path, monkeypatch) -> Path:
    """The shipped order-service eval with one criterion an LLM judge grades (golden only, no controls)."""
    for name in ("SKILLASSAY_JUDGE_MODEL", "SKILLASSAY_JUDGE_BASE_URL", "SKILLASSAY_JUDGE_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    dst = tmp_path / "evals"
    skip = shutil.ignore_patterns("test_controls", "__pycache__", "*.transcript.json")
    shutil.copytree(evals_dir / "fixtures/order-service", dst / "fixtures/order-service", ignore=skip)
    shutil.copy(
        evals_dir / "fixtures/order-service/test_golden.transcript.json", dst / "fixtures/order-service"
    )
    (dst / "agent-evals").mkdir()
    shutil.copytree(
        evals_dir / "agent-evals/cancellation-support", dst / "agent-evals/cancellation-support", ignore=skip
    )
    toml = (evals_dir / "agent-evals/cancellation-support.toml").read_text()
    (dst / "agent-evals/cancellation-support.toml").write_text(toml + JUDGED)
    return dst


def _run(*args: str) -> tuple[int, dict | str]:
    result = runner.invoke(app, ["run", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, result.output


def _criterion(run: dict, cid: str = "judged_design") -> dict:
    return next(c for c in run["criteria"] if c["id"] == cid)


def test_run_grades_with_the_judge_it_is_given(server, suite: Path, tmp_path: Path) -> None:
    url = _judge(server, "judge-run")
    code, out = _run(
        str(suite),
        "--agent",
        "reference",
        "--results",
        str(tmp_path / "r"),
        "--json",
        "--judge-model",
        "claude-judge",
        "--judge-base-url",
        url,
    )
    assert code == 0, out
    [run] = out["runs"]
    assert run["outcome"] == "completed", run["error"]
    judged = _criterion(run)
    assert judged["fraction"] == 0.9 and f'quote: "{QUOTE}"' in judged["evidence"]
    assert run["verdict"]["passed"] is True and run["verdict"]["unjudged"] == []
    [req] = server.conversation_requests("judge-run")
    assert req.body["model"] == "claude-judge" and "existing transition pattern" in req.text()
    assert QUOTE in req.text()  # the judge was shown the agent's diff
    assert run["config"]["judge"]["model"] == "claude-judge"  # which judge graded it, kept with the run


def test_a_failing_judge_is_a_harness_error_and_resume_reruns_it(server, suite: Path, tmp_path: Path) -> None:
    down = _judge(server, "judge-down", error=500)
    _code, out = _run(
        str(suite),
        "--agent",
        "reference",
        "--results",
        str(tmp_path / "r"),
        "--json",
        "--judge-model",
        "claude-judge",
        "--judge-base-url",
        down,
    )
    [run] = out["runs"]
    assert run["outcome"] == "harness_error"
    assert [f["stage"] for f in run["harness_failures"]] == ["grader:judged_design"]
    assert "HTTP 500" in run["error"]
    assert out["evals"][0]["graded"] == 0 and out["evals"][0]["score"] is None  # never a zero for the agent
    up = _judge(server, "judge-up", score=1.0)
    _code, again = _run(
        "--resume", out["job_id"], "--results", str(tmp_path / "r"), "--json", "--judge-base-url", up
    )
    [run] = again["runs"]
    assert run["outcome"] == "completed" and _criterion(run)["fraction"] == 1.0


def test_an_eval_needing_a_judge_is_refused_without_one(suite: Path, tmp_path: Path) -> None:
    code, out = _run(str(suite), "--agent", "reference", "--results", str(tmp_path / "r"))
    assert code == 2
    assert "an LLM judge grades cancellation-support (judged_design)" in out and "--judge-model" in out
    assert not list((tmp_path / "r").glob("*/job.json"))
    result = runner.invoke(app, ["check", str(suite), "--controls"])
    assert result.exit_code == 2 and "an LLM judge grades" in result.output


def test_regrade_uses_the_judge_given_or_the_jobs(server, suite: Path, tmp_path: Path) -> None:
    results = tmp_path / "r"
    _code, out = _run(
        str(suite),
        "--agent",
        "reference",
        "--results",
        str(results),
        "--json",
        "--judge-model",
        "claude-judge",
        "--judge-base-url",
        _judge(server, "judge-first", score=0.9),
    )
    job = out["job_id"]
    # no judge option: the job's own judge (same script, same answer): nothing changes
    result = runner.invoke(app, ["regrade", job, "--results", str(results), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changes"] == []
    assert len(server.conversation_requests("judge-first")) == 2
    # another judge given: its answer is the new score, the previous record kept
    result = runner.invoke(
        app,
        [
            "regrade",
            job,
            "--results",
            str(results),
            "--json",
            "--judge-base-url",
            _judge(server, "judge-second", score=0.5),
        ],
    )
    changes = json.loads(result.stdout)["changes"]
    assert {"field": "criterion:judged_design", "before": 0.9, "after": 0.5} in [
        {k: c[k] for k in ("field", "before", "after")} for c in changes
    ]
    [run] = open_store(results).runs(job_id=job)
    assert _criterion(json.loads(run.model_dump_json()))["fraction"] == 0.5


def test_check_controls_grades_the_golden_with_the_judge(server, suite: Path) -> None:
    url = _judge(server, "judge-controls", score=1.0)
    result = runner.invoke(
        app, ["check", str(suite), "--controls", "--judge-model", "claude-judge", "--judge-base-url", url]
    )
    assert result.exit_code == 0, result.output
    assert len(server.conversation_requests("judge-controls")) == 1  # the golden was judged
