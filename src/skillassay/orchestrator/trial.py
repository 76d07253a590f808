"""One run (a trial): fresh workspace -> agent -> change -> graders -> score -> files on disk.

Everything a run produces lands in its own folder, claimed exclusively, and ``run.json`` is written last and
atomically: a folder with a ``run.json`` is a finished run, whatever happens to the orchestrator afterwards. How the
run ended is one of the outcomes of ``skillassay.outcomes``, decided here (``classify``, then the graders' failures).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from skillassay.agents import arm as arms
from skillassay.agents import get_agent
from skillassay.agents.base import AgentContext, AgentResult
from skillassay.definitions.models import EvalDefinition
from skillassay import phases
from skillassay.errors import DefinitionError
from skillassay.graders.judge_config import JudgeConfig
from skillassay.agents.reference import NAME as REFERENCE
from skillassay.orchestrator.attempts import RetryPolicy, move_attempt_files, run_attempts
from skillassay.orchestrator.canary import reference_check
from skillassay.orchestrator.environment import machine_info
from skillassay.orchestrator.grading import GradeOutcome, Layers, grade
from skillassay.orchestrator.model_access import BudgetSpent
from skillassay.orchestrator.run_services import RunServices
from skillassay.outcomes import SCORED, UNSCORED, AgentExit, HarnessFailure
from skillassay.orchestrator.sealing import REACHED_FOR_SUITE, Sealing, run_agent, run_policy
from skillassay.scoring import decide
from skillassay.secrets import Redaction, Redactor, merge
from skillassay.store.files import (
    HARNESS_ERROR_FILE,
    RunAlreadyRecorded,
    RunClaimed,
    cap_logs,
    claim_run_dir,
    run_dir_rel,
    run_redactor,
    scrub_record,
    scrub_run_dir,
    write_json_atomic,
    write_run_file,
)
from skillassay.kinds.trigger import decision as triggering
from skillassay.store.models import CanaryCheck, RunRecord, TranscriptSummary, TriggerOutcome, Variant
from skillassay.usage import ModelUsage
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillUse
from skillassay.workspace import DEFAULT_MAX_CHANGE, SizeReport, Workspace, create_workspace, snapshot
from skillassay.workspace import keep as keep_workspace


class RunSpec(BaseModel):
    """Everything one run needs; also what its run.json records as its configuration."""

    job_id: str
    eval_id: str
    run_index: int
    variant: Variant = "skill"
    agent: str
    skill_dir: Path | None = None
    skill_hash: str | None = None
    skill_mode: str = "native"
    model: str | None = None
    layers: Layers = "both"
    seam: str = "emulator"
    backend: str = "host"
    timeout: float = 600.0
    agent_env: dict[str, str] = Field(default_factory=dict)
    command: str | None = None
    keep_workspace: bool = True
    max_change_size: int = DEFAULT_MAX_CHANGE  # bytes of added or changed files kept and graded (workspace/bounded_copy.py)
    retries: int = 2  # whole agent phases tried again after a provider error (orchestrator/attempts.py)
    isolation: str = "bubblewrap"  # how the agent, the app and the graders' commands are sealed (docs/sealing.md)
    allow_hosts: list[str] = Field(default_factory=list)  # granted beyond the stack's registries (--allow-host)
    mounts: list[Path] = Field(default_factory=list)  # granted read-only to the agent (--mount)
    retry_delay: float = 10.0  # seconds before the first retry, doubled for each next one (with jitter)
    judge: JudgeConfig | None = None  # the LLM judge of llm_judge criteria (no key: the name of its variable)

    @property
    def rel_dir(self) -> str:
        return run_dir_rel(self.job_id, self.eval_id, self.run_index, self.variant)


def _summary(t: Transcript, skill_name: str | None, use: SkillUse | None = None) -> TranscriptSummary:
    """``skill_loaded`` / ``skill_invoked`` name the skill under test, not the CLI's built-in skills; invoked is
    any use in the whole transcript (``skillassay.triggers``) when the agent's transcript shows tool calls."""
    return TranscriptSummary(
        turns=t.turns,
        tool_calls=len(t.tool_calls),
        denials=len(t.permission_denials) or sum(1 for c in t.tool_calls if c.denied),
        input_tokens=t.usage.input_tokens,
        output_tokens=t.usage.output_tokens,
        cost_usd=t.cost_usd,
        skill_loaded=skill_name is not None and skill_name in t.skills_available,
        skill_invoked=use.used if use is not None else skill_name is not None and skill_name in t.skills_invoked,
        final_message=(t.final_message or "")[:2000] or None,
    )


