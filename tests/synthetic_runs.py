"""Synthetic results trees: a job's files written through the real models, for tests, demos and benchmarks.

Not a simulation of any agent: scores are drawn from a seeded random generator so figures are reproducible.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from skillassay.scoring import GRADING_VERSION
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.files import run_dir_rel, write_job_file, write_json_atomic, write_run_file
from skillassay.store.records import JobRecord, Outcome, RunRecord, TranscriptSummary, Variant
from skillassay.transcripts import Message, ToolCall, Transcript, Usage

CRITERIA = (
    ("api_path_selection", 15),
    ("file_targeting", 20),
    ("integration_placement", 20),
    ("api_correctness", 20),
    ("lifecycle_completeness", 15),
    ("webhook_setup", 10),
)


def fake_diff(eval_id: str, n: int) -> str:
    return (
        f"diff --git a/src/reservations.ts b/src/reservations.ts\n"
        f"index 1111111..2222222 100644\n"
        f"--- a/src/reservations.ts\n+++ b/src/reservations.ts\n"
        f"@@ -1,4 +1,9 @@\n"
        f" import express from 'express';\n"
        f"+import {{ Seam }} from 'seam';\n"
        f"+const seam = new Seam();  // {eval_id} run {n}\n"
        f" export async function createReservation(req, res) {{\n"
        f"-  res.json({{ ok: true }});\n"
        f"+  await seam.customers.push_data({{ customer_key: req.body.propertyId }});\n"
        f"+  res.json({{ ok: true }});\n"
        f" }}\n"
    )


def fake_transcript(eval_id: str, n: int) -> Transcript:
    calls = [
        ToolCall(
            id="t1",
            name="Read",
            kind="read",
            input={"file_path": "src/reservations.ts"},
            result="import express",
        ),
        ToolCall(id="t2", name="Skill", kind="skill", input={"skill": "seam-integration"}, result="loaded"),
        ToolCall(
            id="t3",
            name="Edit",
            kind="edit",
            input={"file_path": "src/reservations.ts"},
            paths=["src/reservations.ts"],
            result="ok",
        ),
        ToolCall(
            id="t4",
            name="Bash",
            kind="shell",
            input={"command": "npm test"},
            command="npm test",
            exit_code=0,
            result="1 passing",
        ),
    ]
    return Transcript(
        agent="claude-code",
        cli_version="2.0.0",
        model="claude-sonnet",
        messages=[
            Message(role="user", text=f"Integrate Seam into {eval_id}."),
            Message(role="assistant", text="I will read the reservation handlers first."),
            Message(role="assistant", text="Done: push_data on create."),
        ],
        tool_calls=calls,
        skills_available=["seam-integration"],
        skills_invoked=["seam-integration"],
        final_message="Done: push_data on create.",
        usage=Usage(input_tokens=12000 + n, output_tokens=900),
        cost_usd=0.05,
        turns=5,
        duration_ms=42000,
        exit_status="success",
    )


def make_job(
    results_root: Path,
    job_id: str = "20261129-224512-ab12",
    evals: tuple[str, ...] = ("express-ts", "flask-py"),
    runs: int = 3,
    baseline: bool = False,
    seed: int = 1,
    skill_mean: float = 0.85,
    baseline_mean: float = 0.6,
    artifacts: bool = True,
    created_at: datetime | None = None,
    failures_as: Outcome | None = None,
    grading_version: int = GRADING_VERSION,
) -> tuple[JobRecord, list[RunRecord]]:
    """Write ``job.json`` and every run's files under ``results_root``; return the records. ``failures_as``:
    every run whose verdict fails is recorded with this outcome instead (an arm that makes its failures
    unscored)."""
    rng = random.Random(seed)
    created = created_at or datetime(2026, 11, 29, 22, 45, 12, tzinfo=UTC)
    variants: tuple[Variant, ...] = ("skill", "baseline") if baseline else ("skill",)
    planned = [(e, i, v) for e in evals for v in variants for i in range(1, runs + 1)]
    job = JobRecord(
        job_id=job_id,
        created_at=created,
        suite="evals",
        agent="claude-code",
        skill_path="skills/seam",
        skill_hash="9f2c" + "0" * 60,
        options={"runs": runs, "baseline": baseline, "layers": ["rubric", "sandbox"]},
        planned=planned,
        status="finished",
        finished_at=created + timedelta(minutes=30),
    )
    write_job_file(results_root, job)
    records = []
    for k, (e, i, v) in enumerate(planned):
        mean = skill_mean if v == "skill" else baseline_mean
        fractions = [min(1.0, max(0.0, rng.gauss(mean, 0.15))) for _ in CRITERIA]
        crit = [
            CriterionResult(
                id=cid, weight=w, fraction=round(f, 2), grader="rubric", evidence=[f"{cid}: {f:.2f}"]
            )
            for (cid, w), f in zip(CRITERIA, fractions, strict=True)
        ]
        verdict = decide(crit)
        started = created + timedelta(seconds=30 * k)
        rec = RunRecord(
            job_id=job_id,
            eval_id=e,
            run_index=i,
            variant=v,
            run_dir=run_dir_rel(job_id, e, i, v),
            agent="claude-code",
            agent_version="2.0.0",
            skill_path=job.skill_path if v == "skill" else None,
            skill_hash=job.skill_hash if v == "skill" else None,
            outcome="completed",
            started_at=started,
            finished_at=started + timedelta(seconds=95),
            timings={"agent": 80.0, "rubric": 1.0, "sandbox": 14.0},
            grades={
                "rubric_total": round(verdict.score * 100, 2),
                "sandbox_total": 100.0 if verdict.passed else 70.0,
            },
            criteria=crit,
            verdict=verdict,
            transcript=TranscriptSummary(
                turns=5,
                tool_calls=4,
                input_tokens=12000,
                output_tokens=900,
                cost_usd=0.05,
                skill_loaded=v == "skill",
                skill_invoked=v == "skill",
                final_message="Done.",
            ),
            files_changed=1,
            grading_version=grading_version,
        )
        if failures_as is not None and not verdict.passed:
            rec = rec.model_copy(
                update={
                    "outcome": failures_as,
                    "verdict": None,
                    "criteria": [],
                    "error": f"{failures_as.replace('_', ' ')} (synthetic)",
                }
            )
        write_run_file(results_root, rec)
        if artifacts:
            d = Path(results_root) / rec.run_dir
            (d / "diff.patch").write_text(fake_diff(e, i), encoding="utf-8")
            (d / "transcript.json").write_text(
                fake_transcript(e, i).model_dump_json(indent=2), encoding="utf-8"
            )
            write_json_atomic(
                d / "rubric.json",
                {
                    "total": rec.grades["rubric_total"],
                    "categories": {c.id: {"score": c.fraction} for c in crit},
                },
            )
            write_json_atomic(
                d / "sandbox.json",
                {
                    "total": rec.grades["sandbox_total"],
                    "checks": {"build": 10, "create": 30, "update": 30, "cancel": 30},
                    "evidence": ["GET /health 200", "POST /reservations 201"],
                },
            )
            write_json_atomic(
                d / "process.json", {"criteria": [], "evidence": {"skill_invoked": v == "skill"}}
            )
            (d / "app.stdout.log").write_text("listening on 127.0.0.1:3000\n", encoding="utf-8")
            (d / "app.stderr.log").write_text("", encoding="utf-8")
        records.append(rec)
    return job, records
