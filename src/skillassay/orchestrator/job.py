"""A job: every selected eval, run N times (and N more without the skill with --baseline), graded and stored.

Finished runs are on disk (run.json) and in the index before the next result is awaited, so killing the
orchestrator loses only the runs in flight; ``--resume JOB`` reruns just those and the infrastructure errors.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from skillassay import reaper
from skillassay import store as result_store
from skillassay.definitions import load_suite, select
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import SkillassayError
from skillassay.orchestrator.environment import skill_hash
from skillassay.orchestrator.executors import Executor, LocalExecutor
from skillassay.orchestrator.grading import Layers
from skillassay.orchestrator.trial import RunSpec, execute
from skillassay.store.models import JobRecord, RunRecord, Variant


class JobOptions(BaseModel):
    suite: Path = Path("evals")
    agent: str = "reference"
    skill: Path | None = None
    skill_mode: str = "native"
    model: str | None = None
    fixtures: list[str] = Field(default_factory=list)
    api_path: str | None = None
    layers: Layers = "both"
    runs: int = 1
    jobs: int = 1
    timeout: float = 600.0
    results: Path = Path("results")
    seam: str = "emulator"
    backend: str = "host"
    baseline: bool = False
    agent_env: dict[str, str] = Field(default_factory=dict)
    command: str | None = None
    emulator_delay: float = 1.0  # seconds a code spends "setting" (or "removing") on the emulator
    # seconds before pushed data takes effect on the emulator: Seam's automations are asynchronous, so a validator
    # (and an app) that expects codes at once is caught here rather than on the live service
    emulator_automation_delay: float = 0.5

    def stored(self) -> dict[str, Any]:
        """The options as kept in job.json: environment values are not stored, only their names."""
        data = self.model_dump(mode="json", exclude={"agent_env"})
        data["agent_env_keys"] = sorted(self.agent_env)
        return data


class JobResult(BaseModel):
    job: JobRecord
    records: list[RunRecord]
    evals: list[str]


def new_job_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def plan_runs(evals: list[EvalDefinition], runs: int, baseline: bool) -> list[tuple[str, int, Variant]]:
    planned: list[tuple[str, int, Variant]] = []
    for e in evals:
        for i in range(1, runs + 1):
            planned.append((e.id, i, "skill"))
            if baseline:
                planned.append((e.id, i, "baseline"))
    return planned


def _needs_emulator(evals: list[EvalDefinition], opts: JobOptions) -> bool:
    return opts.seam == "emulator" and opts.layers in ("sandbox", "both") and any(e.has_sandbox for e in evals)


# (event, finished run, error, job id): "job" once the job exists, then "start" / "done" / "error" per run
ProgressFn = Callable[..., None]


def run_job(opts: JobOptions, *, resume: str | None = None, on_event: ProgressFn | None = None,
            executor: Executor | None = None) -> JobResult:
    if opts.runs < 1:
        raise SkillassayError("--runs must be at least 1")
    if opts.skill is not None and not opts.skill.exists():
        raise SkillassayError(f"--skill {opts.skill}: no such file or folder")
    if opts.baseline and opts.skill is None:
        raise SkillassayError("--baseline compares runs with and without the skill: give --skill too")
    if opts.seam == "live" and opts.layers != "rubric":
        import os

        if not os.environ.get("SEAM_API_KEY"):
            raise SkillassayError("--seam live needs SEAM_API_KEY set to a Seam sandbox key")

    # absolute from here on: graders run tools in other folders, and job.json must mean the same from anywhere
    opts = opts.model_copy(update={"results": opts.results.resolve(), "suite": opts.suite.resolve(),
                                   "skill": opts.skill.resolve() if opts.skill else None})
    results_root = opts.results
    results_root.mkdir(parents=True, exist_ok=True)
    db = result_store.open(results_root)
    try:
        if resume:
            job = db.job(resume)
            if job is None:
                raise SkillassayError(f"--resume {resume}: no such job under {results_root}")
            opts = JobOptions.model_validate({**job.options, "agent_env": opts.agent_env,
                                              "results": results_root, "jobs": opts.jobs})
            opts = opts.model_copy(update={"suite": opts.suite.resolve()})
            todo = db.missing_runs(resume)
            job.status = "running"
        else:
            job = None
            todo = []
        evals = select(load_suite(opts.suite, opts.fixtures or None), opts.fixtures or None, opts.api_path)
        if not evals:
            raise SkillassayError(f"no eval in {opts.suite} matches the filters (fixtures={opts.fixtures}, "
                                  f"api-path={opts.api_path})")
        by_id = {e.id: e for e in evals}
        shash = skill_hash(opts.skill)
        if job is None:
            planned = plan_runs(evals, opts.runs, opts.baseline)
            job = JobRecord(job_id=new_job_id(), created_at=datetime.now(UTC), suite=str(opts.suite),
                            agent=opts.agent, skill_path=str(opts.skill) if opts.skill else None, skill_hash=shash,
                            options=opts.stored(), planned=planned)
            todo = list(planned)
        elif job.skill_hash and shash and job.skill_hash != shash:
            raise SkillassayError(f"--resume {job.job_id}: the skill changed since the job started "
                                  f"({job.skill_hash} -> {shash}); start a new job instead")
        db.record_job(job)
        result_store.write_job_file(results_root, job)
        if on_event:
            on_event("job", None, None, job.job_id)

        specs = [
            RunSpec(job_id=job.job_id, eval_id=eid, run_index=idx, variant=variant, agent=opts.agent,
                    skill_dir=opts.skill, skill_hash=shash, skill_mode=opts.skill_mode, model=opts.model,
                    layers=opts.layers, seam=opts.seam, backend=opts.backend, timeout=opts.timeout,
                    agent_env=opts.agent_env, command=opts.command)
            for eid, idx, variant in todo if eid in by_id
        ]
        emulator = None
        if specs and _needs_emulator([by_id[s.eval_id] for s in specs], opts):
            from skillassay.services.seam.emulator import SeamEmulator

            emulator = SeamEmulator(async_delay=opts.emulator_delay,
                                    automation_delay=opts.emulator_automation_delay).start(host="127.0.0.1", port=0)
        executor = executor or LocalExecutor(opts.jobs)
        status = "interrupted"
        try:
            def one(spec: RunSpec) -> RunRecord:
                if on_event:
                    on_event("start", None, None)
                return execute(spec, by_id[spec.eval_id], results_root, emulator=emulator)

            for spec, result in executor.map_unordered(one, specs):
                if isinstance(result, BaseException):
                    if isinstance(result, KeyboardInterrupt):
                        raise result
                    if on_event:
                        on_event("error", None, result)
                    continue
                db.record_run(result)
                if on_event:
                    on_event("done", result, None)
            status = "finished"
        except KeyboardInterrupt:
            # safety net: agents and apps run in their own process groups, which a Ctrl-C never reaches
            reaper.kill_all()
            raise
        finally:
            if emulator is not None:
                emulator.stop()
            job = db.finish_job(job.job_id, status)
            result_store.write_job_file(results_root, job)
        records = db.runs(job_id=job.job_id)
        return JobResult(job=job, records=records, evals=[e.id for e in evals])
    finally:
        db.close()
