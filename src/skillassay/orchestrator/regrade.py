"""``skillassay regrade JOB``: re-score a job's stored workspaces and transcripts with the current graders,
without running any agent, and say what changed. The previous record is kept beside the new one
(``run.prev.json``)."""

from __future__ import annotations

import os
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillassay import store as result_store
from skillassay.definitions import load_suite
from skillassay.errors import SkillassayError
from skillassay.graders.judge_config import JudgeOverrides
from skillassay.graders.judge_config import require as require_judge
from skillassay.graders.judge_config import resolve as resolve_judge
from skillassay.isolation.run_policy import run_policy
from skillassay.kinds import kind_of
from skillassay.orchestrator.grading import grade
from skillassay.scoring import GRADING_VERSION
from skillassay.store.files import job_lock, write_json_atomic
from skillassay.store.records import RunRecord
from skillassay.transcripts import Transcript
from skillassay.triggers import detect


class ScoreChange(BaseModel):
    eval_id: str
    variant: str
    run_index: int
    field: str
    before: float | str | None
    after: float | str | None


class RegradeResult(BaseModel):
    job_id: str
    regraded: int
    grading_version: int = GRADING_VERSION  # what every regraded run now records
    skipped: list[str]
    changes: list[ScoreChange]


def _record_change(before: RunRecord, after: RunRecord, changes: list[ScoreChange]) -> int:
    b, a = _fields(before), _fields(after)
    for k in sorted(set(b) | set(a)):
        if b.get(k) != a.get(k):
            changes.append(
                ScoreChange(
                    eval_id=before.eval_id,
                    variant=before.variant,
                    run_index=before.run_index,
                    field=k,
                    before=b.get(k),
                    after=a.get(k),
                )
            )
    return 1


def _fields(r: RunRecord) -> dict[str, float | str | None]:
    out: dict[str, float | str | None] = {
        # the kind's figures: the Seam kind's rubric, sandbox and combined scores
        **{
            k.removesuffix("_total"): float(v)
            for k, v in r.grades.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        },
        "verdict": None if r.verdict is None else ("pass" if r.verdict.passed else "fail"),
        "score": None if r.verdict is None else round(r.verdict.score * 100, 2),
        "skill used": None if r.skill_use is None else ("yes" if r.skill_use.used else "no"),
    }
    for c in r.criteria:
        out[f"criterion:{c.id}"] = None if c.fraction is None else round(c.fraction, 4)
    return out