def classify(result: AgentResult, status: str | None = None,
             error: str | None = None) -> tuple[str, str | None, AgentExit]:
    """(outcome, error, how the process ended) from the agent's account (``status``/``error``: as judged against the
    model proxy's record, orchestrator/attempts.py). The provider's and the harness's failures are not scored;
    everything the agent did is: a crash, a non-zero exit or a signal is an agent_error."""
    status = status or result.status
    error = error if status != result.status or error else result.error
    code, sig = result.exit_code, result.signal
    if code is not None and code < 0:  # Popen's way of saying "killed by signal -code"
        code, sig = None, sig or -code
    end = AgentExit(exit_code=code, signal=sig, timed_out=status == "timed_out", signal_name=_signal_name(sig))
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


def execute(spec: RunSpec, definition: EvalDefinition, results_root: Path, *, services: RunServices | None = None,
            judge_config: Any = None, skill_dir: Path | None = None, definition_source: Path | None = None,
            ) -> RunRecord:
    """Run one trial and return its record (already written to ``<run dir>/run.json``).

    ``services``: the run-level services where this run executes: the Seam emulator, and the job's model proxy
    (each attempt of an agent that talks to a model gets its own endpoint and token from it, released when the
    attempt ends) with the job's --max-cost (no run starts, and no provider error is retried, once it is spent:
    then BudgetSpent is raised and nothing is written). ``skill_dir`` and ``definition_source`` are for runs
    executing away from the job's files (Ray): where this machine holds the skill (default ``spec.skill_dir``), and
    the definition file as the job names it (default ``definition.source``); run.json records the job's names, never
    the worker's copies.

    The run's folder is claimed exclusively (``store.files.claim_run_dir``): a graded run is never overwritten. If
    the record cannot be written, the run is recorded as a harness error with the traceback in its folder; if even
    that fails, ``RunNotWritten`` carries the record to the job, which counts it."""
    if services is not None and not services.budget_left():
        raise BudgetSpent(f"--max-cost {services.recipe.max_cost:g} USD spent")
    model_grants = services.model_grants() if services is not None else None
    may_retry = services.budget_left if services is not None else (lambda: True)
    started = datetime.now(UTC)
    skill_here = skill_dir if skill_dir is not None else spec.skill_dir
    timings: dict[str, float] = {}
    run_dir = claim_run_dir(results_root, spec.rel_dir)
    scratch = Path(tempfile.mkdtemp(prefix=f"skillassay-{spec.eval_id}-"))
    run_id = f"{spec.job_id}-{spec.eval_id}-{spec.variant[0]}{spec.run_index}"
    outcome = "completed"
    error: str | None = None
    failures: list[HarnessFailure] = []
    agent_exit: AgentExit | None = None
    agent_result: AgentResult | None = None
    graded = GradeOutcome()
    files_changed = 0
    empty_diff = False
    notes: list[str] = []
    agent_version = None
    use: SkillUse | None = None
    trigger_outcome: TriggerOutcome | None = None
    attempts: list = []
    usage: ModelUsage | None = None
    tokens: list[str] = []
    sealed_by = run_policy(spec.isolation, definition, results_root, spec.allow_hosts, spec.mounts)
    sealing = Sealing(sealed_by)
    arm = None
    size: SizeReport | None = None
    canary: CanaryCheck | None = None
    try:
        # no run of an eval is scored before its golden passed here (orchestrator/canary.py): else the machine's fault
        canary = _canary(spec, definition, services, sealed_by)
        if canary is not None and not canary.passed:
            failures.append(HarnessFailure(stage="canary", message=canary.reason or "the golden fails here"))
            raise _NotGraded(canary.reason)
        agent = get_agent(spec.agent)
        agent_version = agent.version()
        workspaces: dict[int, Any] = {}
        sealings: dict[int, tuple[Sealing, Any]] = {}  # attempt -> what its sandbox recorded, its arm

        def attempt(n: int):
            # every attempt from scratch: a fresh workspace, a fresh private home, a fresh model token
            shutil.rmtree(scratch / f"attempt-{n - 1}", ignore_errors=True)
            base = scratch / f"attempt-{n}"
            t = time.monotonic()
            phases.phase("workspace")
            ws = workspaces[n] = create_workspace(triggering.app_dir(definition, base), base / "workspace")
            timings["workspace"] = round(timings.get("workspace", 0.0) + time.monotonic() - t, 3)
            home = base / "home"
            home.mkdir(parents=True)
            endpoint = None
            if model_grants is not None and agent.model_api is not None:
                endpoint = model_grants.grant(run_id)
                tokens.append(endpoint.token)
            ctx = AgentContext(
                workspace=ws.path,
                prompt=definition.prompt,
                output_dir=run_dir,
                home=home,
                timeout=spec.timeout,
                skill_dir=skill_here if spec.variant == "skill" else None,
                skill_mode=spec.skill_mode,  # type: ignore[arg-type]
                model=spec.model,
                env=dict(spec.agent_env),
                model_endpoint=endpoint,
                fixture_dir=definition.fixture_dir,
                golden_dir=definition.golden_dir,
                command=spec.command,
                budget=definition.trigger.budget if definition.trigger else None,
            )
            t = time.monotonic()
            try:
                phases.phase("agent")
                seen = Sealing(sealed_by)
                result, checked = run_agent(agent, ctx, sealed_by, scratch / f"seal-{n}", seen,
                                            skill_name=_skill_name(spec, skill_here, any_variant=True),
                                            skill_dir=skill_here,
                                            variant=spec.variant, mode=spec.skill_mode)
                sealings[n] = (seen, checked)
            finally:
                report = model_grants.release(endpoint.token) if endpoint is not None else None
                timings["agent"] = round(timings.get("agent", 0.0) + time.monotonic() - t, 3)
            told = agent.skills_told(report.first_request) if report is not None and report.first_request else None
            if checked is not None and told is not None:
                # the skills the CLI listed to the model, as the proxy received them before any of the agent's
                # commands ran; not the CLI's session file, which those commands can rewrite (buying a rerun)
                result.transcript.skills_available, result.transcript.skills_source = told, "model request"
                checked = arms.check(arms.ArmSnapshot(installed=checked.installed, user_config=checked.user_config),
                                    skill_name=_skill_name(spec, skill_here, any_variant=True), skill_dir=skill_here,
                                    variant=spec.variant, mode=spec.skill_mode, reported=told,
                                    reported_source="model request")
                sealings[n] = (seen, checked)
            return result, report

        def keep(n: int) -> str:
            kept = move_attempt_files(run_dir, n, [p.name for p in run_dir.iterdir()
                                                   if not p.name.startswith("attempt-")])
            return kept.name

        policy = RetryPolicy(retries=spec.retries, base_delay=spec.retry_delay)
        tried = run_attempts(attempt, policy, keep=keep, may_retry=may_retry)
        agent_result, attempts, usage = tried.result, tried.attempts, tried.usage
        ws = workspaces[len(attempts)]
        sealing, arm = sealings.get(len(attempts), (sealing, None))
        if tried.calls:
            with (run_dir / "model_calls.jsonl").open("w", encoding="utf-8") as fh:
                for call in tried.calls:
                    fh.write(call.model_dump_json() + "\n")
        write_json_atomic(run_dir / "transcript.json", agent_result.transcript.model_dump(mode="json"))
        if spec.variant == "skill":
            use = triggering.skill_use(agent_result, _skill_name(spec, skill_here), skill_here)
        # the agent's status, checked against the model proxy's record (attempts.judge), onto the outcomes
        outcome, error, agent_exit = classify(agent_result, tried.status, tried.error)
        if outcome == "provider_error":
            error = f"provider error after {len(attempts)} attempt(s): {tried.error or tried.error_kind}"
        if outcome in UNSCORED:
            # the agent never got to work, or the provider failed it: nothing of the agent's to grade; --resume reruns
            raise _NotGraded(error or outcome)
        if arm is not None and not arm.ok:
            # the arm was not what the comparison needs (a baseline with a skill, a skill run without it): never
            # scored, rerun by --resume (docs/sealing.md)
            failures.append(HarnessFailure(stage="arm", message=f"arm integrity: {arm.problem}"))
            raise _NotGraded(arm.problem)

        # whatever the agent did to its workspace (even deleting it) is its change, and is graded; from here on,
        # everything reads one bounded copy of it, never the live one (workspace/bounded_copy.py)
        t = time.monotonic()
        size = snapshot(ws.path, ws.source, scratch / "final", spec.max_change_size)
        ws = Workspace(path=scratch / "final", source=ws.source, pristine_commit=ws.pristine_commit)
        timings["snapshot"] = round(time.monotonic() - t, 3)
        if size.special or size.unreadable:
            notes.append(f"not kept: {len(size.special) + size.special_more} fifo/socket/device file(s), "
                         f"{len(size.unreadable)} unreadable file(s) (run.json size)")
        if size.entries_left_out:
            # the agent's doing: graded on what was kept, like a change over the size limit
            notes.append(f"{size.entries_left_out} new or changed file(s)/folder(s) beyond the first "
                         f"{size.max_entries} left out, graded on the rest (run.json size.entries_left_out)")
        change = ws.compute_change()
        change.over_limit = [o.model_dump() for o in size.over_limit]
        change.entries_left_out = size.entries_left_out
        files_changed = len(change.files)
        empty_diff = change.empty and definition.trigger is None
        (run_dir / "diff.patch").write_text(change.patch())
        write_json_atomic(run_dir / "changes.json", change.to_json())

        if definition.trigger is not None:
            # a trigger run is not graded on its change: its decision is read from the transcript
            trigger_outcome, graded.criteria, graded.verdict = triggering.decide(definition, use, agent_result.stopped)
            if spec.keep_workspace:
                keep_workspace(ws.path, run_dir / "workspace", ws.source)
            raise _Decided
        # graded whatever the agent's end: a timed-out or crashed agent may have left a working change behind
        emulator = None
        if services is not None and spec.seam == "emulator" and spec.layers != "rubric" and definition.has_sandbox:
            emulator = services.emulator()
        phases.phase("grading")
        graded = grade(definition, ws.path, run_dir, run_id, layers=spec.layers, seam=spec.seam,
                       backend=spec.backend, emulator=emulator, transcript=agent_result.transcript,
                       judge_config=judge_config or spec.judge, change=change, policy=sealed_by,
                       sealing=sealing)
        timings.update(graded.timings)
        plan = services.recipe.canary if services is not None else None
        if plan is not None and spec.agent == REFERENCE:  # the reference agent's run is the golden's own canary
            canary = reference_check(definition, plan, graded)
            if not canary.passed:
                failures.append(HarnessFailure(stage="canary", message=canary.reason or "the golden fails here"))
        if sealing.reached_suite() and graded.verdict is not None:
            # reaching for the suite or the results is forbidden in every eval (docs/sealing.md)
            graded.verdict = decide(graded.criteria, [*graded.verdict.forbidden_observed, REACHED_FOR_SUITE],
                                    graded.verdict.threshold)
        if graded.process is not None:
            graded.process["sealing"] = sealing.process_json()
        for name, data in (("rubric.json", graded.rubric), ("sandbox.json", graded.sandbox),
                           ("process.json", graded.process)):
            if data is not None:
                write_json_atomic(run_dir / name, data)
        failures.extend(graded.failures)
        if spec.keep_workspace:
            keep_workspace(ws.path, run_dir / "workspace", ws.source)
    except KeyboardInterrupt:
        raise
    except _Decided:
        pass
    except _NotGraded:
        if outcome == "harness_error":
            failures.append(HarnessFailure(stage="agent", message=error or "the agent could not run"))
    except DefinitionError as exc:
        outcome, error = "invalid_definition", str(exc)
    except Exception as exc:  # noqa: BLE001 - recorded as the harness's failure, never the agent's
        failures.append(HarnessFailure(stage="harness", message=f"{type(exc).__name__}: {exc}",
                                       traceback=traceback.format_exc()[-8000:]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if sealing.reports and not (run_dir / "process.json").exists():
        # the sealing's evidence is kept whatever became of the grading (or when no process grader ran)
        write_json_atomic(run_dir / "process.json", {"sealing": sealing.process_json()})
    if failures and outcome != "invalid_definition":
        # the harness could not grade this run completely: it is not the agent's score (rerun by --resume)
        outcome, error = "harness_error", "; ".join(str(f) for f in failures)[:2000]

    transcript = agent_result.transcript if agent_result else Transcript(agent=spec.agent)
    record = RunRecord(
        job_id=spec.job_id,
        eval_id=spec.eval_id,
        run_index=spec.run_index,
        variant=spec.variant,
        run_dir=spec.rel_dir,
        agent=spec.agent,
        agent_version=agent_version or (agent_result.cli_version if agent_result else None),
        skill_path=str(spec.skill_dir) if spec.skill_dir and spec.variant == "skill" else None,
        skill_hash=spec.skill_hash if spec.variant == "skill" else None,
        outcome=outcome,  # type: ignore[arg-type]
        error=error,
        harness_failures=[f.model_copy(update={"traceback": None}) for f in failures],
        agent_exit=agent_exit,
        empty_diff=empty_diff and outcome in SCORED,
        started_at=started,
        finished_at=datetime.now(UTC),
        timings=timings,
        grades=graded.grades,
        criteria=graded.criteria,
        verdict=graded.verdict,
        transcript=_summary(transcript, _skill_name(spec, skill_here), use),
        model_usage=usage,
        attempts=attempts,
        skill_use=use,
        trigger=trigger_outcome,
        files_changed=files_changed,
        config=run_config(spec, definition_source or definition.source) | ({"notes": notes} if notes else {}),
        machine=machine_info(),
        sealing=sealing.run_json(),
        arm=json.loads(arm.model_dump_json()) if arm is not None else None,
        canary=canary,
    )
    if record.empty_diff and record.verdict is not None:
        record.verdict.passed = False  # the plan: an empty diff fails, whatever the graders gave it
    if size is not None:
        record.size = size
    hidden = run_redactor(spec.agent_env, tokens)
    tracebacks = "\n\n".join(f"[{f.stage}] {f.message}\n{f.traceback}" for f in failures if f.traceback)
    return finish_run(results_root, record, hidden, tracebacks)


def run_config(spec: RunSpec, definition_source: Path) -> dict[str, Any]:
    """The run's configuration as run.json keeps it: environment values are not stored, only their names."""
    return json.loads(spec.model_dump_json(exclude={"agent_env"})) | {
        "agent_env_keys": sorted(spec.agent_env), "definition": str(definition_source)}


def harness_failure(spec: RunSpec, definition_source: Path, error: str, started_at: datetime,
                    machine: dict[str, Any] | None = None) -> RunRecord:
    """The record of a run that never came back from where it executed (its worker or node died on every attempt):
    the harness's failure, not scored, rerun by --resume. Written like any record, so the run is never lost."""
    record = RunRecord(
        job_id=spec.job_id, eval_id=spec.eval_id, run_index=spec.run_index, variant=spec.variant,
        run_dir=spec.rel_dir, agent=spec.agent,
        skill_path=str(spec.skill_dir) if spec.skill_dir and spec.variant == "skill" else None,
        skill_hash=spec.skill_hash if spec.variant == "skill" else None,
        outcome="harness_error", error=error, harness_failures=[HarnessFailure(stage="executor", message=error)],
        started_at=started_at, finished_at=datetime.now(UTC),
        config=run_config(spec, definition_source), machine=machine or {},
    )
    return scrub_record(record, run_redactor(spec.agent_env))[0]


def run_trial(spec: RunSpec, definition: EvalDefinition, results_root: Path, **kw: Any) -> RunRecord:
    """``execute``, with the guarantee the job relies on: a run either comes back recorded (graded, or as a harness
    error with its traceback in its folder), or raises ``RunNotWritten`` carrying its record, ``RunAlreadyRecorded``
    / ``RunClaimed`` (not ours to write), or KeyboardInterrupt. Nothing else escapes, so no run goes missing."""
    try:
        with phases.running(phases.RunKey(spec.job_id, spec.eval_id, spec.variant, spec.run_index)):
            return execute(spec, definition, results_root, **kw)
    except (KeyboardInterrupt, BudgetSpent, RunAlreadyRecorded, RunClaimed, RunNotWritten):
        raise
    except Exception as exc:  # noqa: BLE001 - the trial failed outside its own guard (claiming, building the record)
        now = datetime.now(UTC)
        failure = HarnessFailure(stage="harness", message=f"{type(exc).__name__}: {exc}")
        record = RunRecord(job_id=spec.job_id, eval_id=spec.eval_id, run_index=spec.run_index, variant=spec.variant,
                           run_dir=spec.rel_dir, agent=spec.agent, outcome="harness_error", error=str(failure),
                           harness_failures=[failure], started_at=now, finished_at=now,
                           config=run_config(spec, kw.get("definition_source") or definition.source))
        return finish_run(results_root, record, run_redactor(spec.agent_env), f"[harness]\n{traceback.format_exc()}")


class RunNotWritten(Exception):
    """Neither the run's record nor its harness-error record could be written; the job records it in the index
    (when it can) and does not end "finished"."""

    def __init__(self, record: RunRecord, cause: BaseException):
        self.record, self.cause = record, cause
        super().__init__(f"{record.run_dir}: the run could not be written: {type(cause).__name__}: {cause}")


def finish_run(results_root: Path, record: RunRecord, hidden: Redactor, tracebacks: str = "") -> RunRecord:
    """Cut oversized logs, scrub every secret, in every form, from the run's folder and record (docs/results.md,
    "Secrets"; what was found is recorded in ``redactions``), then write run.json (last: a folder with run.json is a
    finished run). If that fails, the run becomes a harness error, its traceback kept in ``harness_error.txt``."""
    run_dir = Path(results_root) / record.run_dir
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if tracebacks:
            (run_dir / HARNESS_ERROR_FILE).write_text(tracebacks, errors="backslashreplace")
        cut = cap_logs(run_dir)  # whatever became of the run: an agent that printed gigabytes ended it early
        if cut or record.size is not None:
            record.size = record.size or SizeReport(limit=record.config.get("max_change_size", DEFAULT_MAX_CHANGE))
            record.size.logs_cut = cut
        t = time.monotonic()
        found = scrub_run_dir(run_dir, hidden)
        record, hits = scrub_record(record, hidden)
        if hits:
            found.append(Redaction(path="run.json", where="record", action="replaced", count=len(hits),
                                   forms=sorted({h.form for h in hits}), sources=sorted({h.source for h in hits})))
        record.redactions, record.unscrubbable = merge(found), list(hidden.too_short)
        record.timings["scrub"] = round(time.monotonic() - t, 3)
        write_run_file(results_root, record)
        return record
    except Exception as exc:  # noqa: BLE001 - the run must not vanish: record why it could not be written
        tb = traceback.format_exc()
        failed = record.model_copy(update={
            "outcome": "harness_error",
            "error": f"the run could not be written: {type(exc).__name__}: {exc}",
            "harness_failures": [*record.harness_failures,
                                 HarnessFailure(stage="write", message=f"{type(exc).__name__}: {exc}")],
        })
        failed = scrub_record(failed, hidden)[0]
        try:
            (run_dir / HARNESS_ERROR_FILE).write_text(hidden.redact(tracebacks + "\n\n[write]\n" + tb),
                                                      errors="backslashreplace")
            write_run_file(results_root, failed)
        except Exception as again:  # noqa: BLE001
            raise RunNotWritten(failed, again) from exc
        return failed


def _canary(spec: RunSpec, definition: EvalDefinition, services: RunServices | None,
            policy: Any) -> CanaryCheck | None:
    """This eval's canary where the run executes (none for trigger prompts, nor for the reference agent, whose
    runs are the golden's and are checked after grading)."""
    if services is None or spec.agent == REFERENCE or definition.trigger is not None:
        return None
    return services.canary(definition, policy)


class _NotGraded(Exception):
    """The run ends before grading (provider or harness error reported by the agent)."""


class _Decided(Exception):
    """A trigger run: its decision is made, nothing to grade."""


def _skill_name(spec: RunSpec, skill_dir: Path | None, any_variant: bool = False) -> str | None:
    """The skill under test's name (in a baseline run too, with ``any_variant``)."""
    if skill_dir is None or (spec.variant != "skill" and not any_variant):
        return None
    from skillassay.skills import SkillError, load_skill

    try:
        return load_skill(skill_dir).name
    except SkillError:
        return None
