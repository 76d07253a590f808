"""A job: every selected eval, run N times (and N more without the skill with --baseline), graded and stored.

Finished runs are on disk (run.json) and in the index before the next result is awaited, so killing the
orchestrator loses only the runs in flight; ``--resume JOB`` reruns just those and the unscored runs (provider
and harness errors: ``outcomes.RERUN``). One process at a time holds a job (``store.files.job_lock``).
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Callable
from contextlib import ExitStack, closing
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from skillassay import phases, reaper
from skillassay import store as result_store
from skillassay.definitions import load_suite, select
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import SkillassayError
from skillassay.graders import judge_config
from skillassay.kinds import JobAsk, kind_of, registered
from skillassay.orchestrator import canary as canaries
from skillassay.orchestrator.canary import CanaryPlan
from skillassay.orchestrator.config import JobOptions
from skillassay.orchestrator.environment import skill_hash
from skillassay.orchestrator.executors import Executor, JobWork, create_executor
from skillassay.orchestrator.live import LiveRecorder
from skillassay.orchestrator.model_access import Budget, BudgetSpent, model_preflight, start_proxy
from skillassay.orchestrator.run_services import EmulatorRecipe, JobServices
from skillassay.orchestrator.trial import RunNotWritten, RunSpec
from skillassay.store.files import job_lock, run_redactor, scrub_record
from skillassay.store.records import CanaryCheck, JobRecord, RunRecord, Variant
from skillassay.usage import load_prices
from skillassay.workspace.bounded_copy import DEFAULT_MAX_CHANGE

if TYPE_CHECKING:
    from skillassay.secrets import Redactor
    from skillassay.services.model_proxy.proxy import ModelProxy


class JobResult(BaseModel):
    job: JobRecord
    records: list[RunRecord]
    evals: list[str]
    # the job's own (for --resume: its suite's)
    definitions: list[EvalDefinition] = Field(default_factory=list)


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
    return (
        opts.seam == "emulator" and opts.layers in ("sandbox", "both") and any(e.has_sandbox for e in evals)
    )


# (event, finished run, error, job id): "job" once the job exists, then "done" / "error" per run
ProgressFn = Callable[..., None]
Planned = tuple[str, int, Variant]  # (eval id, run index, variant)


class JobPlan(BaseModel):
    """A job ready to run: its options settled, its record (new or resumed) and the runs still to do."""

    opts: JobOptions
    job: JobRecord
    todo: list[Planned]
    evals: list[EvalDefinition]
    skill_hash: str | None
    model_api: str | None  # the API the agent's model speaks (None: it talks to none)

    @functools.cached_property
    def by_id(self) -> dict[str, EvalDefinition]:
        return {e.id: e for e in self.evals}


def run_job(
    opts: JobOptions,
    *,
    resume: str | None = None,
    on_event: ProgressFn | None = None,
    executor: Executor | None = None,
    judge_overrides: judge_config.JudgeOverrides | None = None,
) -> JobResult:
    """Run (or with ``resume``, finish) a job. ``judge_overrides``: for ``--resume``, the judge options given
    (model, provider, base_url, api_key_env), laid over the environment's and the job's own judge."""
    _refuse_options(opts)
    opts = _absolute(opts)
    opts.results.mkdir(parents=True, exist_ok=True)
    db = result_store.open(opts.results)
    held = ExitStack()  # the job's lock, from the moment its id is known to the end
    try:
        plan = _plan_job(opts, resume, judge_overrides, db, held)
        return _execute(plan, db, held, executor, on_event, resumed=resume is not None)
    finally:
        held.close()
        db.close()


def _refuse_options(opts: JobOptions) -> None:
    """Options refused before anything is read or recorded."""
    if opts.runs is not None and opts.runs < 1:
        raise SkillassayError("--runs must be at least 1")
    if opts.skill is not None and not opts.skill.exists():
        raise SkillassayError(f"--skill {opts.skill}: no such file or folder")
    if opts.pricing is not None:  # a bad table is refused now, not when the first run's proxy starts
        load_prices(opts.pricing)
    if opts.baseline and opts.skill is None and not any(k.brings_skill(opts.suite) for k in registered()):
        raise SkillassayError("--baseline compares runs with and without the skill: give --skill too")
    if opts.seam == "live" and opts.layers != "rubric":
        import os

        if not os.environ.get("SEAM_API_KEY"):
            raise SkillassayError("--seam live needs SEAM_API_KEY set to a Seam sandbox key")


def _absolute(opts: JobOptions) -> JobOptions:
    """Absolute paths from here on: graders run tools in other folders, and job.json must mean the same from
    anywhere."""
    return opts.model_copy(
        update={
            "results": opts.results.resolve(),
            "suite": opts.suite.resolve(),
            "skill": opts.skill.resolve() if opts.skill else None,
        }
    )


def _plan_job(
    opts: JobOptions,
    resume: str | None,
    judge_overrides: judge_config.JudgeOverrides | None,
    db: result_store.Store,
    held: ExitStack,
) -> JobPlan:
    """The job's options settled, its evals loaded and checked, and its record: the resumed one (locked), or a
    new one with every run planned (locked only once it is recorded)."""
    job: JobRecord | None = None
    todo: list[Planned] = []
    if resume:
        opts, job = _resumed(opts, resume, judge_overrides, db, held)
        todo = db.missing_runs(resume)
        job.status = "running"
    evals = _load_evals(opts)
    opts = _kind_settings(opts, evals)
    judge_config.require(evals, opts.judge)  # refused now, not as a harness error in every run
    opts = opts.model_copy(update={"runs": opts.runs or 1})
    from skillassay.agents import agent_class

    model_api = agent_class(opts.agent).model_api
    problem = model_preflight(model_api, opts.agent, opts.agent_env, opts.model_upstream)
    if problem:
        raise SkillassayError(problem)
    shash = skill_hash(opts.skill)
    if job is None:
        job = _new_job(opts, evals, shash)
        todo = list(job.planned)
    elif job.skill_hash and shash and job.skill_hash != shash:
        raise SkillassayError(
            f"--resume {job.job_id}: the skill changed since the job started "
            f"({job.skill_hash} -> {shash}); start a new job instead"
        )
    return JobPlan(opts=opts, job=job, todo=todo, evals=evals, skill_hash=shash, model_api=model_api)


def _resumed(
    opts: JobOptions,
    resume: str,
    judge_overrides: judge_config.JudgeOverrides | None,
    db: result_store.Store,
    held: ExitStack,
) -> tuple[JobOptions, JobRecord]:
    """The job to resume, locked, and its own options with those given again laid over them."""
    results_root = opts.results
    if db.job(resume) is None:
        raise SkillassayError(f"--resume {resume}: no such job under {results_root}")
    # before reading what is missing: a second `--resume` of the job is refused here, not run alongside
    held.enter_context(job_lock(results_root, resume))
    job = db.job(resume)
    assert job is not None
    # a new --max-cost given with --resume replaces the job's (to let a stopped job go on); the job resumes
    # where it ran (its executor) unless told otherwise: a Ray job may finish locally, and the other way round
    chosen = {k: getattr(opts, k) for k in ("executor", "ray_address") if k in opts.model_fields_set}
    opts = JobOptions.model_validate(
        {
            **job.options,
            "agent_env": opts.agent_env,
            "results": results_root,
            "jobs": opts.jobs,
            **chosen,
            **({"max_cost": opts.max_cost} if opts.max_cost is not None else {}),
            "judge": opts.judge
            or judge_config.resolve(**(judge_overrides or {}), stored=job.options.get("judge")),
        }
    )
    return opts.model_copy(update={"suite": opts.suite.resolve()}), job


def _load_evals(opts: JobOptions) -> list[EvalDefinition]:
    """The suite's evals the job's filters select (at least one)."""
    evals = select(load_suite(opts.suite, opts.fixtures or None), opts.fixtures or None, opts.api_path)
    if not evals:
        raise SkillassayError(
            f"no eval in {opts.suite} matches the filters (fixtures={opts.fixtures}, "
            f"api-path={opts.api_path})"
        )
    return evals


def _kind_settings(opts: JobOptions, evals: list[EvalDefinition]) -> JobOptions:
    """The job's skill and runs as the kinds of its evals settle them (``EvalKind.job_settings``: a trigger
    suite brings its skill and its runs); a kind's refusal is the job's error."""
    asked = JobAsk(
        suite=opts.suite,
        skill=opts.skill,
        baseline=opts.baseline,
        runs=opts.runs,
        skill_mode=opts.skill_mode,
        agent=opts.agent,
    )
    for kind in dict.fromkeys(kind_of(e) for e in evals):
        settled = kind.job_settings(evals, asked)
        if isinstance(settled, str):
            raise SkillassayError(settled)
        asked = asked.model_copy(update={"skill": settled.skill, "runs": settled.runs})
    return opts.model_copy(update={"skill": asked.skill, "runs": asked.runs})


def _new_job(opts: JobOptions, evals: list[EvalDefinition], shash: str | None) -> JobRecord:
    return JobRecord(
        job_id=new_job_id(),
        created_at=datetime.now(UTC),
        suite=str(opts.suite),
        agent=opts.agent,
        skill_path=str(opts.skill) if opts.skill else None,
        skill_hash=shash,
        options=opts.stored(),
        planned=plan_runs(evals, opts.runs or 1, opts.baseline),
    )


def _execute(
    plan: JobPlan,
    db: result_store.Store,
    held: ExitStack,
    executor: Executor | None,
    on_event: ProgressFn | None,
    *,
    resumed: bool,
) -> JobResult:
    """The executor connects and checks it can run these before anything is recorded: a cluster that cannot
    be reached, or a run no node can hold, is a clear error and leaves no job behind."""
    own_executor = executor is None
    executor = executor or create_executor(plan.opts.executor, plan.opts)
    try:
        by_id = plan.by_id
        executor.prepare(
            [by_id[e] for e in dict.fromkeys(eid for eid, _, _ in plan.todo) if e in by_id], plan.opts.agent
        )
        # a new job's folder appears only once it is recorded (nobody else knows its id before)
        if not resumed:
            held.enter_context(job_lock(plan.opts.results, plan.job.job_id))
        if on_event:  # each run's phase as it starts (runs in this process; a Ray worker's are not heard)
            held.enter_context(
                phases.listening(lambda key, name: on_event("phase", None, None, run=key, phase=name))
            )
        return _run(plan, db, executor, on_event)
    finally:
        if own_executor:
            executor.close()


CANARY_OFF = (
    "--canary-runs 0: no golden canary ran, so a failure this machine causes (an install that cannot "
    "reach its registry, an app that cannot start here) is scored as the agent's"
)


def _canary_plan(opts: JobOptions, evals: list[EvalDefinition]) -> tuple[CanaryPlan | None, str | None]:
    """The job's canary (none for trigger suites: they have no golden), and the warning kept when it is
    turned off.
    """
    if not evals or all(kind_of(e).canary_skip(e) is not None for e in evals):
        return None, None
    if opts.canary_runs == 0:
        return None, CANARY_OFF
    return CanaryPlan(
        runs=opts.canary_runs,
        layers=opts.layers,
        seam=opts.seam,
        backend=opts.backend,
        isolation=opts.isolation,
    ), None


def _job_canaries(job: JobRecord, records: list[RunRecord]) -> dict[str, CanaryCheck]:
    """Each eval's canary over the job's runs (a resumed job keeps the earlier sessions' own)."""
    out = dict(job.canaries)
    by_eval: dict[str, list[CanaryCheck]] = {}
    for r in records:
        if r.canary is not None:
            by_eval.setdefault(r.eval_id, []).append(r.canary)
    for eid, checks in by_eval.items():
        merged = canaries.merge(checks)
        if merged is not None:
            out[eid] = merged
    return out


class JobEnd(BaseModel):
    """How the job's runs ended: its status, and how many runs came back without a record."""

    status: (
        str  # finished, incomplete (a run came back without a record), stopped (--max-cost) or interrupted
    )
    unrecorded: int = 0  # runs that came back without a record on disk: the job cannot say "finished"


def _run(plan: JobPlan, db: result_store.Store, executor: Executor, on_event: ProgressFn | None) -> JobResult:
    """The job once it may be recorded: its runs handed to the executor, each recorded as it finishes."""
    opts = plan.opts
    # job.json and the index never hold a secret of the environment or of --agent-env (in --command, say)
    hide = run_redactor(opts.agent_env)
    job = _record_start(plan, db, hide, on_event)
    specs = _specs(plan, job.job_id)
    services, proxy = _services(plan, specs, executor)
    services.canary, warning = _canary_plan(opts, [plan.by_id[s.eval_id] for s in specs])
    if warning and warning not in job.warnings:
        job.warnings.append(warning)
    budget = Budget(opts.max_cost, job.model_usage, proxy)
    services.max_cost = opts.max_cost
    services.spent_before = job.model_usage.cost_usd if job.model_usage is not None else 0.0
    work = JobWork(
        job_id=job.job_id,
        results_root=opts.results,
        services=services,
        skill=opts.skill,
        definitions={e: plan.by_id[e] for e in {s.eval_id for s in specs}},
    )
    end = JobEnd(status="interrupted")
    live = LiveRecorder(
        opts.results,
        job.job_id,
        planned=len(specs),
        executor=opts.executor,
        max_cost=opts.max_cost,
        spent=budget.spent,
        redactor=hide,
    ).start()
    try:
        with phases.listening(live.phase):
            end = _collect(executor, work, specs, db, budget, on_event, live)
    except KeyboardInterrupt:
        # safety net: agents and apps run in their own process groups, which a Ctrl-C never reaches
        reaper.kill_all()
        raise
    finally:
        live.close(end.status)
        if proxy is not None:
            proxy.stop()
        job = _record_end(job, end, budget, db, opts, hide)
    records = db.runs(job_id=job.job_id)
    return JobResult(job=job, records=records, evals=[e.id for e in plan.evals], definitions=plan.evals)


def _record_start(
    plan: JobPlan, db: result_store.Store, hide: Redactor, on_event: ProgressFn | None
) -> JobRecord:
    """The job in the index and in job.json (scrubbed of secrets) before its first run starts."""
    job = scrub_record(plan.job, hide)[0]
    db.record_job(job)
    result_store.write_job_file(plan.opts.results, job)
    if on_event:
        on_event("job", None, None, job.job_id)
    return job


def _specs(plan: JobPlan, job_id: str) -> list[RunSpec]:
    """A spec for each run still to do of an eval the suite still has."""
    opts, by_id = plan.opts, plan.by_id
    config = opts.run_config()
    return [
        RunSpec(
            job_id=job_id,
            eval_id=eid,
            run_index=idx,
            variant=variant,
            skill_dir=opts.skill,
            skill_hash=plan.skill_hash,
            config=config,
            max_change_size=opts.max_change_size or by_id[eid].max_change_size or DEFAULT_MAX_CHANGE,
        )
        for eid, idx, variant in plan.todo
        if eid in by_id
    ]


def _services(
    plan: JobPlan, specs: list[RunSpec], executor: Executor
) -> tuple[JobServices, ModelProxy | None]:
    """The job's run services: the emulator's recipe when its runs need one, and the model proxy (started)."""
    services = JobServices()
    if specs and _needs_emulator([plan.by_id[s.eval_id] for s in specs], plan.opts):
        services.emulator = EmulatorRecipe(
            async_delay=plan.opts.emulator_delay, automation_delay=plan.opts.emulator_automation_delay
        )
    proxy = _model_proxy(plan.opts, executor) if specs and plan.model_api is not None else None
    if proxy is not None:
        services.model_proxy = proxy.client()
    return services, proxy


def _model_proxy(opts: JobOptions, executor: Executor) -> ModelProxy:
    """The agent's only model endpoint: one proxy for the job, a token per run attempt (agents that talk to no
    model get none). Runs reach it through its admin client, wherever they execute."""
    host, public = opts.proxy_host, opts.proxy_public_host
    reachable = executor.service_host()
    if reachable and "proxy_host" not in opts.model_fields_set:
        host, public = reachable, public or reachable
    return start_proxy(
        opts.model_upstream, opts.agent_env, opts.pricing, host=host, port=opts.proxy_port, public_host=public
    )


def _collect(
    executor: Executor,
    work: JobWork,
    specs: list[RunSpec],
    db: result_store.Store,
    budget: Budget,
    on_event: ProgressFn | None,
    live: LiveRecorder,
) -> JobEnd:
    """Every run handed to the executor, each recorded as it finishes."""
    unrecorded = 0
    with closing(executor.run(work, specs)) as finished:  # closed on Ctrl-C: it ends its runs
        for spec, result in finished:
            if not _take(result, db, budget, on_event):
                unrecorded += 1
            live.came_back((spec.eval_id, spec.variant, spec.run_index), result)
    status = "incomplete" if unrecorded else ("stopped" if budget.stopped else "finished")
    return JobEnd(status=status, unrecorded=unrecorded)


def _take(
    result: RunRecord | BaseException, db: result_store.Store, budget: Budget, on_event: ProgressFn | None
) -> bool:
    """One finished run into the index; False when it came back without a record (the job is incomplete)."""
    if isinstance(result, KeyboardInterrupt):
        raise result
    if isinstance(result, BudgetSpent):
        # --max-cost: no new run once the job has spent it (runs under way finish); --resume starts it
        budget.note_stopped()
        return True
    if isinstance(result, BaseException):
        if isinstance(result, RunNotWritten):
            # at least the index knows it as a harness error (--resume reruns it); if not, the job's status
            # says it is incomplete
            with contextlib.suppress(Exception):
                db.record_run(result.record)
        if on_event:
            on_event("error", None, result)
        return False
    try:
        db.record_run(result)
    except Exception as exc:  # noqa: BLE001 - on disk already; `skillassay runs --reindex` finds it
        if on_event:
            on_event("error", None, exc)
        return False
    if on_event:
        on_event("done", result, None)
    return True


def _record_end(
    job: JobRecord, end: JobEnd, budget: Budget, db: result_store.Store, opts: JobOptions, hide: Redactor
) -> JobRecord:
    """The job's ending recorded: its model usage, its canaries, why --max-cost stopped it, and its status."""
    job = job.model_copy(
        update={
            "model_usage": budget.usage(),
            "canaries": _job_canaries(job, db.runs(job_id=job.job_id)),
            "stop_reason": (
                f"--max-cost {opts.max_cost:g} USD spent ({budget.spent():.4f} USD): "
                f"{budget.stopped} run(s) not started; --resume starts them"
            )
            if budget.stopped
            else None,
        }
    )
    db.record_job(scrub_record(job, hide)[0])
    job = db.finish_job(job.job_id, end.status)
    result_store.write_job_file(opts.results, job)
    return job
