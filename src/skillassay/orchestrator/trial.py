"""One run (a trial): fresh workspace -> agent -> change -> graders -> score -> files on disk.

Everything a run produces lands in its own folder, claimed exclusively, and ``run.json`` is written last and
atomically: a folder with a ``run.json`` is a finished run, whatever happens to the orchestrator afterwards.
How the run ended is one of the outcomes of ``skillassay.outcomes``, decided by its phases
(orchestrator/run_phases.py: ``classify``, then the graders' failures), which ``execute`` calls in order.
"""

from __future__ import annotations

import shutil
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillassay import phases
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import DefinitionError
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation.record import Sealing
from skillassay.orchestrator.config import RunSpec
from skillassay.orchestrator.model_access import BudgetSpent
from skillassay.orchestrator.run_phases import (
    AgentRun,
    Change,
    FoundAgent,
    RunContext,
    RunSoFar,
    Snapshot,
    add_sealing,
    agent_end,
    agent_failures,
    arm_failure,
    blame_harness,
    build_record,
    canary_failure,
    classify,
    find_agent,
    golden_canary,
    grade_change,
    grade_kind,
    grades_change,
    keep_agent_files,
    keep_final_workspace,
    keep_sealing_evidence,
    prepare,
    read_change,
    reference_canary,
    run_agent_phase,
    skill_use,
    take_snapshot,
    tracebacks,
    write_change,
    write_grades,
)
from skillassay.orchestrator.run_services import RunServices
from skillassay.outcomes import UNSCORED, HarnessFailure
from skillassay.secrets import Redaction, Redactor, merge
from skillassay.store.files import (
    HARNESS_ERROR_FILE,
    RunAlreadyRecorded,
    RunClaimed,
    cap_logs,
    run_redactor,
    scrub_record,
    scrub_run_dir,
    write_run_file,
)
from skillassay.store.records import RunRecord
from skillassay.workspace import DEFAULT_MAX_CHANGE, SizeReport

__all__ = ["RunNotWritten", "RunSpec", "classify", "execute", "finish_run", "harness_failure", "run_trial"]


def execute(
    spec: RunSpec,
    definition: EvalDefinition,
    results_root: Path,
    *,
    services: RunServices | None = None,
    judge_config: JudgeConfig | None = None,
    skill_dir: Path | None = None,
    definition_source: Path | None = None,
) -> RunRecord:
    """Run one trial and return its record (already written to ``<run dir>/run.json``).

    ``services``: the run-level services where this run executes: the Seam emulator, and the job's model proxy
    (each attempt of an agent that talks to a model gets its own endpoint and token from it, released when the
    attempt ends) with the job's --max-cost (no run starts, and no provider error is retried, once it is
    spent: then BudgetSpent is raised and nothing is written). ``skill_dir`` and ``definition_source`` are for
    runs executing away from the job's files (Ray): where this machine holds the skill (default
    ``spec.skill_dir``), and the definition file as the job names it (default ``definition.source``); run.json
    records the job's names, never the worker's copies.

    The run's folder is claimed exclusively (``store.files.claim_run_dir``): a graded run is never
    overwritten. If the record cannot be written, the run is recorded as a harness error with the traceback
    in its folder; if even that fails, ``RunNotWritten`` carries the record to the job, which counts it."""
    ctx = prepare(spec, definition, results_root, services, judge_config, skill_dir, definition_source)
    so_far = RunSoFar(sealing=Sealing(ctx.policy))
    try:
        _run_phases(ctx, so_far)
    except KeyboardInterrupt:
        raise
    except DefinitionError as exc:
        so_far.outcome, so_far.error = "invalid_definition", str(exc)
    except Exception as exc:  # noqa: BLE001 - recorded as the harness's failure, never the agent's
        so_far.fail(exc)
    finally:
        shutil.rmtree(ctx.scratch, ignore_errors=True)
    keep_sealing_evidence(ctx, so_far)
    blame_harness(so_far)
    hidden = run_redactor(spec.config.agent_env, ctx.tokens)
    return finish_run(results_root, build_record(ctx, so_far), hidden, tracebacks(so_far.failures))


