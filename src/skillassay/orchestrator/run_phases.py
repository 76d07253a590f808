"""The phases of one run, in the order ``trial.execute`` calls them: prepare (budget, run folder, sealing
policy; then the golden's canary and the agent), agent (its attempts, orchestrator/attempts.py), change
(one bounded copy of the workspace, its ChangeSet, diff.patch and changes.json), grade, record (run.json's
record).

Each phase is a function of its inputs returning a typed result; ``RunSoFar`` keeps what the run got to, so a
phase that fails leaves the earlier ones' results in the record. What differs by eval kind is in the four
small functions under "Eval kinds" (``app_dir``, ``agent_budget``, ``grades_change``, ``grade_kind``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from skillassay import phases
from skillassay.agents import arm as arms
from skillassay.agents import get_agent
from skillassay.agents.arm import ArmRecord
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.agents.reference import NAME as REFERENCE
from skillassay.definitions.models import EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation import Policy
from skillassay.isolation.record import REACHED_FOR_SUITE, Sealing
from skillassay.isolation.run_policy import run_policy
from skillassay.kinds import kind_of
from skillassay.orchestrator.agent_seal import run_agent
from skillassay.orchestrator.attempts import AttemptsOutcome, RetryPolicy, move_attempt_files, run_attempts
from skillassay.orchestrator.canary import reference_check
from skillassay.orchestrator.config import RunSpec
from skillassay.orchestrator.environment import machine_info
from skillassay.orchestrator.grading import GradeOutcome, grade
from skillassay.orchestrator.model_access import BudgetSpent
from skillassay.orchestrator.run_services import RunServices
from skillassay.outcomes import SCORED, AgentExit, HarnessFailure
from skillassay.scoring import decide
from skillassay.services.model_proxy import GrantReport, ModelGrants
from skillassay.store.files import claim_run_dir, write_json_atomic
from skillassay.store.records import CanaryCheck, RunRecord, TranscriptSummary, TriggerOutcome
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillUse, TriggerBudget, observed_use
from skillassay.workspace import ChangeSet, SizeReport, Workspace, create_workspace, snapshot
from skillassay.workspace import keep as keep_workspace


class Stopwatch:
    """The run's timings (run.json ``timings``): seconds per phase, summed over attempts."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def add(self, name: str, since: float) -> None:
        self.timings[name] = round(self.timings.get(name, 0.0) + time.monotonic() - since, 3)


# --- prepare ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunContext:
    """What every phase of one run reads: the run, its eval, where it is recorded and what it may use."""

    spec: RunSpec
    definition: EvalDefinition
    results_root: Path
    services: RunServices | None
    grants: ModelGrants | None  # the job's model proxy: a token per attempt of an agent that talks to a model
    judge_config: JudgeConfig | None
    skill_dir: Path | None  # where this machine holds the skill
    definition_source: Path  # the definition file as the job names it
    started: datetime
    run_dir: Path
    scratch: Path
    run_id: str
    policy: Policy
    clock: Stopwatch = field(default_factory=Stopwatch)
    # the model tokens granted: scrubbed from all the run keeps
    tokens: list[str] = field(default_factory=list)


def prepare(
    spec: RunSpec,
    definition: EvalDefinition,
    results_root: Path,
    services: RunServices | None,
    judge_config: JudgeConfig | None,
    skill_dir: Path | None,
    definition_source: Path | None,
) -> RunContext:
    """The budget checked (BudgetSpent: nothing is written), the run's folder claimed, its scratch made, its
    sealing policy set (a refused one is the harness's failure, recorded by ``trial.run_trial``)."""
    if services is not None and not services.budget_left():
        raise BudgetSpent(f"--max-cost {services.recipe.max_cost:g} USD spent")
    grants = services.model_grants() if services is not None else None
    started = datetime.now(UTC)
    run_dir = claim_run_dir(results_root, spec.rel_dir)
    scratch = Path(tempfile.mkdtemp(prefix=f"skillassay-{spec.eval_id}-"))
    cfg = spec.config
    policy = run_policy(cfg.isolation, definition, results_root, cfg.allow_hosts, cfg.mounts)
    return RunContext(
        spec=spec,
        definition=definition,
        results_root=results_root,
        services=services,
        grants=grants,
        judge_config=judge_config,
        skill_dir=skill_dir if skill_dir is not None else spec.skill_dir,
        definition_source=definition_source or definition.source,
        started=started,
        run_dir=run_dir,
        scratch=scratch,
        run_id=f"{spec.job_id}-{spec.eval_id}-{spec.variant[0]}{spec.run_index}",
        policy=policy,
    )