def regrade_job(
    job_id: str,
    results_root: Path,
    *,
    suite: Path | None = None,
    emulator_delay: float = 1.0,
    dry_run: bool = False,
    judge_config: Any = None,
    judge_overrides: JudgeOverrides | None = None,
) -> RegradeResult:
    """``judge_config``: the LLM judge to use; without it, ``judge_overrides`` (options given) over the
    environment's judge over the one the job was run with."""
    db = result_store.open(results_root)
    held = ExitStack()
    try:
        job = db.job(job_id)
        if job is None:
            raise SkillassayError(f"no job {job_id!r} under {results_root}")
        held.enter_context(job_lock(results_root, job_id))  # not while a run or another regrade holds the job
        # the judge: as given, else the environment's, else the one the job was run with
        judge_config = judge_config or resolve_judge(
            **(judge_overrides or {}), stored=job.options.get("judge")
        )
        evals = {e.id: e for e in load_suite(suite or Path(job.suite))}
        runs = db.runs(job_id=job_id)
        require_judge([evals[i] for i in {r.eval_id for r in runs if r.scored} if i in evals], judge_config)
        layers = job.options.get("layers", "both")
        emulator = None
        needs = sorted(
            {
                s
                for r in runs
                if (d := evals.get(r.eval_id)) is not None
                for s in kind_of(d).services(d, layers)
            }
        )
        if needs and job.options.get("seam", "emulator") == "emulator":
            from skillassay.services import service_class

            emulator = service_class(needs[0])(async_delay=emulator_delay, automation_delay=0.5).start(
                host="127.0.0.1", port=0
            )
        changes: list[ScoreChange] = []
        skipped: list[str] = []
        done = 0
        try:
            for r in runs:
                run_dir = results_root / r.run_dir
                ws = run_dir / "workspace"
                d = evals.get(r.eval_id)
                if not r.scored:
                    skipped.append(
                        f"{r.run_dir}: {r.outcome.replace('_', ' ')}, never graded (run --resume reruns it)"
                    )
                    continue
                if d is None or not ws.is_dir():
                    skipped.append(
                        f"{r.run_dir}: "
                        + ("eval no longer in the suite" if d is None else "no stored workspace")
                    )
                    continue
                tfile = run_dir / "transcript.json"
                transcript = Transcript.model_validate_json(tfile.read_text()) if tfile.is_file() else None
                # skill use read again with the current definition (skillassay.triggers)
                use = (
                    detect(transcript, r.skill_use.target)
                    if transcript and r.skill_use and r.skill_use.target
                    else r.skill_use
                )
                if not kind_of(d).grades_change(d):  # decided from the transcript (a trigger prompt)
                    if use is None:
                        skipped.append(f"{r.run_dir}: no record of where the skill was installed")
                        continue
                    stopped = r.trigger.stopped if r.trigger else None
                    decided = grade(
                        d,
                        ws,
                        run_dir,
                        f"regrade-{r.job_id}-{r.eval_id}-{r.run_index}",
                        skill_use=use,
                        stopped=stopped,
                    )
                    new = r.model_copy(
                        update={
                            "criteria": decided.criteria,
                            "verdict": decided.verdict,
                            "trigger": decided.trigger,
                            "skill_use": use,
                            "regraded_at": datetime.now(UTC),
                            "grading_version": GRADING_VERSION,
                        }
                    )
                    done += _record_change(r, new, changes)
                    if not dry_run:
                        os.replace(run_dir / "run.json", run_dir / "run.prev.json")
                        result_store.write_run_file(results_root, new)
                        db.record_run(new)
                    continue
                # sealed as the job was (the app and the tests are the agent's code, as hostile as when it
                # ran)
                policy = run_policy(
                    job.options.get("isolation", "bubblewrap"),
                    d,
                    results_root,
                    job.options.get("allow_hosts") or [],
                    job.options.get("mounts") or [],
                )
                g = grade(
                    d,
                    ws,
                    run_dir,
                    f"regrade-{r.job_id}-{r.eval_id}-{r.run_index}",
                    layers=layers,
                    seam=job.options.get("seam", "emulator"),
                    backend=job.options.get("backend", "host"),
                    emulator=emulator,
                    transcript=transcript,
                    judge_config=judge_config,
                    policy=policy,
                )
                if g.failures:
                    # the harness failed to regrade: the graded record stands, untouched
                    skipped.append(
                        f"{r.run_dir}: not regraded, the harness failed: "
                        + "; ".join(str(f) for f in g.failures)[:500]
                    )
                    continue
                new = r.model_copy(
                    update={
                        "grades": g.grades,
                        "criteria": g.criteria,
                        "verdict": g.verdict,
                        "regraded_at": datetime.now(UTC),
                        "skill_use": use,
                        "grading_version": GRADING_VERSION,
                    }
                )
                if r.empty_diff and new.verdict is not None:
                    new.verdict.passed = False
                before, after = _fields(r), _fields(new)
                for k in sorted(set(before) | set(after)):
                    if before.get(k) != after.get(k):
                        changes.append(
                            ScoreChange(
                                eval_id=r.eval_id,
                                variant=r.variant,
                                run_index=r.run_index,
                                field=k,
                                before=before.get(k),
                                after=after.get(k),
                            )
                        )
                done += 1
                if dry_run:
                    continue
                for name, data in (
                    ("rubric.json", g.rubric),
                    ("sandbox.json", g.sandbox),
                    ("process.json", g.process),
                ):
                    if data is not None:
                        write_json_atomic(run_dir / name, data)
                _keep_previous(run_dir)
                result_store.write_run_file(results_root, new)
                db.record_run(new)
        finally:
            if emulator is not None:
                emulator.stop()
        return RegradeResult(job_id=job_id, regraded=done, skipped=skipped, changes=changes)
    finally:
        held.close()
        db.close()


def _keep_previous(run_dir: Path) -> None:
    """The record being replaced becomes ``run.prev.json``; an older one there moves to ``run.prev-<n>.json``,
    so every regrade's predecessor is kept."""
    prev = run_dir / "run.prev.json"
    if prev.exists():
        n = 1
        while (run_dir / f"run.prev-{n}.json").exists():
            n += 1
        os.replace(prev, run_dir / f"run.prev-{n}.json")
    os.replace(run_dir / "run.json", prev)