def _run_phases(ctx: RunContext, so_far: RunSoFar) -> None:
    """The run's phases in order, each result kept in ``so_far``; the run stops where a result says it cannot
    be graded (its golden fails here, the agent never got to work, its arm is not the comparison's)."""
    so_far.canary = golden_canary(ctx)
    if (failure := canary_failure(so_far.canary)) is not None:
        so_far.failures.append(failure)
        return
    so_far.agent = find_agent(ctx)
    run = _agent_phase(ctx, so_far, so_far.agent)
    if run is None:
        return
    snap = so_far.snapshot = take_snapshot(ctx, run.workspace)
    change = so_far.change = read_change(ctx, snap)
    write_change(ctx, change)
    _grade_phase(ctx, so_far, run, snap, change)


def _agent_phase(ctx: RunContext, so_far: RunSoFar, found: FoundAgent) -> AgentRun | None:
    """The agent's attempts and how they ended; None when there is nothing of the agent's to grade (--resume
    reruns the run)."""
    run = so_far.agent_run = run_agent_phase(ctx, found.agent)
    so_far.sealing = run.sealing
    keep_agent_files(ctx, run)
    so_far.use = skill_use(ctx, run.tried.result)
    end = so_far.end = agent_end(run.tried)
    so_far.outcome, so_far.error = end.outcome, end.error
    if end.outcome in UNSCORED:
        so_far.failures.extend(agent_failures(end))
        return None
    if (failure := arm_failure(run.arm)) is not None:
        so_far.failures.append(failure)
        return None
    return run


def _grade_phase(ctx: RunContext, so_far: RunSoFar, run: AgentRun, snap: Snapshot, change: Change) -> None:
    """The change graded (or, for a kind that does not grade it, the run decided), the grades written."""
    if not grades_change(ctx.definition):
        so_far.trigger, so_far.graded = grade_kind(ctx, snap, so_far.use, run.tried.result)
        keep_final_workspace(ctx, snap)
        return
    graded = so_far.graded = grade_change(ctx, snap, change, run)
    ctx.clock.timings.update(graded.timings)
    if (checked := reference_canary(ctx, graded)) is not None:
        so_far.canary = checked
        if (failure := canary_failure(checked)) is not None:
            so_far.failures.append(failure)
    add_sealing(graded, run.sealing)
    write_grades(ctx, graded)
    so_far.failures.extend(graded.failures)
    keep_final_workspace(ctx, snap)


def harness_failure(
    spec: RunSpec,
    definition_source: Path,
    error: str,
    started_at: datetime,
    machine: dict[str, Any] | None = None,
) -> RunRecord:
    """The record of a run that never came back from where it executed (its worker or node died on every
    attempt): the harness's failure, not scored, rerun by --resume. Written like any record, so the run is
    never lost."""
    record = RunRecord(
        job_id=spec.job_id,
        eval_id=spec.eval_id,
        run_index=spec.run_index,
        variant=spec.variant,
        run_dir=spec.rel_dir,
        agent=spec.config.agent,
        skill_path=str(spec.skill_dir) if spec.skill_dir and spec.variant == "skill" else None,
        skill_hash=spec.skill_hash if spec.variant == "skill" else None,
        outcome="harness_error",
        error=error,
        harness_failures=[HarnessFailure(stage="executor", message=error)],
        started_at=started_at,
        finished_at=datetime.now(UTC),
        config=spec.recorded(definition_source),
        machine=machine or {},
    )
    return scrub_record(record, run_redactor(spec.config.agent_env))[0]