def golden_canary(ctx: RunContext) -> CanaryCheck | None:
    """This eval's canary where the run executes: no run of an eval is scored before its golden passed here
    (orchestrator/canary.py), else the machine's fault would be the agent's. None for an eval without a
    golden, and for the reference agent, whose runs are the golden's and are checked after grading."""
    if ctx.services is None or ctx.spec.config.agent == REFERENCE or not grades_change(ctx.definition):
        return None
    return ctx.services.canary(ctx.definition, ctx.policy)


def canary_failure(canary: CanaryCheck | None) -> HarnessFailure | None:
    if canary is None or canary.passed:
        return None
    return HarnessFailure(stage="canary", message=canary.reason or "the golden fails here")


@dataclass(frozen=True)
class FoundAgent:
    agent: Agent
    version: str | None


def find_agent(ctx: RunContext) -> FoundAgent:
    agent = get_agent(ctx.spec.config.agent)
    return FoundAgent(agent=agent, version=agent.version())


# --- agent --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentRun:
    """The agent's attempts (the last one's result), the last attempt's workspace and what its sandbox
    recorded.
    """

    tried: AttemptsOutcome
    workspace: Workspace
    sealing: Sealing
    arm: ArmRecord | None


def run_agent_phase(ctx: RunContext, agent: Agent) -> AgentRun:
    """The agent, tried again from scratch after a provider error while the budget lasts."""
    attempts = _Attempts(ctx, agent)
    policy = RetryPolicy(retries=ctx.spec.config.retries, base_delay=ctx.spec.config.retry_delay)
    may_retry = ctx.services.budget_left if ctx.services is not None else (lambda: True)
    tried = run_attempts(attempts.attempt, policy, keep=attempts.keep, may_retry=may_retry)
    n = len(tried.attempts)
    sealing, arm = attempts.sealings.get(n, (Sealing(ctx.policy), None))
    return AgentRun(tried=tried, workspace=attempts.workspaces[n], sealing=sealing, arm=arm)


