"""One run configuration: an option declared once in ``RunConfig`` reaches the job, every run and run.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from skillassay.graders.judge_config import JudgeConfig
from skillassay.orchestrator.config import JobOptions, RunConfig, RunSpec

# what run.json's ``config`` has always held (older results and reports read these keys)
RECORDED = {
    "job_id",
    "eval_id",
    "run_index",
    "variant",
    "agent",
    "skill_dir",
    "skill_hash",
    "skill_mode",
    "model",
    "layers",
    "seam",
    "backend",
    "timeout",
    "command",
    "keep_workspace",
    "max_change_size",
    "retries",
    "isolation",
    "allow_hosts",
    "mounts",
    "retry_delay",
    "judge",
    "agent_env_keys",
    "definition",
}

GIVEN = {
    "agent": "noop",
    "skill_mode": "system-prompt",
    "model": "m",
    "layers": "rubric",
    "seam": "live",
    "backend": "docker",
    "timeout": 5.0,
    "agent_env": {"K": "secret-value"},
    "command": "x {prompt}",
    "retries": 0,
    "retry_delay": 1.0,
    "isolation": "none",
    "allow_hosts": ["example.org"],
    "mounts": [Path("/srv")],
    "judge": JudgeConfig(model="judge-model"),
}


def test_every_run_option_of_the_job_reaches_its_runs() -> None:
    assert set(GIVEN) == set(RunConfig.model_fields)  # a new option: give it a value here
    config = JobOptions.model_validate({**GIVEN, "runs": 3}).run_config()
    assert {k: getattr(config, k) for k in GIVEN} == GIVEN


def test_run_json_records_the_run_flat_and_no_environment_value() -> None:
    spec = RunSpec(job_id="J", eval_id="e", run_index=2, config=RunConfig.model_validate(GIVEN))
    recorded = spec.recorded(Path("evals/e"))
    assert set(recorded) == RECORDED
    assert (
        recorded["agent"] == "noop" and recorded["layers"] == "rubric" and recorded["agent_env_keys"] == ["K"]
    )
    assert "secret-value" not in str(recorded)


def test_an_option_given_beside_the_config_is_refused_not_lost() -> None:
    with pytest.raises(ValidationError, match="agent"):
        RunSpec(job_id="J", eval_id="e", run_index=1, agent="noop")  # type: ignore[call-arg]