def run_trial(spec: RunSpec, definition: EvalDefinition, results_root: Path, **kw: Any) -> RunRecord:
    """``execute``, with the guarantee the job relies on: a run either comes back recorded (graded, or as a
    harness error with its traceback in its folder), or raises ``RunNotWritten`` carrying its record,
    ``RunAlreadyRecorded`` / ``RunClaimed`` (not ours to write), or KeyboardInterrupt. Nothing else
    escapes, so no run goes missing."""
    try:
        with phases.running(phases.RunKey(spec.job_id, spec.eval_id, spec.variant, spec.run_index)):
            return execute(spec, definition, results_root, **kw)
    except (KeyboardInterrupt, BudgetSpent, RunAlreadyRecorded, RunClaimed, RunNotWritten):
        raise
    except Exception as exc:  # noqa: BLE001 - the trial failed outside its own guard (claiming, building the record)
        now = datetime.now(UTC)
        failure = HarnessFailure(stage="harness", message=f"{type(exc).__name__}: {exc}")
        record = RunRecord(
            job_id=spec.job_id,
            eval_id=spec.eval_id,
            run_index=spec.run_index,
            variant=spec.variant,
            run_dir=spec.rel_dir,
            agent=spec.config.agent,
            outcome="harness_error",
            error=str(failure),
            harness_failures=[failure],
            started_at=now,
            finished_at=now,
            config=spec.recorded(kw.get("definition_source") or definition.source),
        )
        return finish_run(
            results_root, record, run_redactor(spec.config.agent_env), f"[harness]\n{traceback.format_exc()}"
        )


class RunNotWritten(Exception):
    """Neither the run's record nor its harness-error record could be written; the job records it in the index
    (when it can) and does not end "finished"."""

    def __init__(self, record: RunRecord, cause: BaseException):
        self.record, self.cause = record, cause
        super().__init__(f"{record.run_dir}: the run could not be written: {type(cause).__name__}: {cause}")


def finish_run(results_root: Path, record: RunRecord, hidden: Redactor, tracebacks: str = "") -> RunRecord:
    """Cut oversized logs, scrub every secret, in every form, from the run's folder and record
    (docs/results.md, "Secrets"; what was found is recorded in ``redactions``), then write run.json (last:
    a folder with run.json is a finished run). If that fails, the run becomes a harness error, its
    traceback kept in ``harness_error.txt``."""
    run_dir = Path(results_root) / record.run_dir
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if tracebacks:
            (run_dir / HARNESS_ERROR_FILE).write_text(tracebacks, errors="backslashreplace")
        cut = cap_logs(run_dir)  # whatever became of the run: an agent that printed gigabytes ended it early
        if cut or record.size is not None:
            record.size = record.size or SizeReport(
                limit=record.config.get("max_change_size", DEFAULT_MAX_CHANGE)
            )
            record.size.logs_cut = cut
        t = time.monotonic()
        found = scrub_run_dir(run_dir, hidden)
        record, hits = scrub_record(record, hidden)
        if hits:
            found.append(
                Redaction(
                    path="run.json",
                    where="record",
                    action="replaced",
                    count=len(hits),
                    forms=sorted({h.form for h in hits}),
                    sources=sorted({h.source for h in hits}),
                )
            )
        record.redactions, record.unscrubbable = merge(found), list(hidden.too_short)
        record.timings["scrub"] = round(time.monotonic() - t, 3)
        write_run_file(results_root, record)
        return record
    except Exception as exc:  # noqa: BLE001 - the run must not vanish: record why it could not be written
        tb = traceback.format_exc()
        failed = record.model_copy(
            update={
                "outcome": "harness_error",
                "error": f"the run could not be written: {type(exc).__name__}: {exc}",
                "harness_failures": [
                    *record.harness_failures,
                    HarnessFailure(stage="write", message=f"{type(exc).__name__}: {exc}"),
                ],
            }
        )
        failed = scrub_record(failed, hidden)[0]
        try:
            (run_dir / HARNESS_ERROR_FILE).write_text(
                hidden.redact(tracebacks + "\n\n[write]\n" + tb), errors="backslashreplace"
            )
            write_run_file(results_root, failed)
        except Exception as again:  # noqa: BLE001
            raise RunNotWritten(failed, again) from exc
        return failed