class _Attempts:
    """Every attempt from scratch: a fresh workspace, a fresh private home, a fresh model token."""

    def __init__(self, ctx: RunContext, agent: Agent):
        self.ctx, self.agent = ctx, agent
        self.workspaces: dict[int, Workspace] = {}
        # attempt -> its sandbox's record, its arm
        self.sealings: dict[int, tuple[Sealing, ArmRecord | None]] = {}

    def attempt(self, n: int) -> tuple[AgentResult, GrantReport | None]:
        ctx = self.ctx
        shutil.rmtree(ctx.scratch / f"attempt-{n - 1}", ignore_errors=True)
        base = ctx.scratch / f"attempt-{n}"
        t = time.monotonic()
        phases.phase("workspace")
        ws = self.workspaces[n] = create_workspace(app_dir(ctx.definition, base), base / "workspace")
        ctx.clock.add("workspace", t)
        home = base / "home"
        home.mkdir(parents=True)
        endpoint = None
        if ctx.grants is not None and self.agent.model_api is not None:
            endpoint = ctx.grants.grant(ctx.run_id)
            ctx.tokens.append(endpoint.token)
        t = time.monotonic()
        try:
            phases.phase("agent")
            seen = Sealing(ctx.policy)
            result, checked = run_agent(
                self.agent,
                self._context(ws, home, endpoint),
                ctx.policy,
                ctx.scratch / f"seal-{n}",
                seen,
                **self._arm(),
            )
            self.sealings[n] = (seen, checked)
        finally:
            report = (
                ctx.grants.release(endpoint.token)
                if ctx.grants is not None and endpoint is not None
                else None
            )
            ctx.clock.add("agent", t)
        self._as_the_model_was_told(n, result, report)
        return result, report

    def _context(self, ws: Workspace, home: Path, endpoint: object) -> AgentContext:
        ctx, cfg = self.ctx, self.ctx.spec.config
        return AgentContext(
            workspace=ws.path,
            prompt=ctx.definition.prompt,
            output_dir=ctx.run_dir,
            home=home,
            timeout=cfg.timeout,
            skill_dir=ctx.skill_dir if ctx.spec.variant == "skill" else None,
            skill_mode=cfg.skill_mode,
            model=cfg.model,
            env=dict(cfg.agent_env),
            model_endpoint=endpoint,
            fixture_dir=ctx.definition.fixture_dir,
            golden_dir=ctx.definition.golden_dir,
            command=cfg.command,
            budget=agent_budget(ctx.definition),
        )

    def _arm(self) -> dict:
        spec = self.ctx.spec
        return {
            "skill_name": skill_name(spec, self.ctx.skill_dir, any_variant=True),
            "skill_dir": self.ctx.skill_dir,
            "variant": spec.variant,
            "mode": spec.config.skill_mode,
        }

    def _as_the_model_was_told(self, n: int, result: AgentResult, report: GrantReport | None) -> None:
        """The skills the CLI listed to the model, as the proxy received them before any of the agent's
        commands ran; not the CLI's session file, which those commands can rewrite (buying a rerun)."""
        told = (
            self.agent.skills_told(report.first_request)
            if report is not None and report.first_request
            else None
        )
        seen, checked = self.sealings[n]
        if checked is None or told is None:
            return
        result.transcript.skills_available, result.transcript.skills_source = told, "model request"
        checked = arms.check(
            arms.ArmSnapshot(installed=checked.installed, user_config=checked.user_config),
            **self._arm(),
            reported=told,
            reported_source="model request",
        )
        self.sealings[n] = (seen, checked)

    def keep(self, n: int) -> str:
        run_dir = self.ctx.run_dir
        return move_attempt_files(
            run_dir, n, [p.name for p in run_dir.iterdir() if not p.name.startswith("attempt-")]
        ).name


def keep_agent_files(ctx: RunContext, run: AgentRun) -> None:
    """The model calls (model_calls.jsonl) and the last attempt's transcript (transcript.json)."""
    if run.tried.calls:
        with (ctx.run_dir / "model_calls.jsonl").open("w", encoding="utf-8") as fh:
            for call in run.tried.calls:
                fh.write(call.model_dump_json() + "\n")
    write_json_atomic(ctx.run_dir / "transcript.json", run.tried.result.transcript.model_dump(mode="json"))


def skill_use(ctx: RunContext, result: AgentResult) -> SkillUse | None:
    """The skill under test as the transcript shows it (a skill run's)."""
    if ctx.spec.variant != "skill" or skill_name(ctx.spec, ctx.skill_dir) is None:
        return None
    return observed_use(result.transcript, result.skill_target, ctx.skill_dir)


@dataclass(frozen=True)
class AgentEnd:
    """How the agent's phase ended, as the outcomes say (``trial.classify``), and how its process ended."""

    outcome: str
    error: str | None
    exit: AgentExit


def agent_end(tried: AttemptsOutcome) -> AgentEnd:
    """The agent's status, checked against the model proxy's record (attempts.judge), onto the outcomes."""
    outcome, error, end = classify(tried.result, tried.status, tried.error)
    if outcome == "provider_error":
        error = f"provider error after {len(tried.attempts)} attempt(s): {tried.error or tried.error_kind}"
    return AgentEnd(outcome=outcome, error=error, exit=end)


def classify(
    result: AgentResult, status: str | None = None, error: str | None = None
) -> tuple[str, str | None, AgentExit]:
    """(outcome, error, how the process ended) from the agent's account (``status``/``error``: as judged
    against the model proxy's record, orchestrator/attempts.py). The provider's and the harness's failures
    are not scored; everything the agent did is: a crash, a non-zero exit or a signal is an agent_error."""
    status = status or result.status
    error = error if status != result.status or error else result.error
    code, sig = result.exit_code, result.signal
    if code is not None and code < 0:  # Popen's way of saying "killed by signal -code"
        sig, code = sig or -code, None
    end = AgentExit(
        exit_code=code, signal=sig, timed_out=status == "timed_out", signal_name=_signal_name(sig)
    )
    if status in ("provider_error", "harness_error"):
        return status, error or f"the agent reported a {status.replace('_', ' ')}", end
    if status == "timed_out":
        return "timed_out", error, end
    if status == "agent_error" or (code not in (None, 0)) or sig is not None:
        if sig is not None:
            why = f"killed by {end.signal_name or f'signal {sig}'}" + (f" ({error})" if error else "")
        else:
            why = error or f"exited with code {code}"
        return "agent_error", why, end
    return "completed", None, end


