"""How runs run: the options the CLI takes, the job keeps (job.json ``options``) and every run records
(run.json ``config``), declared once. ``JobOptions`` is a ``RunConfig`` with the job's own options;
``RunSpec`` is which run, with the job's ``RunConfig``. A new option is added here, once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillassay.graders.judge_config import JudgeConfig
from skillassay.orchestrator import canary as canaries
from skillassay.orchestrator.grading import Layers
from skillassay.store.files import run_dir_rel
from skillassay.store.records import Variant
from skillassay.workspace.bounded_copy import DEFAULT_MAX_CHANGE

JOBS_ENV = "SKILLASSAY_JOBS"  # the default of --jobs (1 in this repository's test suite: tests/conftest.py)


def default_jobs() -> int:
    """Runs at once when ``--jobs`` is not given: ``SKILLASSAY_JOBS``, else twice the CPUs this process may
    use, at most 4.

    A run mostly waits (its app booting, Seam's asynchronous codes, the quiet windows of its checks), so
    more runs than cores keep them busy; past four, memory (an app, an agent CLI and a sandbox per run) and
    the providers' rate limits cost more than the waits save. Measured on 2 cores (docs/DEVELOPING.md, the
    README's main job): warm 14.5 s at 2, 12.2 s at 3, 11.1 s at 4; on an empty cache 79-89 s at 3, 73 s at 4.
    """
    text = os.environ.get(JOBS_ENV, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            from skillassay.errors import SkillassayError

            raise SkillassayError(f"{JOBS_ENV}={text!r}: expected a whole number of runs at once, 1 or more")
        return int(text)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(2 * cpus, 4))


class RunConfig(BaseModel):
    """What every run of a job is given: the agent, how it is graded and how it is sealed."""

    agent: str = "reference"
    skill_mode: str = "native"
    model: str | None = None
    layers: Layers = "both"
    seam: str = "emulator"
    backend: str = "host"
    timeout: float = 600.0
    agent_env: dict[str, str] = Field(default_factory=dict)
    command: str | None = None
    retries: int = 2  # whole agent phases tried again after a provider error (orchestrator/attempts.py)
    retry_delay: float = 10.0  # seconds before the first retry, doubled for each next one (with jitter)
    # how the agent, the app and the graders' commands are sealed (docs/sealing.md)
    isolation: str = "bubblewrap"
    # granted beyond the stack's registries (--allow-host)
    allow_hosts: list[str] = Field(default_factory=list)
    mounts: list[Path] = Field(default_factory=list)  # granted read-only to the agent (--mount)
    judge: JudgeConfig | None = None  # the LLM judge of llm_judge criteria (no key: the name of its variable)

    def run_config(self) -> RunConfig:
        """The run configuration alone (of a ``JobOptions``, say)."""
        return RunConfig.model_validate({name: getattr(self, name) for name in RunConfig.model_fields})


class JobOptions(RunConfig):
    """The job's options: its runs' configuration (``RunConfig``), which evals, how many runs, where they
    execute, the job's services and its limits."""

    suite: Path = Path("evals")
    skill: Path | None = None
    fixtures: list[str] = Field(default_factory=list)
    api_path: str | None = None
    runs: int | None = None  # None: 1, or a trigger suite's own runs
    jobs: int = Field(default_factory=default_jobs, ge=1)  # runs at once (the local executor)
    executor: str = "local"  # local or ray (see orchestrator/executors/)
    # --executor ray: a cluster's address (default: RAY_ADDRESS, else a local one)
    ray_address: str | None = None
    results: Path = Path("results")
    baseline: bool = False
    emulator_delay: float = 1.0  # seconds a code spends "setting" (or "removing") on the emulator
    # seconds before pushed data takes effect on the emulator: Seam's automations are asynchronous, so a
    # validator (and an app) that expects codes at once is caught here rather than on the live service
    emulator_automation_delay: float = 0.5
    # the agent's model (orchestrator/model_access.py): where the job's model proxy sends calls (None: the
    # providers), its price table and the job's spending limit
    model_upstream: str | None = None
    pricing: Path | None = None
    max_cost: float | None = None
    # where the model proxy listens and what address runs are given (another node's runs need a reachable one;
    # by default an executor whose runs execute elsewhere says which: Ray's is this machine's node address)
    proxy_host: str = "127.0.0.1"
    proxy_port: int = 0
    proxy_public_host: str | None = None
    # bytes of added or changed files a run keeps and grades (None: the eval's own limit, or 20 MB)
    max_change_size: int | None = None
    # golden runs of each eval's canary on a cache miss (orchestrator/canary.py); 0: no canary (a warning is
    # kept)
    canary_runs: int = Field(default_factory=canaries.default_runs, ge=0)

    def stored(self) -> dict[str, Any]:
        """The options as kept in job.json: environment values are not stored, only their names."""
        data = self.model_dump(mode="json", exclude={"agent_env"})
        data["agent_env_keys"] = sorted(self.agent_env)
        return data


class RunSpec(BaseModel):
    """Which run (its job, eval, index and arm, the skill it is given and how much of its change it keeps),
    run as ``config`` says; what its run.json records as its configuration (``recorded``)."""

    model_config = ConfigDict(extra="forbid")  # an option given beside ``config`` would be lost

    job_id: str
    eval_id: str
    run_index: int
    variant: Variant = "skill"
    skill_dir: Path | None = None
    skill_hash: str | None = None
    keep_workspace: bool = True
    # bytes of added or changed files kept and graded (bounded_copy.py)
    max_change_size: int = DEFAULT_MAX_CHANGE
    config: RunConfig = Field(default_factory=RunConfig)

    @property
    def rel_dir(self) -> str:
        return run_dir_rel(self.job_id, self.eval_id, self.run_index, self.variant)

    def recorded(self, definition_source: Path) -> dict[str, Any]:
        """The run's configuration as run.json keeps it, one flat mapping: environment values are not stored,
        only their names."""
        which = json.loads(self.model_dump_json(exclude={"config"}))
        how = json.loads(self.config.model_dump_json(exclude={"agent_env"}))
        return (
            which
            | how
            | {"agent_env_keys": sorted(self.config.agent_env), "definition": str(definition_source)}
        )