def _signal_name(sig: int | None) -> str | None:
    if sig is None:
        return None
    import signal

    try:
        return signal.Signals(sig).name
    except ValueError:
        return None


def agent_failures(end: AgentEnd) -> list[HarnessFailure]:
    """An unscored end's failure: the harness's when the agent could not run (a provider's error is none)."""
    if end.outcome != "harness_error":
        return []
    return [HarnessFailure(stage="agent", message=end.error or "the agent could not run")]


def arm_failure(arm: ArmRecord | None) -> HarnessFailure | None:
    """The arm was not what the comparison needs (a baseline with a skill, a skill run without it): never
    scored, rerun by --resume (docs/sealing.md)."""
    if arm is None or arm.ok:
        return None
    return HarnessFailure(stage="arm", message=f"arm integrity: {arm.problem}")


# --- change -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """One bounded copy of the workspace: what everything from here on reads, never the live one."""

    workspace: Workspace
    size: SizeReport
    notes: list[str]


def take_snapshot(ctx: RunContext, live: Workspace) -> Snapshot:
    """Whatever the agent did to its workspace (even deleting it) is its change, and is graded
    (workspace/bounded_copy.py)."""
    t = time.monotonic()
    size = snapshot(live.path, live.source, ctx.scratch / "final", ctx.spec.max_change_size)
    ws = Workspace(path=ctx.scratch / "final", source=live.source, pristine_commit=live.pristine_commit)
    ctx.clock.timings["snapshot"] = round(time.monotonic() - t, 3)
    notes = []
    if size.special or size.unreadable:
        notes.append(
            f"not kept: {len(size.special) + size.special_more} fifo/socket/device file(s), "
            f"{len(size.unreadable)} unreadable file(s) (run.json size)"
        )
    if size.entries_left_out:
        # the agent's doing: graded on what was kept, like a change over the size limit
        notes.append(
            f"{size.entries_left_out} new or changed file(s)/folder(s) beyond the first "
            f"{size.max_entries} left out, graded on the rest (run.json size.entries_left_out)"
        )
    return Snapshot(workspace=ws, size=size, notes=notes)


@dataclass(frozen=True)
class Change:
    changes: ChangeSet
    files_changed: int
    empty_diff: bool  # nothing changed, in an eval that grades the change (the plan: it fails)


def read_change(ctx: RunContext, snap: Snapshot) -> Change:
    change = snap.workspace.compute_change()
    change.over_limit = [o.model_dump() for o in snap.size.over_limit]
    change.entries_left_out = snap.size.entries_left_out
    return Change(
        changes=change,
        files_changed=len(change.files),
        empty_diff=change.empty and grades_change(ctx.definition),
    )


def write_change(ctx: RunContext, change: Change) -> None:
    (ctx.run_dir / "diff.patch").write_text(change.changes.patch())
    write_json_atomic(ctx.run_dir / "changes.json", change.changes.to_json())


# --- grade --------------------------------------------------------------------------------------------------


def grade_change(ctx: RunContext, snap: Snapshot, change: Change, run: AgentRun) -> GradeOutcome:
    """The graders, whatever the agent's end: a timed-out or crashed agent may have left a working change
    behind.
    """
    cfg, services = ctx.spec.config, ctx.services
    emulator = None
    wanted = kind_of(ctx.definition).services(ctx.definition, cfg.layers)
    if services is not None and cfg.seam == "emulator" and "seam" in wanted:
        emulator = services.emulator()
    phases.phase("grading")
    return grade(
        ctx.definition,
        snap.workspace.path,
        ctx.run_dir,
        ctx.run_id,
        layers=cfg.layers,
        seam=cfg.seam,
        backend=cfg.backend,
        emulator=emulator,
        transcript=run.tried.result.transcript,
        judge_config=ctx.judge_config or cfg.judge,
        change=change.changes,
        policy=ctx.policy,
        sealing=run.sealing,
    )


def reference_canary(ctx: RunContext, graded: GradeOutcome) -> CanaryCheck | None:
    """The reference agent's run is the golden's own canary."""
    plan = ctx.services.recipe.canary if ctx.services is not None else None
    if plan is None or ctx.spec.config.agent != REFERENCE:
        return None
    return reference_check(ctx.definition, plan, graded)


def add_sealing(graded: GradeOutcome, sealing: Sealing) -> None:
    """Reaching for the suite or the results is forbidden in every eval (docs/sealing.md); process.json keeps
    what the sealing saw."""
    if sealing.reached_suite() and graded.verdict is not None:
        graded.verdict = decide(
            graded.criteria, [*graded.verdict.forbidden_observed, REACHED_FOR_SUITE], graded.verdict.threshold
        )
    if graded.process is not None:
        graded.process["sealing"] = sealing.process_json()


def write_grades(ctx: RunContext, graded: GradeOutcome) -> None:
    for name, data in (
        ("rubric.json", graded.rubric),
        ("sandbox.json", graded.sandbox),
        ("process.json", graded.process),
    ):
        if data is not None:
            write_json_atomic(ctx.run_dir / name, data)


def keep_final_workspace(ctx: RunContext, snap: Snapshot) -> None:
    if ctx.spec.keep_workspace:
        keep_workspace(snap.workspace.path, ctx.run_dir / "workspace", snap.workspace.source)


# --- eval kinds: what differs by the kind of eval, one place each -------------------------------------------


def app_dir(definition: EvalDefinition, scratch: Path) -> Path:
    """The folder an attempt's workspace is copied from."""
    return kind_of(definition).app_dir(definition, scratch)


def agent_budget(definition: EvalDefinition) -> TriggerBudget | None:
    """The tool calls the agent is given before its run is decided (a trigger prompt's), None: unbounded."""
    return kind_of(definition).agent_budget(definition)


def grades_change(definition: EvalDefinition) -> bool:
    """Whether the run is graded on its change (a trigger run is not: its decision is read from the
    transcript).
    """
    return kind_of(definition).grades_change(definition)


def grade_kind(
    ctx: RunContext, snap: Snapshot, use: SkillUse | None, result: AgentResult
) -> tuple[TriggerOutcome | None, GradeOutcome]:
    """A run its kind does not grade on its change: the kind's decision, read from what the agent did."""
    graded = grade(
        ctx.definition,
        snap.workspace.path,
        ctx.run_dir,
        ctx.run_id,
        transcript=result.transcript,
        skill_use=use,
        stopped=result.stopped,
    )
    return graded.trigger, graded


# --- record -------------------------------------------------------------------------------------------------


@dataclass
class RunSoFar:
    """What the run got to, phase by phase: each phase's result once it returned (a phase that failed leaves
    the earlier ones'), the failures found, and the outcome so far. run.json is built from it."""

    sealing: Sealing
    outcome: str = "completed"
    error: str | None = None
    failures: list[HarnessFailure] = field(default_factory=list)
    canary: CanaryCheck | None = None
    agent: FoundAgent | None = None
    agent_run: AgentRun | None = None
    use: SkillUse | None = None
    end: AgentEnd | None = None
    snapshot: Snapshot | None = None
    change: Change | None = None
    trigger: TriggerOutcome | None = None
    graded: GradeOutcome = field(default_factory=GradeOutcome)

    def fail(self, exc: Exception) -> None:
        """The harness's failure, never the agent's: the run is not scored, its traceback kept."""
        self.failures.append(
            HarnessFailure(
                stage="harness",
                message=f"{type(exc).__name__}: {exc}",
                traceback=traceback.format_exc()[-8000:],
            )
        )


def keep_sealing_evidence(ctx: RunContext, so_far: RunSoFar) -> None:
    """The sealing's evidence is kept whatever became of the grading (or when no process grader ran)."""
    if so_far.sealing.reports and not (ctx.run_dir / "process.json").exists():
        write_json_atomic(ctx.run_dir / "process.json", {"sealing": so_far.sealing.process_json()})


def blame_harness(so_far: RunSoFar) -> None:
    """The harness could not run or grade this run completely: it is not the agent's score (rerun by
    --resume).
    """
    if so_far.failures and so_far.outcome != "invalid_definition":
        so_far.outcome, so_far.error = "harness_error", "; ".join(str(f) for f in so_far.failures)[:2000]


def build_record(ctx: RunContext, so_far: RunSoFar) -> RunRecord:
    """The run's record (run.json), from whatever the run got to."""
    spec, run, graded = ctx.spec, so_far.agent_run, so_far.graded
    result = run.tried.result if run is not None else None
    version = so_far.agent.version if so_far.agent is not None else None
    notes = so_far.snapshot.notes if so_far.snapshot is not None else []
    record = RunRecord(
        job_id=spec.job_id,
        eval_id=spec.eval_id,
        run_index=spec.run_index,
        variant=spec.variant,
        run_dir=spec.rel_dir,
        agent=spec.config.agent,
        agent_version=version or (result.cli_version if result else None),
        skill_path=str(spec.skill_dir) if spec.skill_dir and spec.variant == "skill" else None,
        skill_hash=spec.skill_hash if spec.variant == "skill" else None,
        outcome=so_far.outcome,
        error=so_far.error,
        harness_failures=[f.model_copy(update={"traceback": None}) for f in so_far.failures],
        agent_exit=so_far.end.exit if so_far.end is not None else None,
        empty_diff=so_far.change is not None and so_far.change.empty_diff and so_far.outcome in SCORED,
        started_at=ctx.started,
        finished_at=datetime.now(UTC),
        timings=ctx.clock.timings,
        grades=graded.grades,
        criteria=graded.criteria,
        verdict=graded.verdict,
        transcript=_summary(
            result.transcript if result else Transcript(agent=spec.config.agent),
            skill_name(spec, ctx.skill_dir),
            so_far.use,
        ),
        model_usage=run.tried.usage if run is not None else None,
        attempts=run.tried.attempts if run is not None else [],
        skill_use=so_far.use,
        trigger=so_far.trigger,
        files_changed=so_far.change.files_changed if so_far.change is not None else 0,
        config=spec.recorded(ctx.definition_source) | ({"notes": notes} if notes else {}),
        machine=machine_info(),
        sealing=so_far.sealing.run_json(),
        arm=json.loads(run.arm.model_dump_json()) if run is not None and run.arm is not None else None,
        canary=so_far.canary,
    )
    if record.empty_diff and record.verdict is not None:
        record.verdict.passed = False  # the plan: an empty diff fails, whatever the graders gave it
    if so_far.snapshot is not None:
        record.size = so_far.snapshot.size
    return record


def tracebacks(failures: list[HarnessFailure]) -> str:
    """The failures' tracebacks, as harness_error.txt keeps them."""
    return "\n\n".join(f"[{f.stage}] {f.message}\n{f.traceback}" for f in failures if f.traceback)


def _summary(t: Transcript, skill: str | None, use: SkillUse | None = None) -> TranscriptSummary:
    """``skill_loaded`` / ``skill_invoked`` name the skill under test, not the CLI's built-in skills; invoked
    is any use in the whole transcript (``skillassay.triggers``) when the agent's transcript shows tool
    calls."""
    return TranscriptSummary(
        turns=t.turns,
        tool_calls=len(t.tool_calls),
        denials=len(t.permission_denials) or sum(1 for c in t.tool_calls if c.denied),
        input_tokens=t.usage.input_tokens,
        output_tokens=t.usage.output_tokens,
        cost_usd=t.cost_usd,
        skill_loaded=skill is not None and skill in t.skills_available,
        skill_invoked=use.used if use is not None else skill is not None and skill in t.skills_invoked,
        final_message=(t.final_message or "")[:2000] or None,
    )


def skill_name(spec: RunSpec, skill_dir: Path | None, any_variant: bool = False) -> str | None:
    """The skill under test's name (in a baseline run too, with ``any_variant``)."""
    if skill_dir is None or (spec.variant != "skill" and not any_variant):
        return None
    from skillassay.skills import SkillError, load_skill

    try:
        return load_skill(skill_dir).name
    except SkillError:
        return None
